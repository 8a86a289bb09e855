package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// batchPath is the batch append's path for a run.
func batchPath(runID string) string { return "/api/v1/runs/" + runID + "/records:batch" }

// batchBody is the JSON body of a batch of recs.
func batchBody(recs []vpec.Record) []byte {
	b, err := json.Marshal(api.RecordBatch{Records: recs})
	if err != nil {
		panic(err)
	}
	return b
}

// recordCount is the run's record count as GET /api/v1/runs/{id} says.
func (e *env) recordCount(key, runID string) int64 {
	e.t.Helper()
	var got api.Run
	if code, body := e.do("GET", "/api/v1/runs/"+runID, key, nil, &got); code != 200 {
		e.t.Fatalf("GET run: %d %s", code, body)
	}
	return got.RecordCount
}

// TestRecordBatch: the batch append against a real server, step by step on
// one run: each step's status, error code and field, and how many records
// the run holds after it (a refused batch stores nothing).
func TestRecordBatch(t *testing.T) {
	e := newEnvBody(t, 1<<20)
	run := e.open(e.keyB)
	recs := chain(run.RunID, api.MaxBatchRecords+20)
	path := batchPath(run.RunID)
	badCommitment := append([]vpec.Record(nil), recs[5:10]...)
	badCommitment[3].CommitmentHash = "sha256:xyz"
	brokenLink := append([]vpec.Record(nil), recs[5:10]...)
	brokenLink[2].ChainHash = recs[3].ChainHash
	reordered := []vpec.Record{recs[6], recs[5]}
	sameID := append([]vpec.Record(nil), recs[5:7]...)
	sameID[1].RecordID = sameID[0].RecordID
	conflicting := append([]vpec.Record(nil), recs[4:7]...)
	conflicting[0].CheckResult = vpec.ResultFail // rec 5 (stored) with another body, correctly chained
	prev, err := commitment.ParseSHA256(recs[3].ChainHash)
	if err != nil {
		t.Fatal(err)
	}
	issue.Chain(prev, conflicting)
	unknownField := string(batchBody(recs[5:7]))
	i := strings.LastIndex(unknownField, `"check":`)
	unknownField = unknownField[:i] + `"approved":true,` + unknownField[i:]
	withGap := []vpec.Record{recs[5], recs[7]} // sequence 7 is missing: a gap, as with single appends
	steps := []struct {
		name   string
		body   any
		ctype  string // "" for application/json
		status int
		code   string
		field  string
		stored int64
	}{
		{"first five", batchBody(recs[:5]), "", 201, "", "", 5},
		{"replayed", batchBody(recs[:5]), "", 200, "", "", 5},
		{"empty", `{"records":[]}`, "", 400, api.CodeBadRequest, "records", 5},
		{"no records member", `{}`, "", 400, api.CodeBadRequest, "records", 5},
		{"not an object", `[]`, "", 400, api.CodeBadRequest, "", 5},
		{"garbage after valid records", string(batchBody(recs[5:8]))[:200] + "garbage", "", 400, api.CodeBadRequest, "", 5},
		{"a bad commitment at index 3", batchBody(badCommitment), "", 400, api.CodeBadRequest, "records[3].commitment_hash", 5},
		{"an unknown field at index 1", unknownField, "", 400, api.CodeBadRequest, "records[1].approved", 5},
		{"a broken link inside the batch", batchBody(brokenLink), "", 422, api.CodeChainMismatch, "records[2].chain_hash", 5},
		{"reordered sequences", batchBody(reordered), "", 400, api.CodeBadRequest, "records[1].sequence", 5},
		{"one record_id twice", batchBody(sameID), "", 400, api.CodeBadRequest, "records[1].record_id", 5},
		{"a stored record_id with another body", batchBody(conflicting), "", 409, api.CodeSequenceConflict, "records[0]", 5},
		{"text/plain", batchBody(recs[5:7]), "text/plain", 415, api.CodeUnsupportedMedia, "Content-Type", 5},
		{"no content type", batchBody(recs[5:7]), "none", 415, api.CodeUnsupportedMedia, "Content-Type", 5},
		{"one past the maximum count", batchBody(recs[5 : 5+api.MaxBatchRecords+1]), "", 413, api.CodePayloadTooLarge, "records", 5},
		// The count is said before what is wrong inside the records.
		{"one past the maximum count of empty records", `{"records":[{}` + strings.Repeat(`,{}`, api.MaxBatchRecords) + `]}`, "", 413, api.CodePayloadTooLarge, "records", 5},
		{"one past the maximum count, and an unknown member", `{"x":1,"records":[1` + strings.Repeat(`,1`, api.MaxBatchRecords) + `]}`, "", 413, api.CodePayloadTooLarge, "records", 5},
		{"the maximum count of empty records", `{"records":[{}` + strings.Repeat(`,{}`, api.MaxBatchRecords-1) + `]}`, "", 400, api.CodeBadRequest, "records[0].record_id", 5},
		{"a gap", batchBody(withGap), "", 201, "", "", 7},
		{"the maximum count", batchBody(recs[8 : 8+api.MaxBatchRecords]), "", 201, "", "", 7 + api.MaxBatchRecords},
	}
	for _, st := range steps {
		var b []byte
		switch x := st.body.(type) {
		case string:
			b = []byte(x)
		case []byte:
			b = x
		}
		code, body := e.post(path, e.keyB, b, st.ctype)
		var eb api.ErrorBody
		json.Unmarshal(body, &eb)
		if code != st.status || eb.Error.Code != st.code || (st.field != "" && eb.Error.Field != st.field) {
			t.Errorf("%s: %d %.300s; want %d %s field %q", st.name, code, body, st.status, st.code, st.field)
		}
		if n := e.recordCount(e.keyB, run.RunID); n != st.stored {
			t.Errorf("%s: the run holds %d records, want %d", st.name, n, st.stored)
		}
	}
	// The answer lists every record's sequence and chain hash, in order;
	// a replay is acknowledged with duplicate set.
	var res api.RecordBatchResult
	code, body := e.do("POST", path, e.keyB, api.RecordBatch{Records: recs[:5]}, &res)
	if code != 200 || len(res.Records) != 5 {
		t.Fatalf("replay: %d %s", code, body)
	}
	for i, r := range res.Records {
		if r.Sequence != recs[i].Sequence || r.ChainHash != recs[i].ChainHash || r.RecordID != recs[i].RecordID || !r.Duplicate {
			t.Errorf("replay result %d = %+v, want sequence %d chain %s duplicate", i, r, recs[i].Sequence, recs[i].ChainHash)
		}
	}
	// Another organisation's key does not see the run.
	if code, _ := e.do("POST", path, e.keyA, api.RecordBatch{Records: recs[:1]}, nil); code != 404 {
		t.Errorf("another org's batch: %d, want 404", code)
	}
	// Sealed: a replay of stored records is acknowledged, a new one refused.
	code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
	if code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	if rep := e.verify(doc); !rep.Valid || rep.Records != 7+api.MaxBatchRecords {
		t.Fatalf("VPEC: %s, %d records", rep.Verdict, rep.Records)
	}
	if code, body := e.do("POST", path, e.keyB, api.RecordBatch{Records: recs[:5]}, nil); code != 200 {
		t.Errorf("replay after close: %d %s", code, body)
	}
	var eb api.ErrorBody
	last := recs[len(recs)-12 : len(recs)-10]
	if code, _ := e.do("POST", path, e.keyB, api.RecordBatch{Records: last}, &eb); code != 409 || eb.Error.Code != api.CodeRunSealed {
		t.Errorf("new records after close: %d %+v, want 409 run_sealed", code, eb)
	}
}

