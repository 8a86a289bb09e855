package setup_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/witnesstest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWitnessedReceipts: the service's log, opened by OpenLog with a
// witness policy naming a real omniwitness on loopback, hands out receipts
// whose checkpoints carry the witness's cosignature (they verify against
// the policy); with the witness down, a new VPEC's receipt is marked
// unwitnessed with the reason, the failure is logged and reaches the
// OnWitness hook, and the close itself was not held up.
func TestWitnessedReceipts(t *testing.T) {
	witnesstest.Binary(t)
	ctx := context.Background()
	data := t.TempDir()
	m, _, err := server.LoadOrCreateLogMaterial(data, "svc.test/log", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	w := witnesstest.Start(t, "w1.test/witness", witnesstest.Log{Origin: m.Key.Origin(), VKey: m.Key.String()})
	policyText := w.PolicyLine("w1") + "quorum w1\n"
	policyFile := filepath.Join(t.TempDir(), "policy")
	if err := os.WriteFile(policyFile, []byte(policyText), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	var mu sync.Mutex
	var failures []error
	l, err := setup.OpenLog(ctx, data, "kid", nil, setup.LogOptions{Origin: "svc.test/log", WitnessPolicyFile: policyFile,
		CheckpointInterval: logwriter.MinCheckpointInterval, WitnessTimeout: 2 * time.Second,
		OnWitness: func(e logwriter.WitnessEvent) {
			if e.Err != nil {
				mu.Lock()
				failures = append(failures, e.Err)
				mu.Unlock()
			}
		}}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(ctx) })

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust,
		Log: &server.TransparencyLog{Log: l.Log, Secret: l.Material.Secret, Store: st}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	if _, err := server.CreateOrg(ctx, st, "acme", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	key, _, err := server.CreateAPIKey(ctx, st, "acme", vpec.Production, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path string, body []byte) (int, []byte, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, data, resp.Header
	}
	policy, err := tlog.ParseWitnessPolicy([]byte(policyText))
	if err != nil {
		t.Fatal(err)
	}
	v, err := tlog.NewVerifier(m.Key, policy)
	if err != nil {
		t.Fatal(err)
	}
	closeAndReceipt := func() (tlog.Subject, []byte, http.Header) {
		t.Helper()
		code, body, _ := call("POST", "/api/v1/runs", []byte(`{"workflow_id":"claims"}`))
		var run api.Run
		if code != 201 || json.Unmarshal(body, &run) != nil {
			t.Fatalf("open: %d %s", code, body)
		}
		code, doc, _ := call("POST", "/api/v1/runs/"+run.RunID+"/close", nil)
		if code != 200 {
			t.Fatalf("close: %d %s", code, doc)
		}
		d, err := vpec.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		sub := tlog.Subject{VPECID: d.VPEC.VPECID, Digest: tlog.DigestParts(d.SignedParts)}
		code, receipt, hdr := call("GET", "/api/v1/vpecs/"+sub.VPECID+"/receipt?wait=60s", nil)
		if code != 200 {
			t.Fatalf("receipt: %d %s", code, receipt)
		}
		return sub, receipt, hdr
	}

	sub, receipt, hdr := closeAndReceipt()
	if hdr.Get(api.HeaderReceiptWitnessed) != "true" {
		t.Fatalf("receipt with the witness up: %s %q (%s)", api.HeaderReceiptWitnessed, hdr.Get(api.HeaderReceiptWitnessed), hdr.Get(api.HeaderReceiptUnwitnessed))
	}
	got, err := v.VerifyReceipt(receipt, sub)
	if err != nil || len(got.Checkpoint.Cosignatures) != 1 {
		t.Fatalf("witnessed receipt: %v", err)
	}

	w.Stop()
	sub, receipt, hdr = closeAndReceipt()
	if hdr.Get(api.HeaderReceiptWitnessed) != "false" || hdr.Get(api.HeaderReceiptUnwitnessed) == "" {
		t.Fatalf("receipt with the witness down: %s %q, reason %q", api.HeaderReceiptWitnessed, hdr.Get(api.HeaderReceiptWitnessed), hdr.Get(api.HeaderReceiptUnwitnessed))
	}
	if _, err := v.VerifyReceipt(receipt, sub); err == nil {
		t.Error("an unwitnessed receipt verified against the witness policy")
	}
	mu.Lock()
	n := len(failures)
	mu.Unlock()
	if n == 0 || !strings.Contains(logs.String(), "did not cosign") {
		t.Errorf("witness down: %d failures reported to OnWitness, log:\n%s", n, logs.String())
	}
}
