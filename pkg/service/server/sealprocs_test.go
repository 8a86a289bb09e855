package server_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/postgres"
)

// Environment of a child server process (TestStressServerProcess).
const (
	childDSN  = "SVC_STRESS_CHILD_DSN"
	childData = "SVC_STRESS_CHILD_DATA"
	childAddr = "SVC_STRESS_CHILD_ADDR"
)

// TestStressServerProcess is not a test on its own: run by
// TestSealAtomicPostgresTwoProcesses as a child process (this test binary
// re-executed), it serves the API on a loopback port from its own
// PostgreSQL connections and key material read from a shared data
// directory, writes its address to a file, and serves until killed.
func TestStressServerProcess(t *testing.T) {
	dsn := os.Getenv(childDSN)
	if dsn == "" {
		t.Skip("runs only as a child of TestSealAtomicPostgresTwoProcesses")
	}
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	mat, err := server.ReadMaterial(os.Getenv(childData))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tmp := os.Getenv(childAddr) + ".tmp"
	if err := os.WriteFile(tmp, []byte("http://"+ln.Addr().String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, os.Getenv(childAddr)); err != nil {
		t.Fatal(err)
	}
	t.Fatal(http.Serve(ln, srv)) // until the parent kills the process
}

// TestSealAtomicPostgresTwoProcesses: the seal stress against two server
// processes (separate OS processes, each with its own connections) on one
// PostgreSQL database: records streamed through both while the run is
// closed through one; every acknowledged record is in the VPEC.
func TestSealAtomicPostgresTwoProcesses(t *testing.T) {
	sdsn := pgtest.New(t, "h1a_seal_").DSN
	ctx := context.Background()
	st, err := postgres.Open(ctx, sdsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dir := filepath.Join(t.TempDir(), "data")
	mat, err := server.LoadMaterial(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := &stressEnv{trust: mat.Trust}
	for i := range 2 {
		addrFile := filepath.Join(t.TempDir(), "addr")
		cmd := exec.Command(os.Args[0], "-test.run", "^TestStressServerProcess$")
		cmd.Env = append(os.Environ(), childDSN+"="+sdsn, childData+"="+dir, childAddr+"="+addrFile)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		var url []byte
		for try := 0; try < 300 && len(url) == 0; try++ {
			time.Sleep(20 * time.Millisecond)
			url, _ = os.ReadFile(addrFile)
		}
		if !strings.HasPrefix(string(url), "http://127.0.0.1:") {
			t.Fatalf("server process %d did not start (address %q)", i, url)
		}
		e.urls = append(e.urls, string(url))
	}
	if _, err := server.CreateOrg(ctx, st, "stress", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e.key, _, err = server.CreateAPIKey(ctx, st, "stress", vpec.Production, time.Now()); err != nil {
		t.Fatal(err)
	}
	runSealStress(t, e)
}
