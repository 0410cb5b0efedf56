//go:build unix

package crawler

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// freeSpace returns the bytes an unprivileged write may still use in dir's
// file system, and fails when the file system or dir may not be written
// (read-only, no permission).
func freeSpace(dir string) (int64, error) {
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return 0, fmt.Errorf("%s: cannot be written: %w", dir, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("%s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
