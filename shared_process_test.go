package crawler

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// workerEnv carries a worker process's config (JSON) from a test to the
// test binary it runs again as that worker.
const workerEnv = "CRAWLER_TEST_SHARED_WORKER"

// TestSharedWorkerProcess is not a test: it is the worker a test of a
// shared crawl runs as a process of its own (the test binary run again,
// as os/exec's tests do), so that the test can kill, stop and continue
// it. It exits 0 when its crawl is over.
func TestSharedWorkerProcess(t *testing.T) {
	raw := os.Getenv(workerEnv)
	if raw == "" {
		t.Skip("run by the shared crawl's tests only")
	}
	var cfg Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := New(cfg, Options{Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c.shared.compact = 5 // so that a worker taking over restores snapshots
	sum, err := c.Run(context.Background())
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil || sum.Stopped != "drained" {
		fmt.Fprintf(os.Stderr, "stopped %q: %v\n", sum.Stopped, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// workerProc is a worker of a shared crawl running as a process.
type workerProc struct {
	name  string
	cmd   *exec.Cmd
	done  chan struct{}
	err   error
	start time.Time
}

// startWorker runs a worker of cfg as a process of its own; its log goes
// to the test's log, prefixed with its name.
func startWorker(t *testing.T, cfg Config) *workerProc {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &workerProc{name: cfg.Cluster.Worker, done: make(chan struct{}), start: time.Now()}
	w.cmd = exec.Command(os.Args[0], "-test.run=^TestSharedWorkerProcess$", "-test.count=1")
	w.cmd.Env = append(os.Environ(), workerEnv+"="+string(b))
	w.cmd.Stderr = prefixWriter{t: t, prefix: w.name + ": "}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		<-w.done
	})
	return w
}

// wait waits for the worker to exit, for at most d (then it kills it),
// and returns how it did.
func (w *workerProc) wait(d time.Duration) error {
	select {
	case <-w.done:
		return w.err
	case <-time.After(d):
		_ = w.cmd.Process.Kill()
		return fmt.Errorf("still running after %v", d)
	}
}

// waitAll waits for every worker of ws to exit, and fails the test for
// each that did not exit 0.
func waitAll(t *testing.T, ws []*workerProc) {
	t.Helper()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			if err := w.wait(2 * time.Minute); err != nil {
				t.Errorf("worker %s: %v", w.name, err)
			}
		})
	}
	wg.Wait()
}

// prefixWriter sends a process's stderr to the test's log, a line at a
// time (a log line is one write).
type prefixWriter struct {
	t      *testing.T
	prefix string
}

func (w prefixWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		w.t.Log(w.prefix + line)
	}
	return len(p), nil
}

