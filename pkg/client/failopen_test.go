package client_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// secret returns distinctive random plaintext: text that would survive
// JSON escaping unchanged if it leaked.
func secret(tag string) []byte {
	b := make([]byte, 48)
	rand.Read(b)
	return []byte(tag + "-" + base64.RawURLEncoding.EncodeToString(b))
}

// leaks reports where any 16-byte window of a secret (or its hex or base64
// form) occurs in data.
func leaks(data []byte, secrets map[string][]byte) []string {
	var found []string
	for name, s := range secrets {
		forms := [][]byte{s, []byte(hex.EncodeToString(s)), []byte(base64.StdEncoding.EncodeToString(s)), []byte(base64.RawURLEncoding.EncodeToString(s))}
		for _, f := range forms {
			for i := 0; i+16 <= len(f); i += 4 {
				if bytes.Contains(data, f[i:i+16]) {
					found = append(found, name)
					break
				}
			}
		}
	}
	return found
}

// Privacy invariant (docs/API.md): raw input, output, display content and
// rationale never leave the process. Every request of a full session
// (records online and queued, check and review sessions, delegation,
// close) is recorded at the transport and searched for them.
func TestPrivacyInvariant(t *testing.T) {
	e := newEnv(t)
	rt := &recorder{base: http.DefaultTransport}
	p := e.pipeline(func(o *client.Options) { o.HTTPClient = &http.Client{Transport: rt} })
	secrets := map[string][]byte{}
	next := func(tag string) []byte {
		s := secret(tag)
		secrets[fmt.Sprintf("%s#%d", tag, len(secrets))] = s
		return s
	}
	_, priv, _ := signing.GenerateKey()
	reviewer, _ := signing.NewSigner(priv)
	keyID, err := p.RegisterReviewer(ctx, reviewer.PublicKey(), "reviewer")
	if err != nil {
		t.Fatal(err)
	}
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "pii", manifest, vpec.ResultPass, next("input"), client.WithOutput(next("output")),
		client.WithDetails(map[string]any{"engine": "v2"})); err != nil {
		t.Fatal(err)
	}
	cs, err := run.OpenCheck(ctx, "pii", manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "pii", manifest, vpec.ResultPass, next("input"), client.WithCheckSession(cs), client.WithOutput(next("output"))); err != nil {
		t.Fatal(err)
	}
	rs, err := run.OpenReview(ctx, "review", manifest, keyID, 0)
	if err != nil {
		t.Fatal(err)
	}
	in := next("input")
	if err := run.CloseSession(ctx, rs, in); err != nil {
		t.Fatal(err)
	}
	rationale := string(next("rationale"))
	if _, err := run.Record(ctx, "review", manifest, vpec.ResultPass, in, client.WithReview(rs, reviewer, next("display"), rationale)); err != nil {
		t.Fatal(err)
	}
	// Transparent: the input is sent by design, in that record only.
	public := []byte("a public, non-sensitive input")
	if _, err := run.Record(ctx, "public", manifest, vpec.ResultPass, public, client.WithVisibility(client.Transparent)); err != nil {
		t.Fatal(err)
	}
	// Selective: the declared field is sent, the undeclared ones never
	// (withheld), and the same input gets fresh salts each time.
	kyc := api.Manifest{Name: "kyc", Version: "1", Stages: []api.ManifestStage{{StageName: "kyc", ProofCeiling: "execution", Disclose: []string{"document_type"}}}}
	kycID, err := client.ManifestID(kyc)
	if err != nil {
		t.Fatal(err)
	}
	withheld := map[string][]byte{}
	hide := func(tag string) string {
		s := secret(tag)
		withheld[fmt.Sprintf("%s#%d", tag, len(withheld))] = s
		return string(s)
	}
	kycInput := fmt.Appendf(nil, `{"document_type":"passport","name":%q,"id_number":%q,"address":{"street":%q}}`, hide("name"), hide("id"), hide("street"))
	for range 2 {
		if _, err := run.Record(ctx, "kyc", kycID, vpec.ResultPass, kycInput, client.WithVisibility(client.Selective), client.WithManifest(kyc)); err != nil {
			t.Fatal(err)
		}
	}
	// Queued while the service is down, then flushed.
	e.gate.set(unavailable)
	for range 3 {
		res, err := run.Record(ctx, "tox", manifest, vpec.ResultFail, next("input"), client.WithOutput(next("output")))
		if err != nil || !res.Queued {
			t.Fatalf("%+v %v", res, err)
		}
	}
	if res, err := run.Record(ctx, "kyc", kycID, vpec.ResultPass, kycInput, client.WithVisibility(client.Selective), client.WithManifest(kyc)); err != nil || !res.Queued {
		t.Fatalf("%+v %v", res, err)
	}
	queueHolds(t, p.QueuePath(), func() (out [][]byte) {
		for _, s := range secrets {
			out = append(out, s)
		}
		for _, s := range withheld {
			out = append(out, s)
		}
		return
	}()...)
	if q, _ := os.ReadFile(p.QueuePath()); !bytes.Contains(q, []byte(`"passport"`)) || bytes.Contains(q, public) {
		t.Fatalf("the queue holds the queued selective record's disclosure only: %s", q)
	}
	e.gate.set(pass)
	if _, err := p.FlushQueue(ctx); err != nil {
		t.Fatal(err)
	}
	tok, err := run.RecordDelegation(ctx, map[string]any{"to": "agent"})
	if err != nil {
		t.Fatal(err)
	}
	cont, err := p.ResumeFromLineage(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cont.Record(ctx, "after", manifest, vpec.ResultPass, next("input")); err != nil {
		t.Fatal(err)
	}
	v, err := cont.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 11)

	reqs := rt.all()
	if len(reqs) < 15 {
		t.Fatalf("only %d requests recorded", len(reqs))
	}
	for _, r := range reqs {
		var hdr bytes.Buffer
		r.header.Write(&hdr)
		for where, data := range map[string][]byte{"body": r.body, "URL": []byte(r.url), "header": hdr.Bytes()} {
			if found := leaks(data, secrets); len(found) > 0 {
				t.Errorf("%s %s: %s leaks %v", r.method, r.url, where, found)
			}
		}
	}
	// Undeclared fields of selective records never leave; declared ones
	// do, with a fresh salt per record; the transparent input only in its
	// own record.
	salts := map[string]bool{}
	var disclosedCount, publicIn int
	var sent []recorded // every record sent, a batch's one by one
	for _, r := range reqs {
		if found := leaks(append(append([]byte(r.url), r.body...), r.header.Get("Authorization")...), withheld); len(found) > 0 {
			t.Errorf("%s %s leaks undeclared fields %v", r.method, r.url, found)
		}
		var batch struct{ Records []json.RawMessage }
		if strings.HasSuffix(r.url, ":batch") && json.Unmarshal(r.body, &batch) == nil {
			for _, b := range batch.Records {
				sent = append(sent, recorded{r.method, r.url, r.header, b})
			}
			continue
		}
		sent = append(sent, r)
	}
	for _, r := range sent {
		var rec vpec.Record
		if json.Unmarshal(r.body, &rec) != nil || rec.RecordID == "" {
			continue
		}
		if bytes.Contains(r.body, []byte(base64.StdEncoding.EncodeToString(public))) {
			publicIn++
			if rec.Visibility != vpec.Transparent {
				t.Errorf("the transparent input is in a %s record", rec.Visibility)
			}
		}
		if rec.Visibility == vpec.Selective && !salts[rec.RecordID] {
			salts[rec.RecordID] = true
			if len(rec.Disclosures) != 1 || rec.Disclosures[0].Value != "passport" || len(rec.FieldDigests) != 4 {
				t.Errorf("selective record sent %+v", rec)
			}
			for _, d := range rec.Disclosures {
				if salts[d.Salt] {
					t.Errorf("salt %s reused", d.Salt)
				}
				salts[d.Salt] = true
				disclosedCount++
			}
		}
	}
	if disclosedCount != 3 || publicIn == 0 {
		t.Errorf("%d selective disclosures and %d transparent inputs seen", disclosedCount, publicIn)
	}
	// And the commitments are there: the test would notice a silent no-op.
	var all []byte
	for _, r := range reqs {
		all = append(all, r.body...)
	}
	for name, s := range secrets {
		if !bytes.Contains(all, []byte(commitment.String(s))) {
			t.Errorf("commitment of %s never sent", name)
		}
	}
}