// post sends body with content type ctype ("" for application/json,
// "none" for no Content-Type header).
func (e *env) post(path, key string, body []byte, ctype string) (int, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	switch ctype {
	case "":
		req.Header.Set("Content-Type", "application/json")
	case "none":
	default:
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, []byte(out.String())
}

// TestRecordBatchByteBudget: a batch body of exactly the server's body
// limit is taken, one byte more is refused with 413 and nothing stored.
func TestRecordBatchByteBudget(t *testing.T) {
	const limit = 64 << 10
	e := newEnvBody(t, limit)
	run := e.open(e.keyB)
	recs := chain(run.RunID, 20)
	body := batchBody(recs)
	pad := func(n int) []byte { return append(append([]byte(nil), body...), strings.Repeat(" ", n-len(body))...) }
	if code, b := e.post(batchPath(run.RunID), e.keyB, pad(limit+1), ""); code != 413 {
		t.Errorf("limit+1 bytes: %d %s, want 413", code, b)
	}
	if n := e.recordCount(e.keyB, run.RunID); n != 0 {
		t.Errorf("after the refused batch the run holds %d records", n)
	}
	if code, b := e.post(batchPath(run.RunID), e.keyB, pad(limit), ""); code != 201 {
		t.Errorf("limit bytes: %d %s, want 201", code, b)
	}
	if n := e.recordCount(e.keyB, run.RunID); n != 20 {
		t.Errorf("after the batch the run holds %d records, want 20", n)
	}
}

// TestRecordBatchRacingClose: batches sent from many goroutines while the
// run is closed are each either wholly in the sealed VPEC (acknowledged)
// or refused 409 run_sealed with none of their records in it.
func TestRecordBatchRacingClose(t *testing.T) {
	const batches, size = 48, 8
	e := newEnvBody(t, 1<<20)
	run := e.open(e.keyB)
	recs := chain(run.RunID, batches*size)
	acked := make([]atomic.Bool, batches)
	var ok, done atomic.Int32
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			defer done.Add(1)
			for b := w; b < batches; b += 8 {
				var eb api.ErrorBody
				code, body := e.do("POST", batchPath(run.RunID), e.keyB, api.RecordBatch{Records: recs[b*size : (b+1)*size]}, &eb)
				switch {
				case code == 201:
					acked[b].Store(true)
					ok.Add(1)
				case code == 409 && eb.Error.Code == api.CodeRunSealed:
				default:
					t.Errorf("batch %d: %d %s", b, code, body)
				}
			}
		})
	}
	var doc []byte
	wg.Go(func() {
		for ok.Load() < batches/4 && done.Load() < 8 {
			time.Sleep(time.Millisecond)
		}
		var code int
		if code, doc = e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil); code != 200 {
			t.Errorf("close: %d %s", code, doc)
		}
	})
	wg.Wait()
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if rep := e.verify(doc); !rep.Valid {
		t.Fatalf("VPEC: %s", rep.Verdict)
	}
	sealed := map[string]bool{}
	for _, r := range v.Records {
		sealed[r.RecordID] = true
	}
	for b := range batches {
		for _, r := range recs[b*size : (b+1)*size] {
			if sealed[r.RecordID] != acked[b].Load() {
				t.Errorf("batch %d acknowledged=%v, but record %d sealed=%v", b, acked[b].Load(), r.Sequence, sealed[r.RecordID])
			}
		}
	}
	if len(v.Records) != int(ok.Load())*size {
		t.Errorf("the VPEC holds %d records, %d batches of %d were acknowledged", len(v.Records), ok.Load(), size)
	}
}

