package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The demo writes a link graph beside its inventory, and its last line
// is a report command that works whole.
func TestDemoEndsWithAWorkingReportCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	_, stderr, code := runCmdWithin(t, time.Minute, "demo", "--addr", "127.0.0.1:0", "--dir", dir)
	if code != 0 {
		t.Fatalf("demo: exit %d:\n%s", code, stderr)
	}
	if fi, err := os.Stat(filepath.Join(dir, "links.jsonl")); err != nil || fi.Size() == 0 {
		t.Fatalf("demo wrote no link graph: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	want := "report --urls " + filepath.Join(dir, "urls.jsonl") + " --links " + filepath.Join(dir, "links.jsonl")
	i := strings.Index(last, "crawler report ")
	if i < 0 || !strings.HasSuffix(last, want) {
		t.Fatalf("last line %q; want it to end %q", last, want)
	}
	args := strings.Fields(last[i+len("crawler "):])
	out, errOut, code := runCmd(t, "", args...)
	if code != 0 || !strings.Contains(out, "Broken") || strings.Contains(errOut, "no link graph") {
		t.Errorf("%q: exit %d, stderr %q, stdout:\n%s", args, code, errOut, out)
	}
}
