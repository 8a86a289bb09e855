package backup_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/service/backup"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestBackupUnderLogWrites: backups taken while a real Tessera log in the
// data directory is appended to (new batches, partial tiles, the
// checkpoint republished every 100 ms) all succeed, and a restored log
// is one consistent state: its tree state covers its checkpoint, and the
// tiles cover the checkpoint, so a receipt for the checkpoint's last
// entry is built from the restored files.
func TestBackupUnderLogWrites(t *testing.T) {
	ctx := context.Background()
	dir := newDataDir(t, 1)
	tiles := filepath.Join(dir, server.LogDir, server.LogTilesDir)
	l := tlogtest.OpenLog(t, tiles, "log", nil)
	var appended atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := l.Append(ctx, tlogtest.Leaf(t, tlogtest.Entry("w"+strconv.Itoa(w), i, "org-b", "wf", true))); err != nil {
					t.Error(err)
					return
				}
				appended.Add(1)
			}
		})
	}
	var last bytes.Buffer
	for n := range 5 {
		for appended.Load() < int64(100*(n+1)) {
			if t.Failed() {
				t.FailNow()
			}
		}
		last.Reset()
		if _, err := backup.Create(ctx, &last, backup.Options{DataDir: dir}); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("backup %d while the log is written (%d entries): %v", n, appended.Load(), err)
		}
	}
	close(stop)
	wg.Wait()

	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := backup.Restore(ctx, &last, backup.RestoreOptions{DataDir: restored}); err != nil {
		t.Fatal(err)
	}
	rtiles := filepath.Join(restored, server.LogDir, server.LogTilesDir)
	cp, err := os.ReadFile(filepath.Join(rtiles, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(cp), "\n", 3)
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || size == 0 {
		t.Fatalf("restored checkpoint:\n%s", cp)
	}
	for _, f := range []string{".state/treeState.lock", ".state/svc-writer.lock"} {
		if _, err := os.Stat(filepath.Join(rtiles, f)); err == nil {
			t.Errorf("the backup carried the lock %s", f)
		}
	}
	rl := tlogtest.OpenLog(t, rtiles, "log", nil)
	rc, err := rl.Receipt(ctx, size-1)
	if err != nil {
		t.Fatalf("receipt of entry %d, the restored checkpoint's last, from the restored log: %v", size-1, err)
	}
	if rc.Checkpoint.Size < size {
		t.Errorf("restored log's checkpoint has size %d, the backup's %d: it shrank", rc.Checkpoint.Size, size)
	}
	t.Logf("%d entries appended during 5 backups; the last carried a checkpoint of %d", appended.Load(), size)
}
