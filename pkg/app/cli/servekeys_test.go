package cli_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/softhsmtest"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/service/keys"
)

// TestServeRefusesUnusableKey: svc serve does not start when a configured
// key cannot sign, names the key and why, exits 4 (2 for a malformed key
// URI), and writes no key material; a PIN is never a flag. With the
// token's keys reachable (PIN in SVC_PKCS11_PIN) it serves and signs with
// them.
func TestServeRefusesUnusableKey(t *testing.T) {
	tk := softhsmtest.NewToken(t, "svc-serve")
	good := tk.URI("vpec")
	if _, err := keys.Generate(context.Background(), good, keys.Ed25519, keys.Options{}); err != nil {
		t.Fatal(err)
	}
	noPIN := "pkcs11:token=svc-serve;object=vpec?module-path=" + tk.Module
	wrongPIN := noPIN + "&pin-source=env:SVC_TEST_WRONG_PIN"
	t.Setenv("SVC_TEST_WRONG_PIN", "9999")
	missing := (&url.URL{Scheme: "file", Path: filepath.Join(t.TempDir(), "absent.pem")}).String()
	cases := []struct {
		name, flag, uri string
		code            int
		want            []string
	}{
		{"missing file", "--signing-key", missing, 4, []string{"VPEC signing key", missing}},
		{"wrong PIN", "--signing-key", wrongPIN, 4, []string{"VPEC signing key", "key unreachable", "never falls back"}},
		{"no PIN", "--profile-key", noPIN, 4, []string{"profile signing key", "no PIN"}},
		{"absent object", "--log-key", strings.Replace(good, "object=vpec", "object=nothing", 1), 4, []string{"log checkpoint key", "key not found"}},
		{"PIN in the URI", "--signing-key", noPIN + "&pin-value=1234", 2, []string{"pin-value"}},
		{"wrong algorithm for the TSA", "--tsa-key", good, 4, []string{"built-in TSA key"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			code, _, errOut := svcExec(t, "serve", "--data-dir", data, "--addr", "127.0.0.1:0", tc.flag, tc.uri)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, f := range []string{"signing-key.pem", "profile-key.pem", "log-key.pem", "tsa"} {
				if _, err := os.Stat(filepath.Join(data, f)); err == nil {
					t.Errorf("a refused start created %s", f)
				}
			}
		})
	}
	t.Run("reachable", func(t *testing.T) {
		t.Setenv("SVC_PKCS11_PIN", softhsmtest.PIN)
		data := filepath.Join(t.TempDir(), "data")
		url, stop := serveLogged(t, data, "--signing-key", noPIN)
		code, body := httpGet(t, url+"/.well-known/svc/trust-root.json")
		root, err := trustroot.Parse([]byte(body))
		if code != 200 || err != nil {
			t.Fatalf("trust root: %d %v\n%s", code, err, body)
		}
		if err := trustroot.CheckSelfSigned(root); err != nil {
			t.Errorf("served trust root not self-signed: %v", err)
		}
		if _, err := root.KeyFor(trustroot.PurposeVPEC, keyIDOfURI(t, good), time.Now()); err != nil {
			t.Errorf("served trust root lacks the token's VPEC key: %v", err)
		}
		out := stop()
		if !strings.Contains(out, "signing key "+keyIDOfURI(t, good)) {
			t.Fatalf("serve did not sign with the token's key:\n%s", out)
		}
	})
}

