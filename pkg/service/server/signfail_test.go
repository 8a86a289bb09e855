package server_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

var errTokenGone = errors.New("token removed")

// flakyKey is a crypto.Signer over an Ed25519 key that fails while down
// is set, as an HSM does when its token is pulled out.
type flakyKey struct {
	priv ed25519.PrivateKey
	down atomic.Bool
}

func (k *flakyKey) Public() crypto.PublicKey { return k.priv.Public() }

func (k *flakyKey) Sign(r io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if k.down.Load() {
		return nil, errTokenGone
	}
	return k.priv.Sign(r, msg, opts)
}

// TestSigningFailureFailsTheClose: a service key that cannot sign fails
// the close visibly (503 signing_failed, no VPEC, nothing signed by another
// key) and closing again once the key answers completes the run with a
// VPEC signed by that key.
func TestSigningFailureFailsTheClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := &flakyKey{priv: priv}
	signer, err := signing.NewCryptoSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	trust := signing.NewBundle()
	trust.AddKey(signer.PublicKey())
	trust.AddRoot(mat.TSA.Root())
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: signer, Timestamper: mat.TSA, Trust: trust})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	if _, err := server.CreateOrg(ctx, st, "alpha", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	apiKey, _, err := server.CreateAPIKey(ctx, st, "alpha", vpec.Production, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, url: hs.URL, mat: mat}
	run := e.open(apiKey)
	for _, r := range chain(run.RunID, 3) {
		if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", apiKey, r, nil); code != 201 {
			t.Fatalf("record: %d %s", code, body)
		}
	}
	key.down.Store(true)
	var fail struct{ Error api.Error }
	code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", apiKey, nil, &fail)
	if code != 503 || fail.Error.Code != api.CodeSigningFailed {
		t.Fatalf("close with the key down: %d %s; want 503 %s", code, body, api.CodeSigningFailed)
	}
	if r, err := st.Run(ctx, run.OrgID, run.RunID); err != nil || r.VPECID != "" {
		t.Fatalf("after the failed close: %+v, %v; want no VPEC", r, err)
	}
	key.down.Store(false)
	code, body = e.do("POST", "/api/v1/runs/"+run.RunID+"/close", apiKey, nil, nil)
	if code != 200 {
		t.Fatalf("close once the key answers: %d %s", code, body)
	}
	var v vpec.VPEC
	rep, err := verify.Verify(body, verify.Options{Trust: trust})
	if err != nil || rep.Verdict != "VALID" || json.Unmarshal(body, &v) != nil || v.SigningKeyID != signer.KeyID() {
		t.Fatalf("VPEC after retry: %v %v, key %s want %s", rep.Verdict, err, v.SigningKeyID, signer.KeyID())
	}
}
