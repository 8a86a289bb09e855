package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// batchSeedRecord is a valid record body for the batch fuzz seeds.
func batchSeedRecord(seq int, id string) string {
	return fmt.Sprintf(`{"record_id":%q,"sequence":%d,"check":"pii","manifest_id":"sha256:%s","check_result":"pass","proof_level":"execution","commitment_algorithm":"sha256","commitment_hash":"sha256:%s","visibility":"opaque","recorded_at":"2026-01-01T00:00:00Z","chain_hash":"sha256:%s"}`,
		id, seq, strings.Repeat("ab", 32), strings.Repeat("cd", 32), strings.Repeat("ef", 32))
}

// FuzzParseBatch feeds arbitrary bodies to the batch append's parser
// (parseBatch): it never panics; what it accepts is 1 to
// api.MaxBatchRecords records in strictly increasing sequence with
// distinct ids, each with its own parse tree that decodes to that record;
// what it refuses is a 400 or 413 *httpError.
func FuzzParseBatch(f *testing.F) {
	one, two := batchSeedRecord(1, "rec_a"), batchSeedRecord(2, "rec_b")
	for _, s := range []string{
		`{"records":[` + one + `]}`,
		`{"records":[` + one + `,` + two + `]}`,
		`{"records":[` + two + `,` + one + `]}`,
		`{"records":[` + one + `,` + one + `]}`,
		`{"records":[]}`, `{"records":null}`, `{}`, `[]`, `{"records":[{}]}`,
		`{"records":[` + one + `],"records":[` + two + `]}`,
		`{"records":[` + one + `]} x`,
		`{"records":[` + strings.Repeat(`[`, 100) + `]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		batch, trees, err := parseBatch(body)
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) || (he.status != http.StatusBadRequest && he.status != http.StatusRequestEntityTooLarge) {
				t.Fatalf("refused with %v (%T), want a 400 or 413", err, err)
			}
			return
		}
		n := len(batch.Records)
		if n < 1 || n > api.MaxBatchRecords || len(trees) != n {
			t.Fatalf("accepted %d records with %d trees", n, len(trees))
		}
		ids := map[string]bool{}
		for i, rec := range batch.Records {
			if ids[rec.RecordID] || (i > 0 && rec.Sequence <= batch.Records[i-1].Sequence) {
				t.Fatalf("accepted record %d: id %q repeated or sequence %d out of order", i, rec.RecordID, rec.Sequence)
			}
			ids[rec.RecordID] = true
			var again vpec.Record
			if _, err := document.Parse(trees[i].Canonical(), &again); err != nil || again.RecordID != rec.RecordID || again.Sequence != rec.Sequence {
				t.Fatalf("record %d's tree decodes to %q/%d (%v), want %q/%d", i, again.RecordID, again.Sequence, err, rec.RecordID, rec.Sequence)
			}
		}
	})
}
