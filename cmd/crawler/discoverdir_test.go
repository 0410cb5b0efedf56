package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func mkdirs(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(root, n, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, n, "sub", "crawl.db"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRemoveStaleDiscoverDirs(t *testing.T) {
	tmp := t.TempDir()
	const dead, live = 999001, 999002
	self := strconv.Itoa(os.Getpid())
	mkdirs(t, tmp,
		"crawler-discover-999001-123", // its process is gone: removed
		"crawler-discover-999001-456", // so is this one's
		"crawler-discover-999002-789", // alive: kept
		"crawler-discover-"+self+"-1", // ours: kept
		"crawler-discover-3847561",    // an earlier build's name, no PID: kept
		"crawler-discover-999001-",    // not a name MkdirTemp makes: kept
		"crawler-discover-x-1",        // kept
		"other-999001-1",              // kept
	)
	// A symbolic link with a stale name is not followed.
	target := t.TempDir()
	mkdirs(t, target, "keep")
	if err := os.Symlink(target, filepath.Join(tmp, "crawler-discover-999001-link")); err != nil {
		t.Fatal(err)
	}
	alive := func(pid int) bool { return pid != dead }
	got := removeStaleDiscoverDirs(tmp, alive)
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	slices.Sort(got)
	if want := []string{"crawler-discover-999001-123", "crawler-discover-999001-456"}; !slices.Equal(got, want) {
		t.Errorf("removed %q, want %q", got, want)
	}
	entries, _ := os.ReadDir(tmp)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) != 7 {
		t.Errorf("left %q, want the 7 others", left)
	}
	if _, err := os.Stat(filepath.Join(target, "keep", "sub", "crawl.db")); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}
	if !processAlive(os.Getpid()) {
		t.Error("processAlive(own PID) = false")
	}
}

// An audit run after one that was killed removes what the killed one
// left, and leaves nothing of its own.
func TestDiscoverRemovesAKilledAuditsState(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// A PID above the kernel's pid_max (at most 2^22) is no process's.
	mkdirs(t, tmp, "crawler-discover-99999999-1")
	srv := smallSite(t)
	if _, stderr, code := runCmd(t, "", "discover", "--delay", "0", srv.URL+"/"); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
}