// Connection refused: the run opens locally with a client-proposed id, the
// open and the records are queued durably, and Close returns an offline
// VPEC with a system_unavailable gap. Delivered later, the service issues
// its own VPEC covering every record.
func TestFailOpenConnectionRefused(t *testing.T) {
	e := newEnv(t)
	qpath := filepath.Join(t.TempDir(), "q.jsonl")
	down := e.pipeline(func(o *client.Options) { o.BaseURL = closedURL(t); o.QueuePath = qpath })
	start := time.Now()
	run, err := down.Open(ctx, "pp_1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "in %d", i))
		if err != nil || !res.Queued || res.Sequence != int64(i+1) || res.ChainHash == "" {
			t.Fatalf("%+v %v", res, err)
		}
		ids = append(ids, res.RecordID)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("offline calls took %s", time.Since(start))
	}
	if !v.Offline || v.VPEC.IsClean || !v.VPEC.ChainIntact || v.VPEC.TotalChecksRun != 3 || v.VPEC.Signature != "" ||
		len(v.VPEC.Gaps) != 1 || v.VPEC.Gaps[0].GapType != gap.SystemUnavailable || v.VPEC.Gaps[0].Severity != gap.High {
		t.Fatalf("offline VPEC %+v", v.VPEC)
	}
	if rep := e.verify(v.Raw); rep.Valid {
		t.Fatal("an unsigned offline VPEC verified")
	}
	var parsed vpec.VPEC
	if err := json.Unmarshal(v.Raw, &parsed); err != nil || parsed.RunID != run.ID() {
		t.Fatalf("raw: %v", err)
	}
	if n, _ := down.PendingQueueCount(); n != 5 {
		t.Fatalf("pending %d, want open + 3 records + close", n)
	}
	if _, err := down.FlushQueue(ctx); !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("flush while down: %v", err)
	}
	down.Close()

	up := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	if n, err := up.FlushQueue(ctx); n != 5 || err != nil {
		t.Fatalf("flushed %d: %v", n, err)
	}
	sr, _ := e.serverRun(run.ID())
	if sr.Status != "sealed" || sr.PolicySnapshotHash != run.PolicySnapshotHash() || sr.RecordCount != 3 {
		t.Fatalf("server run %+v (client snapshot %s)", sr, run.PolicySnapshotHash())
	}
	sv, err := up.FetchVPEC(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(sv, 3)
	for i, r := range sv.VPEC.Records {
		if r.RecordID != ids[i] || r.ChainHash != v.VPEC.Records[i].ChainHash {
			t.Fatalf("record %d: %s", i, r.RecordID)
		}
	}
	if st, err := os.Stat(qpath); err != nil || st.Size() != 0 {
		t.Fatalf("queue not compacted: %v", err)
	}
}

