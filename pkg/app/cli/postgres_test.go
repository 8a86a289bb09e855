package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/loadgen"
	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestTwoServersOnePostgres runs two `svc serve` processes on one
// PostgreSQL database and one data directory (the shared signing key and
// TSA) and drives one run through both: records alternate between them,
// the close happens on the other, and a second close on the first is
// refused.
func TestTwoServersOnePostgres(t *testing.T) {
	dsn := pgtest.New(t, "svc_cli_").DSN
	data := t.TempDir()
	org := "two-" + names.NewID("")[:8]
	key := newOrgKey(t, org, "--database", dsn, "--data-dir", data)
	// Both append to one transparency log: Tessera's MySQL backend (the
	// POSIX backend takes one process).
	_, logDSN := tlogtest.MariaDB(t)
	urlA, _ := startServe(t, data, "--database", dsn, "--tlog-mysql", logDSN) // the first serve creates the key material
	urlB, _ := startServe(t, data, "--database", dsn, "--tlog-mysql", logDSN)
	trust, err := signing.ParseBundle([]byte(svcOut(t, "serve", "trust-bundle", "--data-dir", data)))
	if err != nil {
		t.Fatal(err)
	}

	hc := &http.Client{Timeout: 10 * time.Second}
	post := func(url, path string, body, out any) int {
		t.Helper()
		var b []byte // no body for nil: a close takes none
		if body != nil {
			b, _ = json.Marshal(body)
		}
		req, _ := http.NewRequest("POST", url+path, bytesReader(b))
		req.Header.Set("Authorization", "Bearer "+key.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	var run api.Run
	if code := post(urlA, "/api/v1/runs", api.OpenRunRequest{WorkflowID: "shared"}, &run); code != 201 {
		t.Fatalf("open on A: %d", code)
	}
	prev := vpec.Genesis(run.RunID)
	for seq := int64(1); seq <= 20; seq++ {
		recs := []vpec.Record{loadgen.Record(run.RunID, seq)}
		issue.Chain(prev, recs)
		prev, _ = commitment.ParseSHA256(recs[0].ChainHash)
		url := urlA
		if seq%2 == 0 {
			url = urlB
		}
		if code := post(url, "/api/v1/runs/"+run.RunID+"/records", recs[0], nil); code != 201 {
			t.Fatalf("record %d: %d", seq, code)
		}
	}
	doc, _, err := loadgen.Close(context.Background(), hc, urlB, key.APIKey, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := verify.Verify(doc, verify.Options{Trust: trust}); err != nil || !rep.Valid || !rep.IsClean || rep.Records != 20 {
		t.Fatalf("VPEC from B: %s, %d records", rep.Verdict, rep.Records)
	}
	// The VPEC B issued is in the one log, and A serves the same receipt.
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	receipt := func(url string) []byte {
		req, _ := http.NewRequest("GET", url+"/api/v1/vpecs/"+v.VPECID+"/receipt?wait=20s", nil)
		req.Header.Set("Authorization", "Bearer "+key.APIKey)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("receipt from %s: %d %s", url, resp.StatusCode, b)
		}
		return b
	}
	hc.Timeout = 30 * time.Second
	for _, url := range []string{urlB, urlA} {
		rep, err := verify.Verify(doc, verify.Options{Trust: trust, Receipt: receipt(url), RequireLog: true})
		if err != nil || !rep.Valid {
			t.Fatalf("VPEC from B with the receipt %s serves: %v %s", url, err, rep.Verdict)
		}
	}
	var eb api.ErrorBody
	if code := post(urlA, "/api/v1/runs/"+run.RunID+"/close", nil, &eb); code != 409 || eb.Error.Code != api.CodeRunSealed {
		t.Fatalf("second close on A: %d %+v", code, eb)
	}
}

// TestServersDisagreeOnKeysPostgres: servers on one PostgreSQL database
// with different data directories used to each create their own signing
// key and TSA, so a run opened on one and closed on another was INVALID
// (UNKNOWN SIGNING KEY) against the first one's trust bundle. The first
// server records the service identity; a server with other key material
// refuses to start naming both key ids, and one with none creates none.
func TestServersDisagreeOnKeysPostgres(t *testing.T) {
	dsn := pgtest.New(t, "svc_cli_").DSN
	dataA := t.TempDir()
	_, procA := startServe(t, dataA, "--database", dsn)
	keyA := strings.TrimSpace(svcOut(t, "serve", "trust-bundle", "--data-dir", dataA))
	bundleA, err := signing.ParseBundle([]byte(keyA))
	if err != nil {
		t.Fatal(err)
	}
	// The bundle lists the profile key too: A's identity is its VPEC key.
	idA := keyIDOfURI(t, (&url.URL{Scheme: "file", Path: filepath.Join(dataA, "signing-key.pem")}).String())
	if _, err := bundleA.Key(idA); err != nil {
		t.Fatalf("A's signing key %s is not in its trust bundle", idA)
	}

	// C: key material of its own (svc keygen + svc tsa init lay out a data
	// directory), the same database, while A is serving.
	dataC := t.TempDir()
	svcOut(t, "tsa", "init", "--dir", filepath.Join(dataC, "tsa"))
	svcOut(t, "keygen", "--dir", dataC)
	bundleC, err := signing.ParseBundle([]byte(svcOut(t, "serve", "trust-bundle", "--data-dir", dataC)))
	if err != nil {
		t.Fatal(err)
	}
	idC := bundleC.KeyIDs()[0]
	out, code := serveOnce(t, dataC, "--database", dsn)
	if code != 4 || !strings.Contains(out, "signs with key "+idA+", this server with key "+idC) ||
		!strings.Contains(out, "hint: every server on one database must hold the same key material: copy signing-key.pem and tsa/ from the data directory of a server with signing key "+idA) {
		t.Fatalf("server C with other keys: exit %d\n%s", code, out)
	}

	// D: no key material at all: refused, and no keys created.
	dataD := t.TempDir()
	out, code = serveOnce(t, dataD, "--database", dsn)
	if code != 4 || !strings.Contains(out, "the database belongs to the service with signing key "+idA) {
		t.Fatalf("server D without keys: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dataD, "signing-key.pem")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("server D created a signing key: %v", err)
	}

	// A restarted on its own material is the same service.
	procA.Process.Signal(os.Interrupt)
	procA.Wait()
	startServe(t, dataA, "--database", dsn)
}

// serveOnce runs svc serve until it exits (a refused start) and returns
// its output and exit code; a server that starts is killed and fails the
// test.
func serveOnce(t *testing.T, dataDir string, extra ...string) (string, int) {
	t.Helper()
	args := append([]string{"serve", "--data-dir", dataDir, "--addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command("svc", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode()
		}
		return out.String(), 0
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("svc serve did not exit (it should refuse to start):\n%s", out.String())
		return "", 0
	}
}

// TestServersStartAtOnceOnANewDataDirectory: three `svc serve` processes
// started at the same moment on one new data directory and one PostgreSQL
// database all serve, with one set of keys and one trust root: the first
// to hold setup.lock creates them, the others load them. (Before the
// lock, the later ones exited: "refusing to overwrite trust-root/1.json".)
func TestServersStartAtOnceOnANewDataDirectory(t *testing.T) {
	dsn := pgtest.New(t, "svc_cli_").DSN
	data := t.TempDir()
	const n = 3
	var addrFiles, logs [n]string
	var cmds [n]*exec.Cmd
	for i := range n {
		dir := t.TempDir()
		addrFiles[i], logs[i] = filepath.Join(dir, "addr"), filepath.Join(dir, "serve.log")
		logf, err := os.Create(logs[i])
		if err != nil {
			t.Fatal(err)
		}
		cmds[i] = exec.Command("svc", "serve", "--data-dir", data, "--database", dsn, "--addr", "127.0.0.1:0", "--addr-file", addrFiles[i], "--no-tlog")
		cmds[i].Stdout, cmds[i].Stderr = logf, logf
		t.Cleanup(func() { logf.Close() })
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	var urls [n]string
	for i := range n {
		for range 600 {
			if b, err := os.ReadFile(addrFiles[i]); err == nil && len(b) > 0 {
				urls[i] = "http://" + strings.TrimSpace(string(b))
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if urls[i] == "" {
			b, _ := os.ReadFile(logs[i])
			t.Fatalf("server %d did not start:\n%s", i, b)
		}
	}
	var roots [n]string
	for i, u := range urls {
		code, body := httpGet(t, u+"/.well-known/svc/trust-root.json")
		if code != 200 {
			t.Fatalf("server %d: trust root: %d %s", i, code, body)
		}
		roots[i] = body
		if code, bundle := httpGet(t, u+"/.well-known/svc/trust-bundle.pem"); code != 200 || bundle != svcOut(t, "serve", "trust-bundle", "--data-dir", data) {
			t.Fatalf("server %d serves another trust bundle (%d)", i, code)
		}
	}
	if roots[1] != roots[0] || roots[2] != roots[0] {
		t.Fatal("the servers serve different trust roots")
	}
	if hist, _ := filepath.Glob(filepath.Join(data, "trust-root", "*.json")); len(hist) != 1 {
		t.Fatalf("trust root versions: %v, want one", hist)
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
