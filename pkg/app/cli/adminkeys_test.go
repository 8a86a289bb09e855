package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/app/cli"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// svcRun runs svc in process and returns its exit code, stdout and stderr.
func svcRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code := cli.Main(args, s)
	return code, out.String(), errb.String()
}

type listedKey struct {
	KeyID       string `json:"key_id"`
	OrgID       string `json:"org_id"`
	Environment string `json:"environment"`
	CreatedAt   string `json:"created_at"`
	Revoked     bool   `json:"revoked"`
	RevokedAt   string `json:"revoked_at"`
}

// svc admin key list and revoke on a data directory a running server
// shares: the revoked key is refused by the server within a bounded number
// of polls; list never prints a secret; the data directory svc creates is
// 0700 and its database 0600.
func TestAdminKeyListRevoke(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	d := []string{"--data-dir", dir}
	if code, _, errs := svcRun(t, append([]string{"admin", "org", "create", "acme"}, d...)...); code != 0 {
		t.Fatalf("org create: %d %s", code, errs)
	}
	for name, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "svc.db"): 0o600} {
		if st, err := os.Stat(name); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, st.Mode().Perm(), err, want)
		}
	}
	var secrets []string
	for _, env := range []string{"--live", "--sandbox"} {
		code, out, errs := svcRun(t, append([]string{"admin", "key", "create", "--org", "acme", env}, d...)...)
		if code != 0 {
			t.Fatalf("key create: %d %s", code, errs)
		}
		secrets = append(secrets, strings.TrimSpace(out))
	}
	list := func(args ...string) []listedKey {
		t.Helper()
		code, out, errs := svcRun(t, append(append([]string{"admin", "key", "list", "--output", "json"}, args...), d...)...)
		if code != 0 {
			t.Fatalf("key list: %d %s", code, errs)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Fatalf("key list printed a secret: %s", out)
			}
		}
		var ks []listedKey
		if err := json.Unmarshal([]byte(out), &ks); err != nil {
			t.Fatalf("key list JSON: %v: %s", err, out)
		}
		return ks
	}
	ks := list("--org", "acme")
	if len(ks) != 2 || ks[0].Environment != "production" || ks[1].Environment != "sandbox" || ks[0].OrgID != "org_acme" || ks[0].Revoked || ks[0].CreatedAt == "" {
		t.Fatalf("key list: %+v", ks)
	}
	if ks[0].KeyID != server.KeyID(secrets[0]) {
		t.Fatalf("key id %s, want %s", ks[0].KeyID, server.KeyID(secrets[0]))
	}
	if code, _, errs := svcRun(t, append([]string{"admin", "key", "list", "--org", "nobody"}, d...)...); code != cli.ExitUsage || !strings.Contains(errs, "nobody") {
		t.Fatalf("list of an unknown org: %d %s", code, errs)
	}
	code, out, _ := svcRun(t, append([]string{"admin", "key", "list"}, d...)...)
	if code != 0 || !strings.Contains(out, "KEY ID") || !strings.Contains(out, ks[1].KeyID) {
		t.Fatalf("text list: %d %s", code, out)
	}

	// A server on the same database file, which has seen the live key.
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mat, err := server.LoadMaterial(filepath.Join(t.TempDir(), "server"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Storage: server.StorageOf(db), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	get := func(key string) (int, string) {
		req, _ := http.NewRequest("GET", hs.URL+"/api/v1/registry/profiles", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	if code, body := get(secrets[0]); code != 200 {
		t.Fatalf("live key before revocation: %d %s", code, body)
	}

	for _, bad := range []struct{ arg, hint string }{
		{secrets[0], "not the secret key"},
		{"pk_live_000000000000", "svc admin key list"},
		{"acme", "12 hex digits"},
	} {
		if code, _, errs := svcRun(t, append([]string{"admin", "key", "revoke", bad.arg}, d...)...); code != cli.ExitUsage || !strings.Contains(errs, bad.hint) || strings.Contains(errs, secrets[0][10:]) {
			t.Errorf("revoke %q: exit %d %s; want exit 2 with %q and no secret", bad.arg, code, errs, bad.hint)
		}
	}
	code, out, errs := svcRun(t, append([]string{"admin", "key", "revoke", ks[0].KeyID}, d...)...)
	if code != 0 || !strings.Contains(out, ks[0].KeyID+" (org_acme, production) revoked at") {
		t.Fatalf("revoke: %d %s %s", code, out, errs)
	}
	polls := 0
	for ; polls < 150; polls++ {
		code, body := get(secrets[0])
		if code == 401 {
			if !strings.Contains(body, "revoked") {
				t.Fatalf("revoked key refused without saying so: %s", body)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if polls == 150 {
		t.Fatal("the server still accepts the revoked key after 150 polls 10 ms apart")
	}
	if code, body := get(secrets[1]); code != 200 {
		t.Fatalf("the other key after revocation: %d %s", code, body)
	}
	ks2 := list()
	if len(ks2) != 2 || !ks2[0].Revoked || ks2[0].RevokedAt == "" || ks2[1].Revoked {
		t.Fatalf("list after revocation: %+v", ks2)
	}
	// Revoking again succeeds and keeps the first time.
	code, out, _ = svcRun(t, append([]string{"admin", "key", "revoke", ks[0].KeyID, "--output", "json"}, d...)...)
	var again listedKey
	if code != 0 || json.Unmarshal([]byte(out), &again) != nil || again.RevokedAt != ks2[0].RevokedAt {
		t.Fatalf("revoke again: %d %s; want revoked_at %s", code, out, ks2[0].RevokedAt)
	}
}
