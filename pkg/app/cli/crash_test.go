package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/loadgen"
	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// startServe starts `svc serve` on a free loopback port and returns its
// base URL and the process.
func startServe(t *testing.T, dataDir string, extra ...string) (string, *exec.Cmd) {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	args := append([]string{"serve", "--data-dir", dataDir, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--log-format", "json"}, extra...)
	cmd := exec.Command("svc", args...)
	logf, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
	for i := 0; i < 200; i++ {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return "http://" + strings.TrimSpace(string(b)), cmd
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("svc serve did not start")
	return "", nil
}

func svcOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("svc", args...).Output()
	if err != nil {
		t.Fatalf("svc %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// apiKey is the JSON output of svc admin key create.
type apiKey struct {
	APIKey string `json:"api_key"`
}

// newOrgKey creates an organisation with the real binary and returns a
// production key for it; store flags (--data-dir, --database) follow.
func newOrgKey(t *testing.T, org string, storeFlags ...string) apiKey {
	t.Helper()
	svcOut(t, append([]string{"admin", "org", "create", org}, storeFlags...)...)
	var key apiKey
	out := svcOut(t, append([]string{"admin", "key", "create", "--org", org, "--live", "--output", "json"}, storeFlags...)...)
	if err := json.Unmarshal([]byte(out), &key); err != nil || key.APIKey == "" {
		t.Fatalf("key create: %q %v", out, err)
	}
	return key
}

// TestCrashKeepsAcknowledgedRecords kills the server with SIGKILL under a
// load of records, restarts it, and checks that every acknowledged record
// is in the run's VPEC and that the VPEC verifies.
func TestCrashKeepsAcknowledgedRecords(t *testing.T) {
	crashKeepsAcknowledged(t)
}

// TestCrashKeepsAcknowledgedRecordsPostgres is the crash test on
// PostgreSQL (its one-statement append included): SIGKILL of svc serve
// under load loses no acknowledged record.
func TestCrashKeepsAcknowledgedRecordsPostgres(t *testing.T) {
	crashKeepsAcknowledged(t, "--database", pgtest.New(t, "crash_").DSN)
}

// TestCrashKeepsAcknowledgedBatches is the crash test with the load sent
// in batches of 25 (POST records:batch), on SQLite and PostgreSQL: every
// record of every acknowledged batch survives SIGKILL.
func TestCrashKeepsAcknowledgedBatches(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { crashKeepsAcknowledgedBatch(t, 25) })
	t.Run("postgres", func(t *testing.T) {
		crashKeepsAcknowledgedBatch(t, 25, "--database", pgtest.New(t, "crashbatch_").DSN)
	})
}

func crashKeepsAcknowledged(t *testing.T, dbFlags ...string) {
	crashKeepsAcknowledgedBatch(t, 0, dbFlags...)
}

func crashKeepsAcknowledgedBatch(t *testing.T, batch int, dbFlags ...string) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	data := t.TempDir()
	key := newOrgKey(t, "crash", append([]string{"--data-dir", data}, dbFlags...)...)
	url, proc := startServe(t, data, dbFlags...) // the first serve creates the key material
	trust, err := signing.ParseBundle([]byte(svcOut(t, "serve", "trust-bundle", "--data-dir", data)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *loadgen.Result)
	go func() { done <- loadgen.Drive(ctx, loadgen.Config{URL: url, Key: key.APIKey, Runs: 8, Batch: batch}) }()
	time.Sleep(1500 * time.Millisecond)
	if err := proc.Process.Kill(); err != nil { // SIGKILL: no shutdown, no flush
		t.Fatal(err)
	}
	proc.Wait()
	cancel()
	res := <-done
	if res.Acked() < 50 {
		t.Fatalf("only %d records acknowledged before the kill (errors %d: %v)", res.Acked(), res.Errors, res.FirstErr)
	}
	t.Logf("%d records acknowledged in %d runs before SIGKILL", res.Acked(), len(res.Runs))

	url, _ = startServe(t, data, dbFlags...)
	for _, run := range res.Runs {
		doc, _, err := loadgen.Close(context.Background(), http.DefaultClient, url, key.APIKey, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		rep, _ := verify.Verify(doc, verify.Options{Trust: trust})
		if !rep.Valid || !rep.IsClean { // verify.Verify's error is nil exactly when rep.Valid
			t.Fatalf("run %s after restart: %s (clean %v)", run.ID, rep.Verdict, rep.IsClean)
		}
		var v vpec.VPEC
		json.Unmarshal(doc, &v)
		have := map[string]bool{}
		for _, r := range v.Records {
			have[r.RecordID] = true
		}
		for _, id := range run.Acked {
			if !have[id] {
				t.Fatalf("run %s: acknowledged record %s lost in the crash", run.ID, id)
			}
		}
	}
}

// TestGracefulShutdownFinishesInFlight sends SIGTERM while a close of a
// large run is in flight: the close must complete, and the run must be
// sealed with that VPEC after a restart.
func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	data := t.TempDir()
	key := newOrgKey(t, "graceful", "--data-dir", data)
	url, proc := startServe(t, data)
	res := loadgen.Drive(context.Background(), loadgen.Config{URL: url, Key: key.APIKey, Runs: 4, RecordsPerRun: 1000})
	if res.Acked() != 4000 {
		t.Fatalf("setup: %d records acknowledged: %v", res.Acked(), res.FirstErr)
	}
	type closed struct {
		doc []byte
		err error
	}
	results := make(chan closed, len(res.Runs))
	for _, run := range res.Runs {
		go func(id string) {
			doc, _, err := loadgen.Close(context.Background(), http.DefaultClient, url, key.APIKey, id)
			results <- closed{doc, err}
		}(run.ID)
	}
	time.Sleep(50 * time.Millisecond)
	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range res.Runs {
		c := <-results
		if c.err != nil {
			t.Fatalf("a close in flight at SIGTERM failed: %v", c.err)
		}
	}
	if err := proc.Wait(); err != nil {
		t.Fatalf("svc serve did not exit cleanly after SIGTERM: %v", err)
	}
	url, _ = startServe(t, data)
	for _, run := range res.Runs {
		_, _, err := loadgen.Close(context.Background(), http.DefaultClient, url, key.APIKey, run.ID)
		if err == nil || !strings.Contains(err.Error(), "409") {
			t.Fatalf("run %s should be sealed after the graceful stop: %v", run.ID, err)
		}
	}
}
