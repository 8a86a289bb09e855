//go:build unix

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// LockFile takes an exclusive, non-blocking flock on f; it fails with an
// error matching ErrLocked when another open file description (in any
// process) holds it. The lock goes with f's close or the process's end.
func LockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == syscall.EINTR:
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		}
		return err
	}
}

// UnlockFile releases LockFile's lock.
func UnlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// LockFileWait takes an exclusive flock on f, waiting for another holder
// to release it.
func LockFileWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
