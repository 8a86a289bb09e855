package sqlite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

// The database, its WAL and its shared-memory file are readable by the
// owner only, whatever the umask; an existing file keeps its mode.
func TestFileModes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "svc.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateOrg(context.Background(), store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"svc.db", "svc.db-wal", "svc.db-shm"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, st.Mode().Perm())
		}
	}

	existing := filepath.Join(t.TempDir(), "kept.db")
	if err := os.WriteFile(existing, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(existing, 0o640)
	db2, err := Open(context.Background(), existing)
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
	if st, _ := os.Stat(existing); st.Mode().Perm() != 0o640 {
		t.Errorf("an existing database's mode changed to %v", st.Mode().Perm())
	}
}

// makeReadOnly makes dir unwritable, also for root (chattr +i), or skips.
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	probe := filepath.Join(dir, "probe")
	if f, err := os.Create(probe); err != nil {
		return // read-only for this user
	} else {
		f.Close()
		os.Remove(probe)
	}
	if err := exec.Command("chattr", "+i", dir).Run(); err != nil {
		t.Skipf("cannot make %s read-only for this user (root without chattr): %v", dir, err)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
	if f, err := os.Create(probe); err == nil {
		f.Close()
		os.Remove(probe)
		t.Skipf("cannot make %s read-only for this user", dir)
	}
}

// Ping (readiness) fails, naming the reason, when the database's
// directory cannot be written or has less free space than the threshold,
// and recovers when the condition ends.
func TestPingReadiness(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping on a writable directory: %v", err)
	}
	t.Run("disk full", func(t *testing.T) {
		db.SetMinFreeBytes(1 << 62)
		defer db.SetMinFreeBytes(DefaultMinFreeBytes)
		if err := db.Ping(ctx); !errors.Is(err, ErrLowDisk) {
			t.Fatalf("Ping with less free space than the threshold: %v, want ErrLowDisk", err)
		}
	})
	t.Run("read-only directory", func(t *testing.T) {
		makeReadOnly(t, dir)
		if err := db.Ping(ctx); !errors.Is(err, ErrNotWritable) || !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("Ping on a read-only directory: %v, want ErrNotWritable (permission)", err)
		}
	})
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping after the directory is writable again: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "svc.db" && e.Name() != "svc.db-wal" && e.Name() != "svc.db-shm" {
			t.Errorf("Ping left %s behind", e.Name())
		}
	}
}
