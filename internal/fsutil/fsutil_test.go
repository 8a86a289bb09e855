package fsutil_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/internal/fsutil"
)

func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key.pem")
	if err := fsutil.WriteNew(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteNew(p, []byte("two"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second write: %v, want fs.ErrExist", err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "one" || st.Mode().Perm() != 0o600 {
		t.Fatalf("content %q mode %v", b, st.Mode())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
	if err := fsutil.WriteNew(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	if err := fsutil.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}
