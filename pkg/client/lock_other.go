//go:build !unix

package client

import "os"

// lockFile is a no-op where flock is unavailable; the in-process registry
// of open queue files still refuses a second Pipeline of the same process.
func lockFile(f *os.File) error { return nil }

func unlockFile(f *os.File) {}
