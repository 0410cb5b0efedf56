package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A damaged crawl.db is a runtime failure (exit 1) with a message that
// says what to do, never a panic or a signal (which exit 2, the code of a
// bad config).
func TestDamagedStateExits1(t *testing.T) {
	srv := smallSite(t)
	dir := t.TempDir()
	if _, stderr, code := runCmd(t, "", "discover", "--delay", "0", "--state-dir", dir, srv.URL+"/"); code != 0 {
		t.Fatalf("first run: exit %d; stderr:\n%s", code, stderr)
	}
	db := filepath.Join(dir, "crawl.db")
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{len(data) / 3, len(data)/2 + 100, 0} {
		if err := os.WriteFile(db, data[:size], 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCmd(t, "", "discover", "--delay", "0", "--state-dir", dir, srv.URL+"/")
		if code != 1 || !strings.Contains(stderr, db+" is damaged: ") || !strings.Contains(stderr, "move it away to start afresh") {
			t.Errorf("crawl.db cut to %d of %d bytes: exit %d, stderr %q; want exit 1 and %q", size, len(data), code, stderr, db+" is damaged: …")
		}
	}
}
