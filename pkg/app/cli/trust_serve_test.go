package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// serveLogged starts `svc serve` like startServe and returns its base URL
// and a function that stops it and returns what it wrote on stdout and
// stderr.
func serveLogged(t *testing.T, dataDir string, extra ...string) (string, func() string) {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	args := append([]string{"serve", "--data-dir", dataDir, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--log-format", "json"}, extra...)
	cmd := exec.Command("svc", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() string {
		if !stopped {
			stopped = true
			cmd.Process.Kill()
			cmd.Wait()
		}
		return out.String()
	}
	t.Cleanup(func() { stop() })
	for range 400 {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return "http://" + strings.TrimSpace(string(b)), stop
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("svc serve did not start: %s", stop())
	return "", nil
}

// svcExec runs the svc binary and returns its exit code, stdout and stderr.
func svcExec(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command("svc", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// Commands that read keys never create them; only the first serve does,
// and says so (issue 10: `svc serve trust-bundle --data-dir <typo>`
// silently created a new signing key and TSA).
func TestServeTrustExplicit(t *testing.T) {
	root := t.TempDir()
	typo := filepath.Join(root, "dta")
	code, out, errOut := svcExec(t, "serve", "trust-bundle", "--data-dir", typo)
	if code != 2 || out != "" || !strings.Contains(errOut, "no service key material") {
		t.Fatalf("trust-bundle of a typo: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	if _, err := os.Stat(typo); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("trust-bundle created %s: %v", typo, err)
	}

	data := filepath.Join(root, "data")
	url, stop := serveLogged(t, data)
	if code, body := httpGet(t, url+"/healthz"); code != 200 {
		t.Fatalf("healthz %d %s", code, body)
	}
	first := stop()
	if !strings.Contains(first, "first start in "+data+": created the service signing key") {
		t.Fatalf("the first serve did not say it created key material:\n%s", first)
	}
	code, bundle, errOut := svcExec(t, "serve", "trust-bundle", "--data-dir", data)
	if code != 0 || !strings.Contains(bundle, "BEGIN PUBLIC KEY") || !strings.Contains(bundle, "BEGIN CERTIFICATE") {
		t.Fatalf("trust-bundle after the first serve: %d %s %s", code, bundle, errOut)
	}
	_, stop = serveLogged(t, data)
	if again := stop(); strings.Contains(again, "created") {
		t.Fatalf("a second serve announced new key material:\n%s", again)
	}
	code, bundle2, _ := svcExec(t, "serve", "trust-bundle", "--data-dir", data)
	if code != 0 || bundle2 != bundle {
		t.Fatal("the trust bundle changed across restarts")
	}

	// A key without its TSA is never completed.
	if err := os.RemoveAll(filepath.Join(data, "tsa")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := svcExec(t, "serve", "--data-dir", data, "--addr", "127.0.0.1:0"); code == 0 || !strings.Contains(errOut, "incomplete service key material") {
		t.Fatalf("serve with a key and no TSA: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "tsa")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("serve created a TSA beside an existing key")
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// closeOneRecord opens a run, records one check and closes it, returning
// the close status and body.
func closeOneRecord(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	post := func(path string, body any) (int, []byte) {
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		}
		req, _ := http.NewRequest("POST", url+path, r)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, body := post("/api/v1/runs", map[string]any{"workflow_id": "tsa"})
	var run struct {
		RunID string `json:"run_id"`
	}
	if json.Unmarshal(body, &run); code != 201 || run.RunID == "" {
		t.Fatalf("open: %d %s", code, body)
	}
	recs := []vpec.Record{{
		RecordID: names.NewID("rec_"), Sequence: 1, Check: "pii", ManifestID: "m", CheckResult: vpec.ResultPass,
		ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256", CommitmentHash: commitment.String([]byte("input")),
		Visibility: vpec.Opaque, RecordedAt: vpec.FormatTime(time.Now()),
	}}
	if _, err := issue.Chain(vpec.Genesis(run.RunID), recs); err != nil {
		t.Fatal(err)
	}
	if code, body := post("/api/v1/runs/"+run.RunID+"/records", recs[0]); code != 201 {
		t.Fatalf("record: %d %s", code, body)
	}
	return post("/api/v1/runs/"+run.RunID+"/close", nil)
}

// A failing external TSA (--tsa-url) fails the seal unless
// --tsa-fallback-builtin is given; then the built-in TSA answers, a warning
// is logged for each fallback, and the verification report names the
// built-in TSA (issue 10: the fallback was silent and unasked for).
func TestServeTSAFallbackExplicit(t *testing.T) {
	var calls atomic.Int64
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "TSA down", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	data := t.TempDir()
	key := newOrgKey(t, "tsa", "--data-dir", data)

	url, stop := serveLogged(t, data, "--tsa-url", failing.URL)
	code, body := closeOneRecord(t, url, key.APIKey)
	var eb struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(body, &eb)
	if code != http.StatusBadGateway || eb.Error.Code != "timestamp_failed" || calls.Load() == 0 {
		t.Fatalf("close with a failing TSA and no fallback: %d %s (TSA called %d times)", code, body, calls.Load())
	}
	if log := stop(); strings.Contains(log, "timestamped with the built-in TSA") {
		t.Fatalf("fallback without --tsa-fallback-builtin:\n%s", log)
	}

	if code, _, errOut := svcExec(t, "serve", "--data-dir", data, "--tsa-fallback-builtin"); code != 2 || !strings.Contains(errOut, "--tsa-fallback-builtin needs --tsa-url") {
		t.Fatalf("--tsa-fallback-builtin alone: %d %s", code, errOut)
	}

	url, stop = serveLogged(t, data, "--tsa-url", failing.URL, "--tsa-fallback-builtin")
	before := calls.Load()
	code, doc := closeOneRecord(t, url, key.APIKey)
	if code != 200 || calls.Load() == before {
		t.Fatalf("close with fallback: %d %s (external TSA called %d times)", code, doc, calls.Load()-before)
	}
	log := stop()
	warnings := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "timestamped with the built-in TSA") {
			warnings++
		}
	}
	if warnings != 1 {
		t.Fatalf("%d fallback warnings for one seal, want 1:\n%s", warnings, log)
	}
	_, bundle, _ := svcExec(t, "serve", "trust-bundle", "--data-dir", data)
	trust, err := signing.ParseBundle([]byte(bundle))
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := verify.Verify(doc, verify.Options{Trust: trust})
	ts := rep.Check(verify.CheckTimestamp)
	if !rep.Valid || ts == nil || !strings.Contains(ts.Message, "svc built-in TSA") {
		t.Fatalf("VPEC sealed by the fallback: %s, timestamp check %+v", rep.Verdict, ts)
	}
	t.Logf("timestamp check of the fallback VPEC: %s", ts.Message)
}

// keygen and tsa init, the other two commands that create trust material,
// say so on stderr, also when stdout is JSON.
func TestKeygenAndTSAInitSaySo(t *testing.T) {
	dir := t.TempDir()
	tsaDir, keyDir := filepath.Join(dir, "tsa"), filepath.Join(dir, "keys")
	code, _, errOut := svcExec(t, "tsa", "init", "--dir", tsaDir, "--output", "json")
	if code != 0 || !strings.Contains(errOut, "created a new timestamp authority in "+tsaDir) {
		t.Fatalf("tsa init: %d %s", code, errOut)
	}
	code, out, errOut := svcExec(t, "keygen", "--dir", keyDir, "--tsa-dir", tsaDir, "--output", "json")
	if code != 0 || !strings.Contains(errOut, "created a new signing key") || !json.Valid([]byte(out)) {
		t.Fatalf("keygen: %d %s %s", code, out, errOut)
	}
}
