package server_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// logEnv is an env whose server appends to a real Tessera log.
type logEnv struct {
	*env
	log      *logwriter.Log
	verifier *tlog.Verifier
	secret   []byte
	srv      *server.Server
}

// startLogServer starts a server on st with a log in dir (nil log: none).
func startLogServer(t *testing.T, st store.Store, mat *server.Material, l *logwriter.Log, secret []byte) (*server.Server, string) {
	t.Helper()
	cfg := server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust, MaxBodyBytes: 64 << 10}
	if l != nil {
		cfg.Log = &server.TransparencyLog{Log: l, Secret: secret, Store: st, ReceiptRetryAfter: 100 * time.Millisecond}
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs.URL
}

func openTestLog(t *testing.T, dir string) (*logwriter.Log, *tlog.Verifier) {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(nil)
	l, err := logwriter.Open(context.Background(), logwriter.Config{Dir: dir, Origin: "svc.test/log", Signer: priv, CheckpointInterval: logwriter.MinCheckpointInterval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	none, err := tlog.ParseWitnessPolicy([]byte("quorum none\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := tlog.NewVerifier(l.Key(), none)
	if err != nil {
		t.Fatal(err)
	}
	return l, v
}

// newLogEnv is newEnv with a transparency log.
func newLogEnv(t *testing.T) *logEnv {
	t.Helper()
	e := newEnv(t)
	l, v := openTestLog(t, t.TempDir())
	secret := make([]byte, 32)
	srv, url := startLogServer(t, e.st, e.mat, l, secret)
	e.url = url
	return &logEnv{env: e, log: l, verifier: v, secret: secret, srv: srv}
}

// closeRun closes run with an empty body and returns the VPEC and the
// response's log index header.
func (e *env) closeRun(key, runID string) ([]byte, string) {
	e.t.Helper()
	return e.closeRunQuery(key, runID, "")
}

// closeLogged closes run asking to wait for its log index
// (?wait=log-index).
func (e *env) closeLogged(key, runID string) ([]byte, string) {
	e.t.Helper()
	return e.closeRunQuery(key, runID, "?wait=log-index")
}

func (e *env) closeRunQuery(key, runID, query string) ([]byte, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+"/api/v1/runs/"+runID+"/close"+query, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	buf, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		e.t.Fatalf("close %s: %d %s", runID, resp.StatusCode, buf)
	}
	return buf, resp.Header.Get(api.HeaderLogIndex)
}

// subjectOf is the receipt subject of a VPEC document.
func subjectOf(t *testing.T, doc []byte) tlog.Subject {
	t.Helper()
	d, err := vpec.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	return tlog.Subject{VPECID: d.VPEC.VPECID, Digest: tlog.DigestParts(d.SignedParts)}
}

// TestCloseAppendsToLog: each close asking to wait answers its log index; the receipt
// (waited for) verifies against the log key for that VPEC at that index;
// the organisation's monitoring key opens its leaf (dirty, sandbox); the
// log's checkpoint is served under /log/; the receipt is scoped to the
// organisation and wait is bounded.
func TestCloseAppendsToLog(t *testing.T) {
	e := newLogEnv(t)
	var docs [][]byte
	for i := range 3 {
		run := e.open(e.keyA)
		doc, idx := e.closeLogged(e.keyA, run.RunID)
		if idx != strconv.Itoa(i) {
			t.Fatalf("close %d: %s = %q, want %d", i, api.HeaderLogIndex, idx, i)
		}
		docs = append(docs, doc)
	}
	sub := subjectOf(t, docs[1])
	code, receipt := e.do("GET", "/api/v1/vpecs/"+sub.VPECID+"/receipt?wait=10s", e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("receipt: %d %s", code, receipt)
	}
	got, err := e.verifier.VerifyReceipt(receipt, sub)
	if err != nil {
		t.Fatalf("VerifyReceipt: %v\n%s", err, receipt)
	}
	if got.Index != 1 {
		t.Errorf("receipt index %d, want 1", got.Index)
	}
	if _, err := e.verifier.VerifyReceipt(receipt, subjectOf(t, docs[0])); err == nil {
		t.Error("the receipt of VPEC 1 verified for VPEC 0")
	}
	var info api.LogInfo
	if code, body := e.do("GET", "/api/v1/log/org-key", e.keyA, nil, &info); code != 200 || info.LogKey != e.log.Key().String() || info.OrgID != "org_alpha" {
		t.Fatalf("org-key: %d %s", code, body)
	}
	ok, err := tlog.ParseOrgKey(info.OrgKey)
	if err != nil {
		t.Fatal(err)
	}
	opened, mine, err := ok.Open(got.Leaf, "claims")
	if err != nil || !mine || opened.Workflow != "claims" || opened.Environment != "sandbox" || opened.Clean {
		t.Errorf("Open(leaf) = %+v, %v, %v; want alpha's dirty sandbox claims VPEC", opened, mine, err)
	}
	if code, cp := e.do("GET", "/log/checkpoint", "", nil, nil); code != 200 {
		t.Errorf("/log/checkpoint: %d %s", code, cp)
	} else if _, err := e.verifier.VerifyCheckpoint(cp); err != nil {
		t.Errorf("/log/checkpoint: %v", err)
	}
	for _, c := range []struct {
		path, key string
		code      int
	}{
		{"/api/v1/vpecs/" + sub.VPECID + "/receipt", e.keyB, 404},
		{"/api/v1/vpecs/" + sub.VPECID + "/receipt?wait=2m", e.keyA, 400},
		{"/api/v1/vpecs/" + sub.VPECID + "/receipt?wait=soon", e.keyA, 400},
		{"/api/v1/vpecs/vpec_nope/receipt", e.keyA, 404},
	} {
		if code, body := e.do("GET", c.path, c.key, nil, nil); code != c.code {
			t.Errorf("GET %s: %d %s, want %d", c.path, code, body, c.code)
		}
	}
	if code, body := e.do("GET", "/api/v1/vpecs/"+sub.VPECID, e.keyA, nil, nil); code != 200 {
		t.Errorf("GET vpec: %d %s", code, body)
	}
}

// TestAppendBacklog: VPECs stored by a server without a log (as a crash
// between storing and logging leaves them) are appended by AppendBacklog,
// once; their receipts then verify.
func TestAppendBacklog(t *testing.T) {
	e := newEnv(t)
	var subs []tlog.Subject
	for range 2 {
		doc, idx := e.closeRun(e.keyB, e.open(e.keyB).RunID)
		if idx != "" {
			t.Fatalf("a server without a log answered %s %q", api.HeaderLogIndex, idx)
		}
		subs = append(subs, subjectOf(t, doc))
	}
	if vs, err := e.st.VPECsNotLogged(context.Background(), 0); err != nil || len(vs) != 2 {
		t.Fatalf("VPECsNotLogged = %d, %v; want 2", len(vs), err)
	}
	l, v := openTestLog(t, t.TempDir())
	srv, url := startLogServer(t, e.st, e.mat, l, make([]byte, 32))
	e.url = url
	for want := range []int{2, 0} {
		n, err := srv.AppendBacklog(context.Background())
		if err != nil || n != []int{2, 0}[want] {
			t.Fatalf("AppendBacklog #%d = %d, %v; want %d", want, n, err, []int{2, 0}[want])
		}
	}
	for _, s := range subs {
		code, receipt := e.do("GET", "/api/v1/vpecs/"+s.VPECID+"/receipt?wait=10s", e.keyB, nil, nil)
		if code != 200 {
			t.Fatalf("receipt: %d %s", code, receipt)
		}
		if _, err := v.VerifyReceipt(receipt, s); err != nil {
			t.Errorf("receipt of %s: %v", s.VPECID, err)
		}
	}
	if st := l.Stats(); st.Appended != 2 {
		t.Errorf("appended %d leaves, want 2", st.Appended)
	}
}

// TestReceiptWithoutLog: a server without a log answers 501 for receipts.
func TestReceiptWithoutLog(t *testing.T) {
	e := newEnv(t)
	doc, _ := e.closeRun(e.keyB, e.open(e.keyB).RunID)
	var eb api.ErrorBody
	code, _ := e.do("GET", "/api/v1/vpecs/"+subjectOf(t, doc).VPECID+"/receipt", e.keyB, nil, &eb)
	if code != 501 || eb.Error.Code != api.CodeNotImplemented {
		t.Errorf("receipt without a log: %d %+v", code, eb)
	}
}