// TestRecordBatchReplayRacing: the same batch sent by many goroutines at
// once is stored once: one answer 201, every other 200 with duplicate.
func TestRecordBatchReplayRacing(t *testing.T) {
	const senders = 12
	e := newEnvBody(t, 1<<20)
	run := e.open(e.keyB)
	recs := chain(run.RunID, 50)
	var created, replayed atomic.Int32
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			var res api.RecordBatchResult
			code, body := e.do("POST", batchPath(run.RunID), e.keyB, api.RecordBatch{Records: recs}, &res)
			switch {
			case code == 201 && len(res.Records) == len(recs) && !res.Records[0].Duplicate:
				created.Add(1)
			case code == 200 && len(res.Records) == len(recs) && res.Records[0].Duplicate && res.Records[49].Duplicate:
				replayed.Add(1)
			default:
				t.Errorf("%d %.300s", code, body)
			}
		})
	}
	wg.Wait()
	if created.Load() != 1 || replayed.Load() != senders-1 {
		t.Errorf("%d answers 201, %d answers 200; want 1 and %d", created.Load(), replayed.Load(), senders-1)
	}
	if n := e.recordCount(e.keyB, run.RunID); n != 50 {
		t.Errorf("the run holds %d records, want 50", n)
	}
}

// BenchmarkRecordBatch100 measures the batch append over loopback HTTP
// (SQLite): one op is one batch of 100 records; records/s is reported.
func BenchmarkRecordBatch100(b *testing.B) {
	e := newEnvBody(b, 1<<20)
	run := e.open(e.keyB)
	recs := chain(run.RunID, 100*b.N)
	b.ResetTimer()
	for i := range b.N {
		if code, body := e.post(batchPath(run.RunID), e.keyB, batchBody(recs[i*100:(i+1)*100]), ""); code != 201 {
			b.Fatalf("%d %s", code, body)
		}
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "records/s")
}