// processConfig is worker i's config of a shared crawl of sites, as
// sharedConfig, with a User-Agent of its own so that the sites' logs tell
// the workers apart.
func processConfig(t *testing.T, url string, i int, sites []*testSite, delay time.Duration) Config {
	cfg := sharedConfig(t, url, fmt.Sprintf("w%d", i), sites)
	cfg.UserAgent = fmt.Sprintf("politecrawl-w%c/1.0", 'a'+i)
	cfg.Politeness.Delay = delay
	cfg.Cluster.Partitions = 64
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// farmHits counts the requests for pages the sites served so far, and
// each worker's share by its User-Agent.
func farmHits(sites []*testSite) (total int, byAgent map[string]int) {
	byAgent = map[string]int{}
	for _, s := range sites {
		s.mu.Lock()
		for _, h := range s.log {
			if strings.HasPrefix(h.path, "/p") {
				total++
				byAgent[h.hdr.Get("User-Agent")]++
			}
		}
		s.mu.Unlock()
	}
	return total, byAgent
}

// checkFarm checks what the sites saw of a shared crawl: every page
// fetched, at most twice pages fetched more than once, nothing disallowed,
// and each site's delay and one request in flight kept across workers.
func checkFarm(t *testing.T, sites []*testSite, pages int, delay time.Duration, twice int) {
	t.Helper()
	again := 0
	for k, s := range sites {
		hits := s.hits()
		for i := range pages {
			u := fmt.Sprintf("/p%d", i)
			switch n := hits[u]; {
			case n == 0:
				t.Errorf("site %d: %s never fetched", k, u)
			case n > 1:
				again += n - 1
			}
		}
		if hits["/private"] != 0 {
			t.Errorf("site %d: /private, disallowed, fetched %d times", k, hits["/private"])
		}
		if maxIn := s.maxInFlight(); maxIn > 1 {
			t.Errorf("site %d: %d requests in flight at once", k, maxIn)
		}
		if gap := s.minGap(); gap < delay-5*time.Millisecond {
			t.Errorf("site %d: two requests %v apart; the delay is %v", k, gap, delay)
		}
	}
	if again > twice {
		t.Errorf("%d pages fetched again; want at most %d", again, twice)
	}
}

// busiest returns the index of the worker that has fetched most pages.
func busiest(sites []*testSite, n int) int {
	_, by := farmHits(sites)
	best := 0
	for i := range n {
		if by[fmt.Sprintf("politecrawl-w%c/1.0", 'a'+i)] > by[fmt.Sprintf("politecrawl-w%c/1.0", 'a'+best)] {
			best = i
		}
	}
	return best
}

// waitHits waits until the sites served at least n page requests.
func waitHits(t *testing.T, sites []*testSite, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if total, _ := farmHits(sites); total >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d pages fetched after a minute", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSharedCrawlSurvivesKill kills the busiest of three worker processes
// part way: the two others take its hosts over and finish the crawl, with
// every page fetched, at most its requests in flight (fetch.workers) made
// again, and politeness kept across workers.
func TestSharedCrawlSurvivesKill(t *testing.T) {
	const pages, delay = 15, 100 * time.Millisecond
	ns := startNATS(t)
	sites := farm(t, 8, pages)
	var ws []*workerProc
	for i := range 3 {
		ws = append(ws, startWorker(t, processConfig(t, ns.ClientURL(), i, sites, delay)))
	}
	waitHits(t, sites, len(sites)*pages/4)
	dead := busiest(sites, len(ws))
	if err := ws[dead].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitAll(t, slices.Delete(ws, dead, dead+1))
	checkFarm(t, sites, pages, delay, 2)
}

// TestSharedCrawlSurvivesPause stops the busiest of three worker
// processes (SIGSTOP) for longer than its lease, and lets it go on
// (SIGCONT): the others take its hosts over meanwhile, it starts no request
// for them when it wakes, and all three finish the crawl together.
func TestSharedCrawlSurvivesPause(t *testing.T) {
	const pages, delay = 15, 100 * time.Millisecond
	ns := startNATS(t)
	sites := farm(t, 8, pages)
	var ws []*workerProc
	var cfgs []Config
	for i := range 3 {
		cfgs = append(cfgs, processConfig(t, ns.ClientURL(), i, sites, delay))
		ws = append(ws, startWorker(t, cfgs[i]))
	}
	waitHits(t, sites, len(sites)*pages/4)
	paused := busiest(sites, len(ws))
	if err := ws[paused].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(cfgs[0].Cluster.Lease + 2*time.Second)
	if err := ws[paused].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitAll(t, ws)
	// A request the paused worker had started when it stopped may arrive
	// after it continues, and be made again by the new owner.
	checkFarm(t, sites, pages, delay, cfgs[0].Fetch.Workers)
}

// TestSharedCrawlWorkerJoins starts a third worker when two are part way
// through: it takes partitions over from them, and politeness holds
// through the handovers.
func TestSharedCrawlWorkerJoins(t *testing.T) {
	// Slow enough that the newcomer, a process still starting when the
	// others are a quarter through, has hosts left to take.
	const pages, delay = 15, 300 * time.Millisecond
	ns := startNATS(t)
	sites := farm(t, 8, pages)
	var ws []*workerProc
	for i := range 2 {
		ws = append(ws, startWorker(t, processConfig(t, ns.ClientURL(), i, sites, delay)))
	}
	waitHits(t, sites, len(sites)*pages/4)
	ws = append(ws, startWorker(t, processConfig(t, ns.ClientURL(), 2, sites, delay)))
	waitAll(t, ws)
	if _, by := farmHits(sites); by["politecrawl-wc/1.0"] == 0 {
		t.Errorf("the worker that joined fetched no page: %v", by)
	}
	checkFarm(t, sites, pages, delay, 0)
}
