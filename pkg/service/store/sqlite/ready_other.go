//go:build !(linux || darwin || freebsd)

package sqlite

import "errors"

// freeBytes is not measured on this platform: the free-space check of
// Ping is skipped.
func freeBytes(dir string) (uint64, error) { return 0, errors.ErrUnsupported }
