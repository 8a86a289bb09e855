package logwriter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// writerLock is the file in a POSIX log's private state directory that the
// process writing the log holds an exclusive flock(2) on.
const writerLock = ".state/svc-writer.lock"

// lockWriter takes the POSIX log's writer lock, or fails with ErrLogBusy.
//
// Tessera's POSIX backend serialises processes with fcntl record locks,
// which belong to a process, not to a goroutine: when one process's
// sequencer holds one of its locks and its publisher waits for another
// that a second process holds while the second waits for the first's,
// Linux reports a deadlock (EDEADLK) that is none, and Tessera panics.
// Two appending processes on one directory can therefore crash, so svc
// lets one process write a POSIX log (several share the MySQL backend).
// flock(2) locks are separate from fcntl locks and held until Close or
// the process's death.
func lockWriter(dir string) (func(), error) {
	p := filepath.Join(dir, writerLock)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		b, _ := os.ReadFile(p)
		f.Close()
		holder := strings.TrimSpace(string(b))
		if holder == "" {
			holder = "unknown"
		}
		return nil, fmt.Errorf("%w in %s (process %s): one process writes a POSIX log; several processes share a log on the MySQL backend", ErrLogBusy, dir, holder)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