// A service that hangs: no call blocks beyond Options.Timeout. The first
// call that meets the hang waits Timeout; later calls queue at once.
func TestFailOpenHangingService(t *testing.T) {
	e := newEnv(t)
	const timeout = 300 * time.Millisecond
	p := e.pipeline(func(o *client.Options) { o.Timeout = timeout; o.RetryInterval = time.Hour })
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// A pipeline with a long Timeout: the caller's deadline bounds it.
	p3 := e.pipeline(func(o *client.Options) { o.Timeout = time.Hour; o.RetryInterval = time.Hour })
	r3, err := p3.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	e.gate.set(hang)
	// bound runs a call against the hanging service and checks it sent at
	// most want requests: the gate never answers, so a call that returned
	// after one request gave up on it (at its Timeout, or its caller's
	// deadline), and one that sent none queued at once. The time is only
	// checked against a hang (ten Timeouts, far above a loaded machine's
	// scheduling delays, far below a call that waited for no deadline).
	bound := func(what string, want int64, f func()) {
		t.Helper()
		seen := e.gate.seen.Load()
		start := time.Now()
		f()
		if d := time.Since(start); d > 10*timeout {
			t.Fatalf("%s took %s with Timeout %s", what, d, timeout)
		}
		if n := e.gate.seen.Load() - seen; n > want {
			t.Fatalf("%s sent %d requests to the hanging service; want at most %d (it waits one Timeout at most)", what, n, want)
		}
	}
	bound("record", 1, func() {
		res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("a"))
		if err != nil || !res.Queued {
			t.Fatalf("%+v %v", res, err)
		}
	})
	bound("next record", 0, func() {
		if res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("b")); err != nil || !res.Queued {
			t.Fatalf("%+v %v", res, err)
		}
	})
	bound("close", 0, func() {
		if v, err := run.Close(ctx); err != nil || !v.Offline {
			t.Fatalf("%+v %v", v, err)
		}
	})
	// A fresh pipeline meets the hang at Open.
	p2 := e.pipeline(func(o *client.Options) { o.Timeout = timeout; o.RetryInterval = time.Hour })
	bound("open", 1, func() {
		r, err := p2.Open(ctx, "")
		if err != nil || r.ID() == "" {
			t.Fatal(err)
		}
	})
	bound("record with a caller deadline", 1, func() {
		c, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if res, err := r3.Record(c, "c", manifest, vpec.ResultPass, []byte("c")); err != nil || !res.Queued {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

// Proxies answer 502, 503 and 504 when the service is down: they count as
// unreachable, like a 500 or a 429.
func TestFailOpenProxyStatuses(t *testing.T) {
	for _, st := range []int{502, 503, 504, 500, 429} {
		t.Run(fmt.Sprint(st), func(t *testing.T) {
			e := newEnv(t)
			p := e.pipeline()
			run, _ := p.Open(ctx, "")
			e.gate.status.Store(int32(st))
			e.gate.set(unavailable)
			res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("a"))
			if err != nil || !res.Queued {
				t.Fatalf("%+v %v", res, err)
			}
			v, err := run.Close(ctx)
			if err != nil || !v.Offline {
				t.Fatalf("%+v %v", v, err)
			}
		})
	}
}

// Once the service answers again, queued entries are delivered in order
// without the host doing anything (the prober drains the queue in the
// background), and the service's VPEC covers every record.
func TestBackgroundFlushAfterRecovery(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	run, _ := p.Open(ctx, "")
	run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("online"))
	e.gate.set(unavailable)
	for i := range 4 {
		if res, _ := run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "down %d", i)); !res.Queued {
			t.Fatal("not queued")
		}
	}
	// Another run opened while down.
	run2, _ := p.Open(ctx, "")
	run2.Record(ctx, "c", manifest, vpec.ResultPass, []byte("run2"))
	if n, _ := p.PendingQueueCount(); n != 6 {
		t.Fatalf("pending %d", n)
	}
	e.gate.set(pass)
	waitFor(t, "the background flush", func() bool { n, _ := p.PendingQueueCount(); return n == 0 })
	res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("back"))
	if err != nil || res.Queued || res.Sequence != 6 {
		t.Fatalf("%+v %v", res, err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 6)
	v2, err := run2.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v2, 1)
}