func keyIDOfURI(t *testing.T, uri string) string {
	t.Helper()
	s, err := keys.Open(context.Background(), uri, keys.Options{NoProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.KeyID()
}

// TestServeAfterRotation: a service rotated with svc keys rotate starts on
// the new key (the database's recorded identity is the old key, which the
// trust root lists), serves trust root version 3 (version 1 at the first
// start, 2 with the transparency log's key, 3 the rotation) and signs with the new
// key; a key the trust root does not list is refused (exit 4).
func TestServeAfterRotation(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	_, stop := serveLogged(t, data)
	stop()
	newKey := (&url.URL{Scheme: "file", Path: filepath.Join(dir, "vpec-2.pem")}).String()
	stray := (&url.URL{Scheme: "file", Path: filepath.Join(dir, "stray.pem")}).String()
	for _, k := range []string{newKey, stray} {
		if code, _, errOut := svcExec(t, "keys", "generate", "--uri", k); code != 0 {
			t.Fatalf("keys generate: %d %s", code, errOut)
		}
	}
	if code, _, errOut := svcExec(t, "serve", "--data-dir", data, "--addr", "127.0.0.1:0", "--signing-key", stray); code != 4 || !strings.Contains(errOut, "key material differs") {
		t.Fatalf("serve on a key the trust root lacks: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := svcExec(t, "keys", "rotate", "--data-dir", data, "--purpose", "vpec-signing", "--new-key", newKey); code != 0 || !strings.Contains(out, "version 3") {
		t.Fatalf("keys rotate: %d %s %s", code, out, errOut)
	}
	url, stop := serveLogged(t, data, "--signing-key", newKey)
	code, body := httpGet(t, url+"/.well-known/svc/trust-root.json")
	root, err := trustroot.Parse([]byte(body))
	if code != 200 || err != nil || root.Version != 3 {
		t.Fatalf("trust root after rotation: %d %v\n%s", code, err, body)
	}
	out := stop()
	if !strings.Contains(out, "signing key "+keyIDOfURI(t, newKey)) {
		t.Fatalf("serve did not sign with the rotated-in key:\n%s", out)
	}
	code, printed, _ := svcExec(t, "keys", "trust-root", "--data-dir", data)
	if code != 0 || printed != body {
		t.Fatalf("keys trust-root: %d, differs from the served root", code)
	}

	// The new key compromised from now: version 4 refuses what it signs
	// from then on, and keeps what the first key signed.
	at := time.Now().UTC().Truncate(time.Second)
	newID := keyIDOfURI(t, newKey)
	if code, out, errOut := svcExec(t, "keys", "compromise", newID, "--data-dir", data, "--at", at.Format(time.RFC3339)); code != 0 || !strings.Contains(out, "version 4") {
		t.Fatalf("keys compromise: %d %s %s", code, out, errOut)
	}
	_, printed, _ = svcExec(t, "keys", "trust-root", "--data-dir", data)
	r3, err := trustroot.Parse([]byte(printed))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trustroot.VerifyUpdate(root, r3); err != nil {
		t.Fatalf("version 4 does not chain from 3: %v", err)
	}
	if _, err := r3.KeyFor(trustroot.PurposeVPEC, newID, at); !errors.Is(err, trustroot.ErrCompromised) {
		t.Errorf("the compromised key at its compromise time: %v", err)
	}
	if code, _, errOut := svcExec(t, "keys", "compromise", "0000000000000000", "--data-dir", data, "--at", at.Format(time.RFC3339)); code != 2 {
		t.Errorf("compromise of an unknown key: exit %d %s", code, errOut)
	}

	// A PEM bundle converts to an unsigned version 1 root.
	code, bundle, _ := svcExec(t, "serve", "trust-bundle", "--data-dir", data, "--signing-key", newKey)
	bundleFile := filepath.Join(dir, "bundle.pem")
	if err := os.WriteFile(bundleFile, []byte(bundle), 0o644); code != 0 || err != nil {
		t.Fatalf("trust-bundle: %d %v", code, err)
	}
	code, conv, errOut := svcExec(t, "keys", "convert", "--bundle", bundleFile, "--from", "2026-01-01T00:00:00Z")
	r1, err := trustroot.Parse([]byte(conv))
	if code != 0 || err != nil || r1.Version != 1 || r1.Key(trustroot.PurposeVPEC, newID) == nil {
		t.Fatalf("keys convert: %d %v %s", code, err, errOut)
	}
}