// In a batch, sessions are claimed only once every record passed its
// checks: a batch refused for a later record leaves the session free; two
// records of one batch presenting one session get session_used naming the
// second.
func TestRecordBatchClaimsSessionsLast(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	base := "/api/v1/runs/" + run.RunID
	var sess api.SessionView
	if code, body := e.do("POST", base+"/sessions", e.keyA, api.SessionRequest{Kind: api.SessionCheck, Check: "pii", ManifestID: "m1"}, &sess); code != 201 {
		t.Fatalf("open session: %d %s", code, body)
	}
	input := commitment.String([]byte("the input the session closed on"))
	if code, body := e.do("POST", base+"/sessions/"+sess.SessionID+"/close", e.keyA, api.SessionCloseRequest{CommitmentHash: input}, &sess); code != 200 {
		t.Fatalf("close session: %d %s", code, body)
	}
	withSession := func(recs []vpec.Record, idx ...int) []vpec.Record {
		for _, i := range idx {
			r := &recs[i]
			r.Check, r.ManifestID, r.CommitmentHash = "pii", "m1", input
			r.CheckSession = &vpec.CheckSession{SessionID: sess.SessionID, CheckOpenTST: sess.CheckOpenTST, CheckCloseTST: sess.CheckCloseTST}
		}
		issue.Chain(vpec.Genesis(run.RunID), recs)
		return recs
	}
	steps := []struct {
		name   string
		recs   []vpec.Record
		status int
		code   string
		field  string
	}{
		{"the session's record, then a bad one", func() []vpec.Record {
			r := withSession(chain(run.RunID, 2), 0)
			r[1].CheckResult = "maybe"
			return r
		}(), 400, api.CodeBadRequest, "records[1].check_result"},
		{"two records presenting the session", withSession(chain(run.RunID, 2), 0, 1), 409, api.CodeSessionUsed, "records[1].check_session"},
		{"the session's record alone", withSession(chain(run.RunID, 1), 0), 201, "", ""},
	}
	for _, st := range steps {
		var eb api.ErrorBody
		code, body := e.do("POST", batchPath(run.RunID), e.keyA, api.RecordBatch{Records: st.recs}, &eb)
		if code != st.status || eb.Error.Code != st.code || eb.Error.Field != st.field {
			t.Errorf("%s: %d %.300s; want %d %s field %q", st.name, code, body, st.status, st.code, st.field)
		}
	}
}
