package cli_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/server/setup"
)

// TestServeWaitingForSetupStops: a svc serve that waits for another
// process's setup of its data directory (setup.lock held) does not serve,
// and SIGTERM stops it at once, exit 4 (failure), naming the wait and the
// holder's pid.
func TestServeWaitingForSetupStops(t *testing.T) {
	data := t.TempDir()
	unlock, err := setup.LockSetup(context.Background(), data, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command("svc", "serve", "--data-dir", data, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--no-tlog")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("svc serve exited while another process held %s: %v\n%s", setup.SetupLockFile, err, &stderr)
	case <-time.After(1500 * time.Millisecond):
	}
	if _, err := os.Stat(addrFile); err == nil {
		t.Fatal("svc serve listens while another process sets its data directory up")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 4 {
			t.Fatalf("exit: %v\n%s", err, &stderr)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("svc serve did not stop on SIGTERM while waiting for %s", setup.SetupLockFile)
	}
	if out := stderr.String(); !strings.Contains(out, "another svc serve is still setting up the data directory") || !strings.Contains(out, "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("stderr does not name the wait and its holder:\n%s", out)
	}
}
