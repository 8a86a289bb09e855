package logwriter_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/service/logwriter"
)

// TestBackupKindOfARealLog: every file of a real Tessera POSIX log past
// one full tile (300 entries) is classified: the checkpoint and the state
// are volatile, full tiles and bundles stable, partial ones volatile, and
// only locks are skipped.
func TestBackupKindOfARealLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := tlogtest.OpenLog(t, dir, "log", nil)
	const n = 300
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := l.Append(ctx, tlogtest.Leaf(t, tlogtest.Entry("b", i, "org-b", "wf", true))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, err := l.AwaitReceipt(ctx, n-1); err != nil {
		t.Fatal(err)
	}
	count := map[logwriter.FileKind][]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		k := logwriter.BackupKind(rel)
		count[k] = append(count[k], rel)
		if k == logwriter.FileSkip && !strings.HasSuffix(rel, ".lock") {
			t.Errorf("%s of a quiet log is skipped; only locks should be", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		kind logwriter.FileKind
		path string
	}{
		{logwriter.FileVolatile, "checkpoint"},
		{logwriter.FileVolatile, ".state/treeState"},
		{logwriter.FileStable, "tile/0/000"},
		{logwriter.FileStable, "tile/entries/000"},
		{logwriter.FileVolatile, "tile/0/001.p/44"},
		{logwriter.FileVolatile, "tile/entries/001.p/44"},
	} {
		found := false
		for _, p := range count[want.kind] {
			found = found || p == want.path
		}
		if !found {
			t.Errorf("%s not found as kind %d; the log holds %v", want.path, want.kind, count)
		}
	}
}

// TestBackupKind: the temporary files Tessera writes beside a file (its
// name and a decimal number) and malformed tile paths are skipped.
func TestBackupKind(t *testing.T) {
	for _, c := range []struct {
		path string
		want logwriter.FileKind
	}{
		{"checkpoint", logwriter.FileVolatile},
		{"checkpoint1234567", logwriter.FileSkip},
		{".state/treeState", logwriter.FileVolatile},
		{".state/treeState987", logwriter.FileSkip},
		{".state/gcState", logwriter.FileVolatile},
		{".state/treeState.lock", logwriter.FileSkip},
		{".state/svc-writer.lock", logwriter.FileSkip},
		{"tile/0/000", logwriter.FileStable},
		{"tile/0/0001234", logwriter.FileSkip},
		{"tile/63/x001/x002/003", logwriter.FileStable},
		{"tile/64/000", logwriter.FileSkip},
		{"tile/01/000", logwriter.FileSkip},
		{"tile/entries/x001/002", logwriter.FileStable},
		{"tile/entries/x001/0021", logwriter.FileSkip},
		{"tile/entries/001/002", logwriter.FileSkip},
		{"tile/1/000.p/255", logwriter.FileVolatile},
		{"tile/1/000.p/2551", logwriter.FileSkip},
		{"tile/1/000.p/256", logwriter.FileSkip},
		{"tile/1/000.p/0", logwriter.FileSkip},
		{"tile/1/000.p/05", logwriter.FileSkip},
		{"tile/1/000.p", logwriter.FileSkip},
		{"tile/entries", logwriter.FileSkip},
		{"other", logwriter.FileSkip},
	} {
		if got := logwriter.BackupKind(c.path); got != c.want {
			t.Errorf("BackupKind(%q) = %d, want %d", c.path, got, c.want)
		}
	}
}
