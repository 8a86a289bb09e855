package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/keys"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// hotEnv is a data directory with a VPEC key and two next keys
// configured (--next-signing-key twice), its trust root version 1, and an
// organisation's production API key.
type hotEnv struct {
	data   string
	st     *sqlite.DB
	apiKey string
	mat    *server.Material
	next   []string // the next keys' URIs
	first  *trustroot.Root
}

func newHotEnv(t *testing.T) *hotEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	h := &hotEnv{data: filepath.Join(dir, "data")}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.st = st
	if _, err := server.CreateOrg(ctx, st, "alpha", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	if h.apiKey, _, err = server.CreateAPIKey(ctx, st, "alpha", vpec.Production, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vpec-2.pem", "vpec-3.pem"} {
		uri, _ := keys.FileURI(filepath.Join(dir, name))
		if _, err := keys.Generate(ctx, uri, keys.Ed25519, keys.Options{}); err != nil {
			t.Fatal(err)
		}
		h.next = append(h.next, uri)
	}
	if h.mat, _, err = server.OpenMaterial(ctx, h.data, server.KeyConfig{NextVPEC: h.next}, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.mat.Close() })
	if h.first, _, _, err = server.EnsureTrustRoot(ctx, h.data, h.mat, "", keys.Options{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	return h
}

// start serves with the material's key ring under root; now is the
// server's clock (nil: time.Now).
func (h *hotEnv) start(t *testing.T, ring *server.KeyRing, now func() time.Time) (*env, *server.Server) {
	t.Helper()
	_, doc, err := server.ReadTrustRoot(h.data)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Storage: server.StorageOf(h.st), Signer: h.mat.Signer, Keys: ring, Timestamper: h.mat.TSA, Trust: h.mat.Trust, TrustRoot: doc, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &env{t: t, st: h.st, url: hs.URL, mat: h.mat}, srv
}

// closeOne opens, fills and closes a run; it returns the close's status
// and body.
func (e *env) closeOne(apiKey string) (int, []byte) {
	run := e.open(apiKey)
	for _, r := range chain(run.RunID, 2) {
		if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", apiKey, r, nil); code != 201 {
			return code, body
		}
	}
	return e.do("POST", "/api/v1/runs/"+run.RunID+"/close", apiKey, nil, nil)
}