// A backlog found in the queue file (left by an earlier process) is
// delivered at the start of the next call that reaches the service: here
// an Open, whose own request follows the backlog.
func TestFlushAtStartOfNextCall(t *testing.T) {
	e := newEnv(t)
	qpath := filepath.Join(t.TempDir(), "q.jsonl")
	down := e.pipeline(func(o *client.Options) { o.BaseURL = closedURL(t); o.QueuePath = qpath })
	run, _ := down.Open(ctx, "")
	for i := range 3 {
		run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "%d", i))
	}
	down.Close()
	rt := &recorder{base: http.DefaultTransport}
	p := e.pipeline(func(o *client.Options) { o.QueuePath = qpath; o.HTTPClient = &http.Client{Transport: rt} })
	if n, _ := p.PendingQueueCount(); n != 4 {
		t.Fatalf("pending %d", n)
	}
	run2, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := p.PendingQueueCount(); n != 0 {
		t.Fatalf("pending %d after the next call", n)
	}
	var order []string
	for _, r := range rt.all() {
		var b struct {
			Sequence int64 `json:"sequence"`
			Records  []struct {
				Sequence int64 `json:"sequence"`
			} `json:"records"`
		}
		json.Unmarshal(r.body, &b)
		seqs := fmt.Sprint(b.Sequence)
		for i, rec := range b.Records { // a batch: its records' sequences
			if i == 0 {
				seqs = ""
			}
			seqs += fmt.Sprint(rec.Sequence)
		}
		order = append(order, fmt.Sprintf("%s %s", strings.TrimPrefix(r.url, e.gated), seqs))
	}
	// The queued records go in one batch, in order.
	want := []string{"/api/v1/runs 0", "/api/v1/runs/" + run.ID() + "/records:batch 123", "/api/v1/runs 0"}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s", strings.Join(order, "\n"))
	}
	cont, err := p.ResumeRun(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	v, err := cont.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 3)
	if v, err := run2.Close(ctx); err != nil || v.Offline {
		t.Fatal(err)
	}
}

