package crawler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillChild is the child of TestSIGKILLResume: it crawls the site the
// parent serves until it is killed (or done).
func TestKillChild(t *testing.T) {
	seed, dir := os.Getenv("CRAWLER_KILL_SEED"), os.Getenv("CRAWLER_KILL_DIR")
	if seed == "" {
		t.Skip("run by TestSIGKILLResume")
	}
	cfg := DefaultConfig()
	cfg.Seeds, cfg.StateDir = []string{seed}, filepath.Join(dir, "state")
	cfg.Politeness.Delay, cfg.Politeness.MaxPerHost = 0, 2
	cfg.Fetch.Workers = 4
	cfg.Output.URLs = filepath.Join(dir, "urls.jsonl")
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSIGKILLResume kills a crawl with SIGKILL at random moments, five
// times, restarting it on the same state each time: every page must be
// fetched, and no more URLs fetched again than kills × workers.
func TestSIGKILLResume(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const pages, kills, workers = 300, 5, 4
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.hold = 2 * time.Millisecond
	for i := range pages {
		links := []string{fmt.Sprintf("/p%d", (i*7+1)%pages), fmt.Sprintf("/p%d", (i*13+5)%pages), fmt.Sprintf("/p%d", (i+1)%pages)}
		s.html(fmt.Sprintf("/p%d", i), links...)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CRAWLER_KILL_SEED="+s.URL+"/p0", "CRAWLER_KILL_DIR="+dir)
		return cmd
	}
	for k := range kills {
		cmd := child()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill once the crawl has made some progress, at a random moment.
		before := len(s.hits())
		deadline := time.Now().Add(20 * time.Second)
		for len(s.hits()) < before+10+rng.IntN(40) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		t.Logf("kill %d after %d distinct URLs", k+1, len(s.hits()))
	}
	out, err := child().CombinedOutput()
	if err != nil {
		t.Fatalf("the last run failed: %v\n%s", err, out)
	}
	hits := s.hits()
	refetched := 0
	for i := range pages {
		n := hits[fmt.Sprintf("/p%d", i)]
		if n == 0 {
			t.Errorf("/p%d never fetched", i)
		}
		refetched += max(n-1, 0)
	}
	t.Logf("%d pages fetched again", refetched)
	if refetched > kills*workers {
		t.Errorf("%d pages fetched again over %d kills of %d workers", refetched, kills, workers)
	}
	inv, err := os.ReadFile(filepath.Join(dir, "urls.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range pages {
		if !strings.Contains(string(inv), fmt.Sprintf(`/p%d"`, i)) {
			t.Errorf("/p%d has no inventory record", i)
		}
	}
}
