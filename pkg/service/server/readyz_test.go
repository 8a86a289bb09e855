package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// /readyz answers 503 naming the reason while the database's directory is
// read-only or short of free space, and 200 again once it is not.
func TestReadyzDataDirectory(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mat, err := server.LoadMaterial(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, url: startOn(t, db, mat)}
	ready := func(wantCode int, wantDetail string) {
		t.Helper()
		var h api.Health
		code, body := e.do("GET", "/readyz", "", nil, &h)
		if code != wantCode || !strings.Contains(h.Detail, wantDetail) || strings.Contains(h.Detail, dir) {
			t.Fatalf("/readyz: %d %s; want %d with detail containing %q and no path", code, body, wantCode, wantDetail)
		}
	}
	ready(200, "")
	db.SetMinFreeBytes(1 << 62)
	ready(503, "free disk space below the readiness threshold")
	db.SetMinFreeBytes(sqlite.DefaultMinFreeBytes)
	ready(200, "")

	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil { // root: chmod does not stop it
		f.Close()
		os.Remove(filepath.Join(dir, "probe"))
		if err := exec.Command("chattr", "+i", dir).Run(); err != nil {
			t.Skipf("cannot make the directory read-only for this user: %v", err)
		}
		defer exec.Command("chattr", "-i", dir).Run()
	}
	ready(503, "database not writable")
}
