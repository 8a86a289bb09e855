package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestCloseSpansChunks: a close reads its records in chunks of at most
// 256 records or 1 MiB of bodies, whose buffers grow as they fill and are
// reused for later chunks. A run that fills chunks both ways (300 small
// records, then 300 of about 12 KB each: a chunk every ~85 records)
// closes into a VPEC that verifies and holds every record, in order, as
// sent.
func TestCloseSpansChunks(t *testing.T) {
	e := newEnvBody(t, 4<<20)
	run := e.open(e.keyB)
	recs := chain(run.RunID, 600)
	for i := 300; i < len(recs); i++ {
		recs[i].Details = map[string]any{"pad": strings.Repeat(fmt.Sprint(i%10), 12000)}
	}
	if _, err := issue.Chain(vpec.Genesis(run.RunID), recs); err != nil {
		t.Fatal(err)
	}
	for at := 0; at < len(recs); at += 100 {
		if code, body := e.do("POST", batchPath(run.RunID), e.keyB, api.RecordBatch{Records: recs[at : at+100]}, nil); code != 201 {
			t.Fatalf("batch at %d: %d %s", at, code, body)
		}
	}
	code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
	if code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	if rep := e.verify(doc); !rep.Valid {
		t.Fatalf("VPEC: %s", rep.Verdict)
	}
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Records) != len(recs) {
		t.Fatalf("the VPEC holds %d records, want %d", len(v.Records), len(recs))
	}
	for i, r := range v.Records {
		if r.RecordID != recs[i].RecordID || r.ChainHash != recs[i].ChainHash {
			t.Fatalf("record %d is %s %s, want %s %s", i, r.RecordID, r.ChainHash, recs[i].RecordID, recs[i].ChainHash)
		}
	}
}
