//go:build !unix

package mirror

import "os"

// createNew makes the file name, which must not exist, 0o644 less the
// umask, open for writing.
func createNew(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}
