//go:build !unix

package fsutil

import "os"

// LockFile is a no-op where flock does not exist.
func LockFile(f *os.File) error { return nil }

// UnlockFile is a no-op where flock does not exist.
func UnlockFile(f *os.File) {}

// LockFileWait is a no-op where flock does not exist.
func LockFileWait(f *os.File) error { return nil }
