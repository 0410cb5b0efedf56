package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// discoverDirPrefix starts the name of the state_dir an audit makes for
// itself when not given --state-dir: crawler-discover-PID-RANDOM.
const discoverDirPrefix = "crawler-discover-"

// newDiscoverDir makes an audit's temporary state_dir in tmp, named for
// this process, after removing those that audits killed before they could
// remove their own left behind (SIGKILL cannot be caught).
//
// Another design was to unlink the directory as soon as the database was
// open, leaving nothing behind whatever happens, but that relies on the
// engine never opening a path in state_dir again, which is the engine's
// business, not this command's.
func newDiscoverDir(tmp string, log *slog.Logger) (string, error) {
	for _, dir := range removeStaleDiscoverDirs(tmp, processAlive) {
		log.Info("removed the state of an audit that was killed", "dir", dir)
	}
	return os.MkdirTemp(tmp, discoverDirPrefix+strconv.Itoa(os.Getpid())+"-")
}

// removeStaleDiscoverDirs removes the directories of tmp named
// crawler-discover-PID-… that are this user's and whose process is gone,
// and returns them. Anything else is left alone: another user's, a name of
// another form (an earlier build's, with no PID in it), a symbolic link,
// and a directory whose PID is alive, even if that PID was reused by
// another program since, as no PID can be told apart from a reused one.
func removeStaleDiscoverDirs(tmp string, alive func(pid int) bool) []string {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		pidText, rest, ok := strings.Cut(strings.TrimPrefix(e.Name(), discoverDirPrefix), "-")
		if !strings.HasPrefix(e.Name(), discoverDirPrefix) || !ok || rest == "" || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// processAlive reports whether a process with this PID exists (signal 0
// checks without sending; EPERM means it exists but is another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
