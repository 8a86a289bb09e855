package backup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/loadgen"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/backup"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// benchRecords is the size of the store BenchmarkBackup backs up.
const benchRecords = 100000

// recordsDataDir makes a data directory whose database holds n realistic
// records (loadgen's: about 700 bytes each) in runs of 1,000.
func recordsDataDir(b *testing.B, n int) string {
	dir, err := os.MkdirTemp("", "svc-backup-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := fillDataDir(dir, n); err != nil {
		b.Fatal(err)
	}
	return dir
}

func fillDataDir(dir string, n int) error {
	ctx := context.Background()
	if _, err := server.LoadMaterial(dir); err != nil {
		return err
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	org, err := server.CreateOrg(ctx, st, "bench", server.TierStandard, time.Now())
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, n/1000+1)
	for r := 0; r < n/1000; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runID := names.NewID("run_")
			if err := st.CreateRun(ctx, store.Run{ID: runID, OrgID: org.ID, WorkflowID: "bench", Environment: string(vpec.Production),
				PolicySnapshotHash: "sha256:" + fmt.Sprintf("%064d", 0), OpenedAt: time.Now()}); err != nil {
				errs <- err
				return
			}
			prev := vpec.Genesis(runID)
			for seq := int64(1); seq <= 1000; seq++ {
				recs := []vpec.Record{loadgen.Record(runID, seq)}
				prev, _ = issue.Chain(prev, recs)
				body, _ := json.Marshal(recs[0])
				if _, err := st.AppendRecord(ctx, org.ID, store.Record{RunID: runID, RecordID: recs[0].RecordID, Sequence: seq,
					ChainHash: recs[0].ChainHash, Body: body}, store.Limits{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// BenchmarkBackup backs up a data directory of 100,000 records (and
// restores it) and reports the sizes: the database with its WAL, and the
// backup.
//
//	go test -run '^$' -bench Backup -benchtime 3x ./pkg/service/backup
func BenchmarkBackup(b *testing.B) {
	dir := recordsDataDir(b, benchRecords)
	var dbBytes int64
	for _, f := range []string{"svc.db", "svc.db-wal"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			dbBytes += st.Size()
		}
	}
	b.Run("create", func(b *testing.B) {
		var size int64
		for i := 0; i < b.N; i++ {
			out := filepath.Join(b.TempDir(), "b.tar.gz")
			if _, err := backup.CreateFile(context.Background(), out, backup.Options{DataDir: dir}); err != nil {
				b.Fatal(err)
			}
			st, _ := os.Stat(out)
			size = st.Size()
		}
		b.ReportMetric(float64(size), "backup-bytes")
		b.ReportMetric(float64(dbBytes), "db-bytes")
		b.ReportMetric(float64(benchRecords), "records")
	})
	b.Run("restore", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "b.tar.gz")
		if _, err := backup.CreateFile(context.Background(), out, backup.Options{DataDir: dir}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := backup.RestoreFile(context.Background(), out, backup.RestoreOptions{DataDir: filepath.Join(b.TempDir(), "r")}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("snapshot-only", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := backup.Snapshot(context.Background(), filepath.Join(dir, "svc.db"), filepath.Join(b.TempDir(), "s.db")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copy-baseline", func(b *testing.B) {
		// The same bytes copied with io.Copy: what any file-level backup
		// pays at least.
		for i := 0; i < b.N; i++ {
			src, _ := os.Open(filepath.Join(dir, "svc.db"))
			dst, _ := os.Create(filepath.Join(b.TempDir(), "copy.db"))
			io.Copy(dst, src)
			dst.Sync()
			src.Close()
			dst.Close()
		}
	})
}
