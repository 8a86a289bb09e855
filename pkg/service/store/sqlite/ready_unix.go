//go:build linux || darwin || freebsd

package sqlite

import "syscall"

// freeBytes is the space available to an unprivileged user in the
// filesystem holding dir.
func freeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
