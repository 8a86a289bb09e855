package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/softhsmtest"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/keys"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// tokenKeys makes the four keys of a service on a SoftHSM2 token and
// returns their URIs.
func tokenKeys(t testing.TB, tk *softhsmtest.Token) server.KeyConfig {
	t.Helper()
	kc := server.KeyConfig{VPEC: tk.URI("vpec"), Profile: tk.URI("profile"), TSA: tk.URI("tsa"), Log: tk.URI("log")}
	for uri, alg := range map[string]keys.Algorithm{kc.VPEC: keys.Ed25519, kc.Profile: keys.Ed25519, kc.TSA: keys.ECDSAP256, kc.Log: keys.Ed25519} {
		if _, err := keys.Generate(context.Background(), uri, alg, keys.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	return kc
}

// TestAllKeysInSoftHSM: a service whose VPEC, profile, TSA and log keys
// all live in a real SoftHSM2 token writes no key file, seals a VPEC that
// verifies offline with its trust bundle (signed by the token's Ed25519 key,
// timestamped by the built-in TSA with the token's P-256 key, which
// openssl ts -verify accepts), signs a profile and a circuit entry that
// verify, and a checkpoint note. Once the token's sessions are gone, a close
// fails with 503 signing_failed and no VPEC (never a file key), and a
// service reopened on the token completes it.
func TestAllKeysInSoftHSM(t *testing.T) {
	tk := softhsmtest.NewToken(t, "svc-e2e")
	kc := tokenKeys(t, tk)
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	mat, created, err := server.OpenMaterial(ctx, data, kc, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{server.SigningKeyFile, server.ProfileKeyFile, server.LogKeyPath, server.TSADir} {
		if _, err := os.Stat(filepath.Join(data, name)); err == nil {
			t.Errorf("%s was created although every key is on the token", name)
		}
	}
	if created.TSA == "" || created.SigningKey != "" || created.ProfileKey != "" || created.LogKey != "" {
		t.Errorf("created %+v; want only the TSA certificates", created)
	}
	if mat.Signer.KeyID() == mat.ProfileSigner.KeyID() {
		t.Fatal("the profile key is the VPEC key")
	}

	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := server.CreateOrg(ctx, st, "alpha", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	apiKey, _, err := server.CreateAPIKey(ctx, st, "alpha", vpec.Production, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The transparency log signs its checkpoints with the token's log key.
	tl, err := setup.OpenLog(ctx, data, mat.Signer.KeyID(), mat.LogSigner,
		setup.LogOptions{Origin: "svc.test/log", CheckpointInterval: logwriter.MinCheckpointInterval}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	logOpen := true
	t.Cleanup(func() {
		if logOpen {
			_ = tl.Close(context.Background())
		}
	})
	if _, err := os.Stat(filepath.Join(data, server.LogKeyPath)); err == nil {
		t.Errorf("%s was created although the log key is on the token", server.LogKeyPath)
	}
	mat.Trust.AddLogKey(tl.Material.Key)
	withLog := &server.TransparencyLog{Log: tl.Log, Secret: tl.Material.Secret, Store: st, ReceiptRetryAfter: logwriter.MinCheckpointInterval}
	start := func(m *server.Material) *env {
		srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: m.Signer, Timestamper: m.TSA, Trust: m.Trust, Log: withLog})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		return &env{t: t, st: st, url: hs.URL, mat: m}
	}
	e := start(mat)
	closeRun := func(e *env, n int) (string, int, []byte) {
		run := e.open(apiKey)
		for _, r := range chain(run.RunID, n) {
			if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", apiKey, r, nil); code != 201 {
				t.Fatalf("record: %d %s", code, body)
			}
		}
		code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", apiKey, nil, nil)
		return run.RunID, code, body
	}
	_, code, body := closeRun(e, 3)
	if code != 200 {
		t.Fatalf("close: %d %s", code, body)
	}
	var v vpec.VPEC
	if err := json.Unmarshal(body, &v); err != nil || v.SigningKeyID != mat.Signer.KeyID() {
		t.Fatalf("VPEC signed on the token: %v, key %s want %s", err, v.SigningKeyID, mat.Signer.KeyID())
	}
	// Its receipt: a checkpoint signed by the token's log key.
	code, receipt := e.do("GET", "/api/v1/vpecs/"+v.VPECID+"/receipt?wait=30s", apiKey, nil, nil)
	if code != 200 {
		t.Fatalf("receipt: %d %s", code, receipt)
	}
	rep, err := verify.Verify(body, verify.Options{Trust: mat.Trust, Receipt: receipt, RequireLog: true})
	if err != nil || rep.Verdict != "VALID" {
		t.Fatalf("VPEC and receipt signed on the token: %v %+v", err, rep)
	}
	if c := rep.Check(verify.CheckTransparency); c == nil || c.Status != verify.Pass {
		t.Fatalf("transparency check: %+v", c)
	}
	withLog, logOpen = nil, false
	if err := tl.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// The built-in TSA's token, signed by the P-256 key on the token,
	// verifies with openssl.
	if _, err := exec.LookPath("openssl"); err == nil {
		sum := sha256.Sum256([]byte("data"))
		tok, err := mat.TSA.Timestamp(ctx, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		tsaDir := filepath.Join(data, server.TSADir+"-"+keyIDOf(t, kc.TSA))
		tokFile := filepath.Join(dir, "token.der")
		if err := os.WriteFile(tokFile, tok, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("openssl", "ts", "-verify", "-digest", hex.EncodeToString(sum[:]), "-in", tokFile,
			"-CAfile", filepath.Join(tsaDir, "root.pem"), "-untrusted", filepath.Join(tsaDir, "tsa.pem")).CombinedOutput()
		if err != nil {
			t.Fatalf("openssl ts -verify: %v\n%s", err, out)
		}
	}

	// A profile and a circuit entry signed by the token's profile key.
	p := &profile.Profile{Schema: profile.Schema, ProfileID: "svc/hsm-class/v1.0.0", ModelClass: "hsm", Architecture: "bert",
		CalibratedGPUClasses: []string{"cpu"}, CalibrationPasses: 1000, CalibrationDate: "2026-11-22", SafetyMargin: 2,
		Operators: map[string]profile.Bounds{profile.Linear: {P99: 1e-7, P99_9: 2e-7, P9999: 3e-7}},
		Models:    []profile.Model{{ONNXModelHash: commitment.String([]byte("hsm model")), OperatorCounts: map[string]int64{"full": 100}}}}
	if _, err := server.Publish(ctx, st, mat.ProfileSigner, "test", p, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	sp, err := st.ProfileByID(ctx, p.ProfileID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := profile.Verify(sp.Body, mat.Trust); err != nil || got.SignedBy == "" {
		t.Fatalf("profile signed on the token: %v", err)
	}
	ck, err := zk.DevSetupCondition(conditions.Threshold)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := zk.NewEntry(ck, "", zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("t")), Contributors: []string{"operator"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := server.PublishCircuit(ctx, st, mat.ProfileSigner, "test", entry, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zk.VerifyEntry(doc, mat.Trust); err != nil {
		t.Fatalf("circuit entry signed on the token: %v", err)
	}

	// The token goes away (its sessions closed): the close fails visibly.
	if err := mat.Close(); err != nil {
		t.Fatal(err)
	}
	runID, code, body := closeRun(e, 2)
	var fail struct{ Error struct{ Code string } }
	if code != 503 || json.Unmarshal(body, &fail) != nil || fail.Error.Code != "signing_failed" {
		t.Fatalf("close with the token gone: %d %s; want 503 signing_failed", code, body)
	}
	var run struct {
		VPECID string `json:"vpec_id"`
	}
	if code, body := e.do("GET", "/api/v1/runs/"+runID, apiKey, nil, &run); code != 200 || run.VPECID != "" {
		t.Fatalf("run after the failed close: %d %s; want no VPEC", code, body)
	}
	// A service reopened on the token completes the close.
	mat2, _, err := server.OpenMaterial(ctx, data, kc, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mat2.Close() })
	e2 := start(mat2)
	code, body = e2.do("POST", "/api/v1/runs/"+runID+"/close", apiKey, nil, nil)
	if code != 200 {
		t.Fatalf("close again on the reopened token: %d %s", code, body)
	}
	if rep, err := verify.Verify(body, verify.Options{Trust: mat2.Trust}); err != nil || rep.Verdict != "VALID" {
		t.Fatalf("VPEC after the retry: %v", err)
	}
}

func keyIDOf(t *testing.T, uri string) string {
	t.Helper()
	s, err := keys.Open(context.Background(), uri, keys.Options{NoProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.KeyID()
}