// Ordering: once a record of a run is queued, later records of the run
// are queued behind it even while the service answers, until the queue
// drains; nothing overtakes.
func TestQueuedRecordsKeepOrder(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var flushErrs []error
	p := e.pipeline(func(o *client.Options) {
		o.RetryInterval = time.Hour
		o.OnFlushError = func(err error) { mu.Lock(); flushErrs = append(flushErrs, err); mu.Unlock() }
	})
	run, _ := p.Open(ctx, "")
	run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("1"))
	// The service refuses to take sequence 2 for now (403: not an outage,
	// not a verdict on the record: it stays queued).
	block := func(r *http.Request, body []byte) int {
		if bytes.Contains(body, []byte(`"sequence":2,`)) {
			return http.StatusForbidden
		}
		return 0
	}
	e.gate.setFail(block)
	r2, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("2"))
	var aerr *client.APIError
	if !errors.As(err, &aerr) || aerr.Status != 403 {
		t.Fatalf("direct 403: %+v %v", r2, err)
	}
	// Queue sequence 2 through an outage, then lift the outage but not the block.
	e.gate.set(unavailable)
	r2, _ = run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("2"))
	if !r2.Queued || r2.Sequence != 2 {
		t.Fatalf("%+v", r2)
	}
	e.gate.set(pass)
	if _, err := p.FlushQueue(ctx); !errors.As(err, &aerr) || aerr.Status != 403 {
		t.Fatalf("flush: %v", err)
	}
	for i := 3; i <= 5; i++ {
		res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "%d", i))
		if err != nil || !res.Queued || res.Sequence != int64(i) {
			t.Fatalf("record %d overtook the queue: %+v %v", i, res, err)
		}
	}
	if sr, _ := e.serverRun(run.ID()); sr.RecordCount != 1 {
		t.Fatalf("server has %d records", sr.RecordCount)
	}
	e.gate.setFail(nil)
	if n, err := p.FlushQueue(ctx); n != 4 || err != nil {
		t.Fatalf("flush %d %v", n, err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 5)
	mu.Lock()
	defer mu.Unlock()
	if len(flushErrs) == 0 {
		t.Fatal("automatic flushes did not report the 403")
	}
}

// Exactly once: entries delivered but still in the file (a crash before
// the queue recorded the delivery) are delivered again as duplicates,
// which count as delivered; nothing is stored twice.
func TestRedeliveryIsIdempotent(t *testing.T) {
	e := newEnv(t)
	qpath := filepath.Join(t.TempDir(), "q.jsonl")
	p := e.pipeline(func(o *client.Options) { o.RetryInterval = time.Hour; o.QueuePath = qpath })
	e.gate.set(unavailable)
	run, _ := p.Open(ctx, "")
	for i := range 3 {
		run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "%d", i))
	}
	snapshot, _ := os.ReadFile(qpath)
	e.gate.set(pass)
	if n, err := p.FlushQueue(ctx); n != 4 || err != nil {
		t.Fatalf("flush %d %v", n, err)
	}
	p.Close()
	os.WriteFile(qpath, snapshot, 0o600)
	again := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	if n, _ := again.PendingQueueCount(); n != 4 {
		t.Fatalf("pending %d", n)
	}
	if n, err := again.FlushQueue(ctx); n != 4 || err != nil {
		t.Fatalf("redelivery %d %v", n, err)
	}
	if _, err := os.Stat(qpath + ".rejected.jsonl"); err == nil {
		t.Fatal("a duplicate was dead-lettered")
	}
	cont, err := again.ResumeRun(ctx, run.ID())
	if err != nil || cont.Sequence() != 3 {
		t.Fatalf("resume %v", err)
	}
	v, err := cont.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 3)
}

