//go:build unix

package mirror

import (
	"errors"
	"os"
	"syscall"
)

// createNew makes the file name, which must not exist, 0o644 less the
// umask, open for writing. It calls open(2) and os.NewFile rather than
// os.OpenFile, which offers a regular file to the network poller (which
// refuses it) and sets and clears O_NONBLOCK: four system calls more for
// every page mirrored.
func createNew(name string) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o644)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case !errors.Is(err, syscall.EINTR):
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
}
