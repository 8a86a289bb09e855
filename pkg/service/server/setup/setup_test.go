package setup_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://svc:secret@db:5432/svc":    "postgres://svc:****@db:5432/svc",
		"postgresql://svc@db/svc":              "postgresql://svc@db/svc",
		"postgres://db/svc":                    "postgres://db/svc",
		"postgres://u:p:q@h/d":                 "postgres://u:****@h/d",
		"mysql://root:hunter2@localhost/x":     "mysql://root:****@localhost/x",
		"not a dsn":                            "not a dsn",
		"@":                                    "@",
		"postgres://svc:s3cr3t@db/svc?ssl=off": "postgres://svc:****@db/svc?ssl=off",
	} {
		if got := setup.RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	tests := []struct {
		name    string
		o       setup.StoreOptions
		want    error
		created bool
	}{
		{"unsupported dsn, password hidden", setup.StoreOptions{DSN: "mysql://root:hunter2@h/x"}, setup.ErrUnsupportedDSN, false},
		{"no database, no create", setup.StoreOptions{DataDir: dir}, setup.ErrNoDatabase, false},
		{"created", setup.StoreOptions{DataDir: dir, Create: true}, nil, true},
		{"existing", setup.StoreOptions{DataDir: dir}, nil, false},
		{"existing, create allowed", setup.StoreOptions{DataDir: dir, Create: true}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := setup.OpenStore(ctx, tc.o)
			if tc.want != nil {
				if !errors.Is(err, tc.want) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("err %v, want %v without the password", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if st.Created != tc.created || st.Where != "sqlite "+filepath.Join(dir, setup.SQLiteFile) {
				t.Errorf("created %v where %q", st.Created, st.Where)
			}
		})
	}
	fresh := filepath.Join(t.TempDir(), "typo")
	if _, err := setup.OpenStore(ctx, setup.StoreOptions{DataDir: fresh}); !errors.Is(err, setup.ErrNoDatabase) {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("a refused open made the directory")
	}
}

func TestLockDataDir(t *testing.T) {
	dir := t.TempDir()
	unlock, err := setup.LockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = setup.LockDataDir(dir)
	var le *setup.LockedError
	if !errors.Is(err, setup.ErrLocked) || !errors.As(err, &le) || le.PID != strconv.Itoa(os.Getpid()) || le.Dir != dir {
		t.Fatalf("second lock: %v", err)
	}
	if !strings.Contains(err.Error(), "(pid "+le.PID+") is serving "+dir) {
		t.Errorf("message %q", err)
	}
	unlock()
	if b, _ := os.ReadFile(filepath.Join(dir, setup.LockFile)); len(b) != 0 {
		t.Errorf("the pid stays after unlock: %q", b)
	}
	unlock, err = setup.LockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock()
}

// TestLockSetup: a second LockSetup on a directory waits for the first to
// release it; one that waits too long, or whose context ends, fails with
// ErrSetupWait naming the holder's pid; unlock may be called twice.
func TestLockSetup(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	unlock, err := setup.LockSetup(ctx, dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pid := "pid " + strconv.Itoa(os.Getpid())
	if _, err := setup.LockSetup(ctx, dir, 50*time.Millisecond); !errors.Is(err, setup.ErrSetupWait) || !strings.Contains(err.Error(), pid) {
		t.Fatalf("held: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := setup.LockSetup(cctx, dir, time.Minute); !errors.Is(err, setup.ErrSetupWait) || !errors.Is(err, context.Canceled) {
		t.Fatalf("context ended: %v", err)
	}
	got := make(chan error, 1)
	released := make(chan struct{})
	go func() {
		u, err := setup.LockSetup(ctx, dir, time.Minute)
		select {
		case <-released:
		default:
			err = errors.New("took the lock before it was released")
		}
		if u != nil {
			u()
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond)
	close(released)
	unlock()
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, setup.SetupLockFile)); len(b) != 0 {
		t.Errorf("the pid stays after unlock: %q", b)
	}
}

func TestTimestamperAndRoots(t *testing.T) {
	m, err := server.LoadMaterial(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ts := setup.Timestamper(nil, false, m.TSA, quiet); ts != m.TSA {
		t.Errorf("no URL: %T, want the built-in TSA", ts)
	}
	if c, ok := setup.Timestamper([]string{"http://127.0.0.1:1/a", "http://127.0.0.1:1/b"}, false, m.TSA, quiet).(timestamp.Chain); !ok || len(c) != 2 {
		t.Errorf("two URLs: %#v, want a chain of two", c)
	}
	if _, ok := setup.Timestamper([]string{"http://127.0.0.1:1/a"}, true, m.TSA, quiet).(*timestamp.Fallback); !ok {
		t.Error("fallback: not a *timestamp.Fallback")
	}

	dir := t.TempDir()
	other, err := server.LoadMaterial(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "root.pem")
	os.WriteFile(good, other.Trust.Marshal(), 0o644)
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not PEM"), 0o644)
	before := len(m.Trust.Roots())
	if err := setup.AddTSARoots(m, []string{filepath.Join(dir, "missing.pem")}); err == nil {
		t.Error("a missing file was accepted")
	}
	if err := setup.AddTSARoots(m, []string{bad}); err == nil {
		t.Error("a file without certificates was accepted")
	}
	if err := setup.AddTSARoots(m, []string{good}); err != nil {
		t.Fatal(err)
	}
	if len(m.Trust.Roots()) <= before {
		t.Error("no root added")
	}
}

func TestServe(t *testing.T) {
	if err := setup.Serve(context.Background(), http.NotFoundHandler(), setup.HTTP{Addr: "127.0.0.1:-1"}, quiet); !errors.Is(err, setup.ErrListen) {
		t.Fatalf("bad address: %v", err)
	}
	refuse := errors.New("refused")
	if err := setup.Serve(context.Background(), http.NotFoundHandler(), setup.HTTP{Addr: "127.0.0.1:0",
		Listening: func(net.Addr) error { return refuse }}, quiet); !errors.Is(err, refuse) {
		t.Fatalf("Listening error: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	go func() {
		done <- setup.Serve(ctx, h, setup.HTTP{Addr: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second,
			Listening: func(a net.Addr) error { addrc <- a; return nil }}, quiet)
	}()
	addr := <-addrc
	resp, err := http.Get("http://" + addr.String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Fatalf("body %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	if _, err := http.Get("http://" + addr.String() + "/"); err == nil {
		t.Error("still serving after stop")
	}
}