// A partial flush is remembered (the offset sidecar): a new pipeline on
// the queue resumes after the delivered entries.
func TestPartialFlushSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	qpath := filepath.Join(t.TempDir(), "q.jsonl")
	p := e.pipeline(func(o *client.Options) { o.RetryInterval = time.Hour; o.QueuePath = qpath })
	e.gate.set(unavailable)
	run, _ := p.Open(ctx, "")
	for i := range 6 {
		run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "%d", i))
	}
	e.gate.set(pass)
	e.gate.setFail(func(r *http.Request, body []byte) int {
		if bytes.Contains(body, []byte(`"sequence":4,`)) {
			return http.StatusServiceUnavailable
		}
		return 0
	})
	// The open is delivered; the records go in one batch, which holds
	// sequence 4 and fails: none of them is delivered.
	if n, err := p.FlushQueue(ctx); n != 1 || !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("partial flush %d %v", n, err)
	}
	p.Close()
	e.gate.setFail(nil)
	p2 := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	if n, _ := p2.PendingQueueCount(); n != 6 {
		t.Fatalf("pending after restart %d", n)
	}
	if n, err := p2.FlushQueue(ctx); n != 6 || err != nil {
		t.Fatalf("flush %d %v", n, err)
	}
	cont, _ := p2.ResumeRun(ctx, run.ID())
	v, err := cont.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 6)
}

// A torn last line (a write cut by a crash) is dropped; the complete
// entries before it are kept and new entries append cleanly after them.
func TestTornLastLine(t *testing.T) {
	e := newEnv(t)
	qpath := filepath.Join(t.TempDir(), "q.jsonl")
	p := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	e.gate.set(unavailable)
	run, _ := p.Open(ctx, "")
	run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("1"))
	run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("2"))
	p.Close()
	f, _ := os.OpenFile(qpath, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"kind":"record","run_id":"` + run.ID() + `","body":{"record_id":"rec_`)
	f.Close()

	p2 := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	if n, _ := p2.PendingQueueCount(); n != 3 {
		t.Fatalf("pending %d, want 3 (open and 2 records)", n)
	}
	b, _ := os.ReadFile(qpath)
	if !bytes.HasSuffix(b, []byte("}\n")) || strings.Count(string(b), "\n") != 3 {
		t.Fatalf("torn line not cut:\n%s", b)
	}
	// Continue the run in the new process: sequence 3 chains on 2.
	e.gate.set(pass)
	if _, err := p2.FlushQueue(ctx); err != nil {
		t.Fatal(err)
	}
	cont, err := p2.ResumeRun(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cont.Record(ctx, "c", manifest, vpec.ResultPass, []byte("3")); err != nil || res.Sequence != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	v, err := cont.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 3)
	if _, err := os.Stat(qpath + ".rejected.jsonl"); err == nil {
		t.Fatal("dead letters")
	}
}

// Entries the service refuses for good go to the dead-letter file; the
// rest of the queue is delivered.
func TestRejectedEntriesAreDeadLettered(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline(func(o *client.Options) { o.RetryInterval = time.Hour })
	run, _ := p.Open(ctx, "")
	run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("1"))
	e.gate.set(unavailable)
	queued, _ := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("2"))
	other, _ := p.Open(ctx, "")
	other.Record(ctx, "c", manifest, vpec.ResultPass, []byte("x"))
	// Meanwhile the run is closed elsewhere.
	e.gate.set(pass)
	elsewhere := e.pipeline()
	r, err := elsewhere.ResumeRun(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	r.Close(ctx)
	n, err := p.FlushQueue(ctx)
	var rej *client.RejectedError
	if n != 2 || !errors.Is(err, client.ErrRejected) || !errors.As(err, &rej) || len(rej.Entries) != 1 ||
		rej.Entries[0].RecordID != queued.RecordID || !errors.Is(rej.Entries[0].Err, client.ErrRunSealed) {
		t.Fatalf("flush %d %v", n, err)
	}
	dl, _ := os.ReadFile(rej.DeadLetterPath)
	if !bytes.Contains(dl, []byte(queued.RecordID)) || !bytes.Contains(dl, []byte("run_sealed")) {
		t.Fatalf("dead letters: %s", dl)
	}
	v, err := other.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 1)
}

// Sandbox keys are rate-limited: a 429 defers records to the queue
// instead of failing the host.
func TestRateLimitedRecordsAreQueued(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.SandboxLimit = server.RateLimit{PerSecond: 5, Burst: 3} })
	p := e.pipeline(func(o *client.Options) { o.APIKey = e.sbKey })
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	queued := 0
	for i := range 10 {
		res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if res.Queued {
			queued++
		}
	}
	if queued == 0 {
		t.Fatal("nothing was rate-limited")
	}
	waitFor(t, "the queue to drain", func() bool {
		p.FlushQueue(ctx)
		n, _ := p.PendingQueueCount()
		if n > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		return n == 0
	})
	time.Sleep(time.Second)
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 10)
}
