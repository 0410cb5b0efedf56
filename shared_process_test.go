package crawler

import (
	"bytes"
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

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/frontier/cluster"
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
	log   *workerLog
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
	w.log = &workerLog{t: t, prefix: w.name + ": "}
	w.cmd = exec.Command(os.Args[0], "-test.run=^TestSharedWorkerProcess$", "-test.count=1")
	w.cmd.Env = append(os.Environ(), workerEnv+"="+string(b))
	w.cmd.Stderr = w.log
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
			if err := w.wait(patience); err != nil {
				t.Errorf("worker %s: %v", w.name, err)
			}
		})
	}
	wg.Wait()
}

// workerLog sends a process's stderr to the test's log, a line at a time
// (os/exec copies the pipe in chunks that need not end with a line), and
// counts what the worker logged of its requests made again.
type workerLog struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	rest   []byte // a line not yet ended
	again  int
}

// againMessages are the log lines of a request whose outcome was not
// written (a partition lost meanwhile, the server away) or that failed
// and is tried again: each such request may be made again, by the worker
// or by its partition's next owner.
var againMessages = []string{
	`msg="cluster: a URL done is left to its partition's new owner"`,
	`msg="cluster: write a URL done"`,
	`msg="a request failed: it is tried again later"`,
}

func (w *workerLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rest = append(w.rest, p...)
	for {
		i := bytes.IndexByte(w.rest, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.rest[:i])
		w.rest = w.rest[i+1:]
		for _, m := range againMessages {
			if strings.Contains(line, m) {
				w.again++
			}
		}
		w.t.Log(w.prefix + line)
	}
}

// madeAgain counts the requests the worker logged as ones that may be
// made again.
func (w *workerLog) madeAgain() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.again
}

// madeAgain sums workerLog.madeAgain over ws.
func madeAgain(ws []*workerProc) int {
	n := 0
	for _, w := range ws {
		n += w.log.madeAgain()
	}
	return n
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
// fetched, at most again requests for pages made more than once, nothing
// disallowed, and each site's delay and one request in flight kept across
// workers.
func checkFarm(t *testing.T, sites []*testSite, pages int, delay time.Duration, again int) {
	t.Helper()
	made := 0
	var twice []string // who asked for each page fetched again, and when
	for k, s := range sites {
		hits := s.hits()
		for i := range pages {
			u := fmt.Sprintf("/p%d", i)
			switch n := hits[u]; {
			case n == 0:
				t.Errorf("site %d: %s never fetched", k, u)
			case n > 1:
				made += n - 1
				twice = append(twice, fmt.Sprintf("site %d %s: %s", k, u, s.askedBy(u)))
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
	if made > again {
		t.Errorf("%d pages fetched again; want at most %d", made, again)
		for _, w := range twice {
			t.Log(w)
		}
	} else {
		t.Logf("%d pages fetched again, of %d requests that may be", made, again)
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
	waitUntil(t, fmt.Sprintf("%d pages fetched", n), func() bool { total, _ := farmHits(sites); return total >= n })
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
	var cfgs []Config
	for i := range 3 {
		cfgs = append(cfgs, processConfig(t, ns.ClientURL(), i, sites, delay))
		ws = append(ws, startWorker(t, cfgs[i]))
	}
	waitHits(t, sites, len(sites)*pages/4)
	dead := busiest(sites, len(ws))
	if err := ws[dead].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitAll(t, slices.Delete(slices.Clone(ws), dead, dead+1))
	// The dead worker's requests in flight, and any a worker logged as
	// not written (a partition lost to a late turn on a busy machine).
	checkFarm(t, sites, pages, delay, cfgs[dead].Fetch.Workers+madeAgain(ws))
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
	// A request the paused worker had started when it stopped may be made
	// again by the new owner, as a dead worker's may: whether the paused
	// worker then logs it as not written (its write refused) or not at all
	// (the request failed on its timeout when the clock jumped at SIGCONT)
	// depends on when the pause fell. So, as for a kill: its requests in
	// flight, at most fetch.workers, and any a worker logged as not written.
	checkFarm(t, sites, pages, delay, cfgs[paused].Fetch.Workers+madeAgain(ws))
}

// TestSharedCrawlWorkerJoins starts a third worker when two are part way
// through: it takes partitions over from them, and politeness holds
// through the handovers.
func TestSharedCrawlWorkerJoins(t *testing.T) {
	// Enough sites that the newcomer's share of the partitions holds
	// some (each site is in its share with odds of a third).
	const pages, delay = 8, 100 * time.Millisecond
	ns := startNATS(t)
	sites := farm(t, 24, pages)
	// The sites hold their answers back from when the two are a
	// quarter through until the newcomer, a process that may start
	// slowly, has taken over a site with pages left: the crawl cannot
	// end before. The fetch timeout is a quarter of patience so that a
	// request held back does not fail meanwhile (its retries could run
	// out, and the links of its page go unfound); an unclean takeover,
	// which waits as long, comes only of a stuck worker.
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open) // before the sites close, which waits for their answers
	config := func(i int) Config {
		cfg := processConfig(t, ns.ClientURL(), i, sites, delay)
		cfg.Fetch.Timeout = patience / 4
		return cfg
	}
	var ws []*workerProc
	for i := range 2 {
		ws = append(ws, startWorker(t, config(i)))
	}
	waitHits(t, sites, len(sites)*pages/4)
	for _, s := range sites {
		s.mu.Lock()
		s.gate = gate
		s.mu.Unlock()
	}
	cfg := config(2)
	ws = append(ws, startWorker(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	waitUntil(t, "the newcomer to take over a site with pages left", func() bool {
		time.Sleep(100 * time.Millisecond) // a connection a look
		ov, err := cluster.Status(ctx, cfg.Cluster)
		if err != nil {
			return false
		}
		for _, w := range ov.Workers {
			if w.Worker == cfg.Cluster.Worker {
				return slices.ContainsFunc(sites, func(s *testSite) bool {
					return slices.Contains(w.Partitions, siteParts(t, s, cfg.Cluster.Partitions)) && !siteDone(s, pages)
				})
			}
		}
		return false
	})
	open()
	waitAll(t, ws)
	if _, by := farmHits(sites); by[cfg.UserAgent] == 0 {
		t.Errorf("the worker that joined fetched no page: %v", by)
	}
	checkFarm(t, sites, pages, delay, madeAgain(ws))
}

// siteParts is the partition of site s's host among p.
func siteParts(t *testing.T, s *testSite, p int) int {
	u, err := frontier.Canonicalize(s.URL+"/", 2048)
	if err != nil {
		t.Fatal(err)
	}
	return cluster.Partition(u.Origin, p)
}

// siteDone reports whether every page of site s was fetched.
func siteDone(s *testSite, pages int) bool {
	hits := s.hits()
	for i := range pages {
		if hits[fmt.Sprintf("/p%d", i)] == 0 {
			return false
		}
	}
	return true
}
