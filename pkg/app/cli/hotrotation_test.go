package cli_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestServeHotRotation: svc serve started with --next-signing-key keeps
// signing with its key until 'svc keys rotate --at T' is written and the
// server gets SIGHUP; from T on, without a restart, it signs with the next
// key, serves the new trust root, and both VPECs verify against it.
func TestServeHotRotation(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	key := newOrgKey(t, "hot", "--data-dir", data)
	next := (&url.URL{Scheme: "file", Path: filepath.Join(dir, "vpec-2.pem")}).String()
	if code, _, errOut := svcExec(t, "keys", "generate", "--uri", next); code != 0 {
		t.Fatalf("keys generate: %d %s", code, errOut)
	}
	addrFile := filepath.Join(dir, "addr")
	cmd := exec.Command("svc", "serve", "--data-dir", data, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--log-format", "json", "--next-signing-key", next)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var base string
	for range 400 {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			base = "http://" + strings.TrimSpace(string(b))
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if base == "" {
		t.Fatalf("svc serve did not start:\n%s", out.String())
	}
	var docs [][]byte
	sealed := func() vpec.VPEC {
		code, body := closeOneRecord(t, base, key.APIKey)
		var v vpec.VPEC
		if err := json.Unmarshal(body, &v); code != 200 || err != nil {
			t.Fatalf("close: %d %s", code, body)
		}
		docs = append(docs, body)
		return v
	}
	before := sealed()
	nextID := keyIDOfURI(t, next)
	if before.SigningKeyID == nextID {
		t.Fatal("the next key signed before its rotation")
	}
	at := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
	if code, out, errOut := svcExec(t, "keys", "rotate", "--data-dir", data, "--purpose", "vpec-signing", "--new-key", next, "--at", at.Format(time.RFC3339)); code != 0 {
		t.Fatalf("keys rotate: %d %s %s", code, out, errOut)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(out.String(), "trust root reloaded") {
		time.Sleep(25 * time.Millisecond)
	}
	time.Sleep(time.Until(at))
	after := sealed()
	if after.SigningKeyID != nextID {
		t.Fatalf("after T the VPEC is signed by %s, want the next key %s:\n%s", after.SigningKeyID, nextID, out.String())
	}
	code, body := httpGet(t, base+"/.well-known/svc/trust-root.json")
	root, err := trustroot.Parse([]byte(body))
	if code != 200 || err != nil {
		t.Fatalf("served trust root: %d %v", code, err)
	}
	if _, err := root.KeyFor(trustroot.PurposeVPEC, nextID, at); err != nil {
		t.Fatalf("the served root does not hold the rotation: %v", err)
	}
	for _, doc := range docs {
		if rep, err := verify.Verify(doc, verify.Options{Root: root}); err != nil {
			t.Errorf("VPEC against the served root: %s: %v", rep.Verdict, err)
		}
	}
}
