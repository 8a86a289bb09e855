//go:build unix

package client

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive, non-blocking flock on f: a second Pipeline
// (in any process) on the same queue file fails instead of interleaving.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
