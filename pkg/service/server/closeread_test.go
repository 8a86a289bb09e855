package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// A close cuts each record's chain input out of its stored bytes
// (closeread.go); a stored record that is not in canonical form (a store
// written by something else, a hand repair) still has its chain checked
// over its canonical form, as the verifier checks it: the chain holds,
// and the VPEC reports no break that is not there. Watched fail (one
// chain_break gap, chain_intact false) with issue's fallback removed.
func TestCloseNonCanonicalStoredRecord(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		spoil  func(seq int64, body []byte) []byte
		intact bool
	}{
		{"canonical", func(_ int64, b []byte) []byte { return b }, true},
		{"space after a colon", func(seq int64, b []byte) []byte {
			if seq == 3 {
				return bytes.Replace(b, []byte(`"check":"`), []byte(`"check": "`), 1)
			}
			return b
		}, true},
		{"a changed record", func(seq int64, b []byte) []byte {
			if seq == 3 {
				return bytes.Replace(b, []byte(`"check_result":"pass"`), []byte(`"check_result":"fail"`), 1)
			}
			return b
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "svc.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			e := newStressEnv(t, []store.Store{st})
			var run api.Run
			code, body, err := e.post(e.urls[0], "/api/v1/runs", api.OpenRunRequest{WorkflowID: "spoilt"}, nil)
			if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
				t.Fatalf("open: %d %s %v", code, body, err)
			}
			for _, rec := range chain(run.RunID, 5) {
				b, err := canonical.Marshal(rec)
				if err != nil {
					t.Fatal(err)
				}
				b = tc.spoil(rec.Sequence, b)
				if err := appendRaw(ctx, st, run.OrgID, store.Record{RunID: run.RunID, RecordID: rec.RecordID, Sequence: rec.Sequence, ChainHash: rec.ChainHash, Body: b}); err != nil {
					t.Fatal(err)
				}
			}
			code, body, err = e.post(e.urls[0], "/api/v1/runs/"+run.RunID+"/close", nil, nil)
			if err != nil || code != 200 {
				t.Fatalf("close: %d %s %v", code, body, err)
			}
			var v struct {
				ChainIntact bool `json:"chain_intact"`
				Gaps        []struct {
					GapType string `json:"gap_type"`
				} `json:"gaps"`
			}
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			breaks := 0
			for _, g := range v.Gaps {
				if g.GapType == "chain_break" {
					breaks++
				}
			}
			if v.ChainIntact != tc.intact || (breaks == 0) != tc.intact {
				t.Fatalf("chain_intact %v with %d chain_break gaps, want intact %v", v.ChainIntact, breaks, tc.intact)
			}
		})
	}
}
