//go:build unix

package warc

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an advisory lock on f without waiting: the writer holds
// one on the file it writes, so that another writer's start (indexMissing)
// leaves that file alone. It reports false when another open file holds
// the lock; a file system that has no locks counts as unlocked.
func lockFile(f *os.File) bool {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return !errors.Is(err, syscall.EWOULDBLOCK)
}
