package server_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// TestRunByteBudget (D1): every record refused past the budget gets 422
// run_too_large naming the limit, and the VPEC of a run filled with
// worst-case records (a sequence hole before each, a model_profile_missing
// gap each, the longest check name, all escaped) stays within its bound:
// what each record adds beyond its stored body is below
// server.VPECBytesPerRecord, and the rest below server.VPECHeaderBytes.
func TestRunByteBudget(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const records = 40
	// The records (and so the budget) depend on the run id: propose one.
	run := api.Run{RunID: names.NewID("run_")}
	recs := chain(run.RunID, records+10)
	for i := range recs {
		recs[i].Sequence = int64(2*i + 2) // a hole before every record
		recs[i].Check = strings.Repeat(`"`, 256)
		recs[i].StageType, recs[i].ONNXModelHash = stage.OpenSourceML, commitment.String([]byte("no profile"))
	}
	issue.Chain(vpec.Genesis(run.RunID), recs)
	var bodies int64
	for _, r := range recs[:records] {
		b, err := document.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		bodies += int64(len(b))
	}
	// Room for exactly `records` of them.
	srvLimit := server.VPECHeaderBytes + bodies + records*server.VPECBytesPerRecord
	e := newStressEnv(t, []store.Store{st}, server.RunLimits{MaxDocumentBytes: srvLimit})
	code, body, err := e.post(e.urls[0], "/api/v1/runs", api.OpenRunRequest{WorkflowID: "w", RunID: run.RunID}, nil)
	if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("open: %d %s %v", code, body, err)
	}
	for i, r := range recs {
		code, body, err := e.post(e.urls[0], "/api/v1/runs/"+run.RunID+"/records", r, nil)
		var eb api.ErrorBody
		switch {
		case err != nil:
			t.Fatal(err)
		case i < records && code != 201:
			t.Fatalf("record %d: %d %s", i, code, body)
		case i >= records && (code != 422 || json.Unmarshal(body, &eb) != nil || eb.Error.Code != api.CodeRunTooLarge || !strings.Contains(eb.Error.Message, "max_run_bytes")):
			t.Fatalf("record %d past the budget: %d %s; want 422 run_too_large naming max_run_bytes", i, code, body)
		}
	}
	code, doc, err := e.post(e.urls[0], "/api/v1/runs/"+run.RunID+"/close", nil, nil)
	if err != nil || code != 200 {
		t.Fatalf("close: %d %s %v", code, doc, err)
	}
	if rep, err := verify.Verify(doc, verify.Options{Trust: e.trust}); err != nil || rep.Verdict != "VALID" {
		t.Fatalf("VPEC: %s", rep.Verdict)
	}
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil || len(v.Records) != records || len(v.Gaps) != 2*records {
		t.Fatalf("VPEC: %d records, %d gaps, %v", len(v.Records), len(v.Gaps), err)
	}
	// The same VPEC without records and gaps is the header.
	v.Records, v.Gaps = []vpec.Record{}, []vpec.Gap{}
	head, err := document.MarshalIndent(v)
	if err != nil {
		t.Fatal(err)
	}
	per := (int64(len(doc)) - int64(len(head)) - bodies) / records
	t.Logf("VPEC %d bytes: header %d, bodies %d, %d bytes per record beyond its body (bound %d); limit %d",
		len(doc), len(head), bodies, per, server.VPECBytesPerRecord, srvLimit)
	if per >= server.VPECBytesPerRecord || int64(len(head)) >= server.VPECHeaderBytes || int64(len(doc)) > srvLimit {
		t.Errorf("the budget does not bound the VPEC")
	}
}

// TestMaxRecordsPerRun: the record past the maximum gets 422
// run_too_large naming max_records_per_run; a retry of a stored record is
// still a duplicate.
func TestMaxRecordsPerRun(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newStressEnv(t, []store.Store{st}, server.RunLimits{MaxRecords: 3})
	var run api.Run
	code, body, err := e.post(e.urls[0], "/api/v1/runs", api.OpenRunRequest{WorkflowID: "w"}, nil)
	if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("open: %d %s %v", code, body, err)
	}
	recs := chain(run.RunID, 4)
	for i, want := range []int{201, 201, 201, 422} {
		code, body, _ := e.post(e.urls[0], "/api/v1/runs/"+run.RunID+"/records", recs[i], nil)
		if code != want || (want == 422 && !strings.Contains(string(body), "max_records_per_run")) {
			t.Errorf("record %d: %d %s, want %d", i+1, code, body, want)
		}
	}
	if code, body, _ := e.post(e.urls[0], "/api/v1/runs/"+run.RunID+"/records", recs[0], nil); code != 200 {
		t.Errorf("retry of a stored record in a full run: %d %s", code, body)
	}
}