// TestHotRotationUnderLoad rotates the VPEC key twice while one running
// server, configured ahead with both next keys, keeps closing runs from
// four clients: each rotation writes the next trust root (RotateKey, T a
// whole second one to two seconds ahead) and the server reloads it (ReloadTrustRoot, what
// SIGHUP does in svc serve); nothing is restarted, and the server then
// serves the last version. No close fails, three keys
// sign, and every VPEC is VALID against the final root at its genTime
// (verify.Verify with Options.Root checks the key's window there), so no
// VPEC sealed across an instant T carries the old key.
func TestHotRotationUnderLoad(t *testing.T) {
	ctx := context.Background()
	h := newHotEnv(t)
	e, srv := h.start(t, h.mat.Keys(h.first), nil)

	var (
		mu    sync.Mutex
		vpecs [][]byte
		fails []string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, body := e.closeOne(h.apiKey)
				mu.Lock()
				if code != 200 {
					fails = append(fails, string(body))
				} else {
					vpecs = append(vpecs, body)
				}
				mu.Unlock()
			}
		}()
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(vpecs) + len(fails)
	}
	waitFor := func(n int) {
		for count() < n {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(8)
	for _, uri := range h.next {
		// T one to two seconds ahead: the reload must come before T
		// (KEYS.md: "the deployment must have switched by then"); the
		// next whole second can be a millisecond away, and a loaded
		// machine reloads after it.
		at := time.Now().Add(2 * time.Second).Truncate(time.Second)
		if _, err := server.RotateKey(ctx, h.data, server.Rotation{Purpose: trustroot.PurposeVPEC, NewKey: uri, At: at}, "", keys.Options{}, time.Now()); err != nil {
			t.Fatal(err)
		}
		// What svc serve does on SIGHUP.
		if _, changed, err := srv.ReloadTrustRoot(h.data); err != nil || !changed {
			t.Fatalf("reload: changed %v, %v", changed, err)
		}
		// The clients keep closing across T, and a while after.
		time.Sleep(time.Until(at))
		waitFor(count() + 8)
	}
	close(stop)
	wg.Wait()
	if len(fails) > 0 {
		t.Fatalf("%d of %d closes failed across the rotations, first: %s", len(fails), len(fails)+len(vpecs), fails[0])
	}
	final, _, err := server.ReadTrustRoot(h.data)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := e.do("GET", "/.well-known/svc/trust-root.json", "", nil, nil); code != 200 {
		t.Fatalf("trust root: %d", code)
	} else if served, err := trustroot.Parse(body); err != nil || served.Version != final.Version {
		t.Fatalf("the server serves a trust root %v (%v), want the reloaded version %d", served, err, final.Version)
	}
	used := map[string]int{}
	for _, doc := range vpecs {
		rep, err := verify.Verify(doc, verify.Options{Root: final})
		if err != nil || rep.Verdict != "VALID" {
			var v vpec.VPEC
			json.Unmarshal(doc, &v)
			t.Fatalf("VPEC %s of key %s is %s against the final root: %v", v.VPECID, v.SigningKeyID, rep.Verdict, err)
		}
		var v vpec.VPEC
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		used[v.SigningKeyID]++
	}
	if len(used) != 3 {
		t.Fatalf("VPECs signed by %d keys (%v), want 3: the server did not switch at each T", len(used), used)
	}
	t.Logf("%d VPECs, 0 failed closes, by key: %v", len(vpecs), used)
}

// TestCloseSignedAgainAfterRotationInstant: a close that selects the old
// key before T (the server's clock is behind) but whose timestamp's
// genTime is at or after T is signed again with the new key and
// timestamped again: the VPEC returned is the new key's and VALID against
// the root. Without a key valid at genTime, the close fails with 503
// signing_failed rather than return a VPEC that verifies as expired.
func TestCloseSignedAgainAfterRotationInstant(t *testing.T) {
	ctx := context.Background()
	h := newHotEnv(t)
	at := time.Now().Truncate(time.Second)
	root, err := server.RotateKey(ctx, h.data, server.Rotation{Purpose: trustroot.PurposeVPEC, NewKey: h.next[0], At: at}, "", keys.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	behind := func() time.Time { return at.Add(-10 * time.Second) }
	cases := []struct {
		name   string
		ring   *server.KeyRing
		code   int
		wantID string
	}{
		{"next key configured", h.mat.Keys(root), 200, h.mat.NextSigners[0].KeyID()},
		{"no next key", mustRing(t, root, h.mat), 503, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := h.start(t, tc.ring, behind)
			code, body := e.closeOne(h.apiKey)
			if code != tc.code {
				t.Fatalf("close: %d %s, want %d", code, body, tc.code)
			}
			if code != 200 {
				var ae struct {
					Error struct{ Code string } `json:"error"`
				}
				if json.Unmarshal(body, &ae); ae.Error.Code != "signing_failed" {
					t.Fatalf("close: %s, want signing_failed", body)
				}
				return
			}
			var v vpec.VPEC
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			if v.SigningKeyID != tc.wantID {
				t.Errorf("VPEC signed by %s, want the new key %s", v.SigningKeyID, tc.wantID)
			}
			if rep, err := verify.Verify(body, verify.Options{Root: root}); err != nil {
				t.Errorf("VPEC %s against the rotated root: %v", rep.Verdict, err)
			}
		})
	}
}

// mustRing is the ring of the material's current key alone.
func mustRing(t *testing.T, root *trustroot.Root, m *server.Material) *server.KeyRing {
	t.Helper()
	r, err := server.NewKeyRing(root, m.Signer)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReloadTrustRootRefusesUnchained: a trust-root.json whose newer
// version is not signed by the root keys of the version in use is not
// taken (ErrRootReload, the trustroot refusal inside); the server keeps
// signing and serving the version it had.
func TestReloadTrustRootRefusesUnchained(t *testing.T) {
	h := newHotEnv(t)
	_, rogue, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := trustroot.Build(time.Now(), 1,
		trustroot.NewKey{Purpose: trustroot.PurposeVPEC, PublicKey: h.mat.NextSigners[0].PublicKey(), From: time.Now().Add(-time.Hour)},
		trustroot.NewKey{Purpose: trustroot.PurposeRoot, PublicKey: rogue.Public().(ed25519.PublicKey), From: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if forged, err = forged.Next(time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := forged.Sign(rogue); err != nil {
		t.Fatal(err)
	}
	doc, err := forged.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.data, server.TrustRootFile), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	ring := h.mat.Keys(h.first)
	e, srv := h.start(t, ring, nil)
	r, changed, err := srv.ReloadTrustRoot(h.data)
	if !errors.Is(err, server.ErrRootReload) || !errors.Is(err, trustroot.ErrNotSignedByPrevious) || changed || r.Version != h.first.Version {
		t.Fatalf("reload of an unchained root: version %d changed %v, %v; want ErrRootReload (not-signed-by-previous)", r.Version, changed, err)
	}
	if ring.Root() != h.first {
		t.Fatal("the ring took the refused root")
	}
	code, body := e.closeOne(h.apiKey)
	var v vpec.VPEC
	if code != 200 || json.Unmarshal(body, &v) != nil || v.SigningKeyID != h.mat.Signer.KeyID() {
		t.Fatalf("close after a refused reload: %d, key %s, want %s", code, v.SigningKeyID, h.mat.Signer.KeyID())
	}
}
