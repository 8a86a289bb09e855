package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

// BenchmarkAppendRecords100 appends batches of 100 new records of about
// 600 bytes to one run, one batch at a time (AppendRecords: the batch API's
// store call); each batch is one commit with synchronous=FULL, so the time
// is the batch's statements plus one WAL fsync.
func BenchmarkAppendRecords100(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "svc.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: storetest.T0}); err != nil {
		b.Fatal(err)
	}
	if err := db.CreateRun(ctx, store.Run{ID: "run_1", OrgID: "org_a", OpenedAt: storetest.T0}); err != nil {
		b.Fatal(err)
	}
	seq := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		recs := make([]store.Record, 100)
		for i := range recs {
			seq++
			recs[i] = storetest.MakeRecord("run_1", seq, fmt.Sprintf("rec-%d", seq), 600)
		}
		b.StartTimer()
		dups, err := db.AppendRecords(ctx, "org_a", recs, store.Limits{})
		if err != nil || len(dups) != len(recs) {
			b.Fatalf("AppendRecords = %d, %v", len(dups), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/record")
}
