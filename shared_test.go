package crawler

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/politecrawl/crawler/frontier/cluster"
	"github.com/politecrawl/crawler/frontier/cluster/clustertest"
	"github.com/politecrawl/crawler/robots"
)

// startNATS runs a NATS server with JetStream for the test.
func startNATS(t testing.TB) *server.Server { return clustertest.Server(t, true) }

// runsAgain counts the requests the workers of runs made that may be made
// again: those whose outcome could not be written (a partition lost
// meanwhile, as to a turn late on a busy machine; the server away) and
// those that failed and were tried again.
func runsAgain(runs []sharedRun) int {
	n := 0
	for _, r := range runs {
		n += int(r.c.shared.unwritten.Load() + r.sum.Retries)
	}
	return n
}

// farm is n test sites, each on a port of its own (an origin of its own),
// whose pages link to each other's: page i of site k links to pages i+1
// and i+2 of its own site and to page i of the next site.
func farm(t *testing.T, sites, pages int) []*testSite {
	t.Helper()
	var out []*testSite
	for range sites {
		out = append(out, newSite(t))
	}
	for k, s := range out {
		s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private\n"})
		next := out[(k+1)%len(out)]
		for i := range pages {
			links := []string{fmt.Sprintf("/p%d", i+1), fmt.Sprintf("/p%d", i+2), next.URL + fmt.Sprintf("/p%d", i), "/private"}
			if i+1 >= pages {
				links = links[2:]
			}
			s.html(fmt.Sprintf("/p%d", i), links...)
		}
	}
	return out
}

// sharedConfig is one worker's config of a crawl of the farm shared
// through the NATS server at url.
func sharedConfig(t *testing.T, url, worker string, sites []*testSite) Config {
	var seeds []string
	for _, s := range sites {
		seeds = append(seeds, s.URL+"/p0")
	}
	cfg := testConfig(t, seeds...)
	cfg.Politeness.Delay = 30 * time.Millisecond
	cfg.Fetch.Workers = 2
	cfg.Fetch.Timeout = 2 * time.Second
	cfg.Cluster = cluster.Config{NATS: url, Name: "farm", Worker: worker, Partitions: 16, Lease: cluster.MinLease}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// sharedRun is what one in-process worker of a shared crawl did.
type sharedRun struct {
	c   *Crawler
	sum Summary
	err error // Run's, or else Close's
}

// startShared starts a Crawler of each of cfgs, at once, as the workers
// of one crawl, setup (when not nil) changing each before it runs; wait
// returns once every one has ended and been closed.
func startShared(t *testing.T, ctx context.Context, cfgs []Config, setup func(*Crawler)) (wait func() []sharedRun) {
	t.Helper()
	runs := make([]sharedRun, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		c, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)).With("worker", i)})
		if err != nil {
			t.Fatal(err)
		}
		if setup != nil {
			setup(c)
		}
		runs[i].c = c
		wg.Go(func() {
			r := &runs[i]
			r.sum, r.err = c.Run(ctx)
			if err := c.Close(); r.err == nil {
				r.err = err
			}
		})
	}
	return func() []sharedRun {
		wg.Wait()
		return runs
	}
}

// wantStopped fails the test for each worker that failed or stopped for
// another reason than one of stopped.
func wantStopped(t *testing.T, runs []sharedRun, stopped ...string) {
	t.Helper()
	for i, r := range runs {
		if r.err != nil || !slices.Contains(stopped, r.sum.Stopped) {
			t.Errorf("worker %d: stopped %q, %v; want %q", i, r.sum.Stopped, r.err, stopped)
		}
	}
}

// sharedConfigs are the configs of n workers of a crawl of sites shared
// through the NATS server at url, each changed by edit when not nil.
func sharedConfigs(t *testing.T, url string, n int, sites []*testSite, edit func(*Config)) []Config {
	var cfgs []Config
	for i := range n {
		cfg := sharedConfig(t, url, fmt.Sprintf("w%d", i), sites)
		if edit != nil {
			edit(&cfg)
		}
		cfgs = append(cfgs, cfg)
	}
	return cfgs
}

// TestSharedCrawl runs three workers on one crawl of a farm of linked
// sites: together they fetch every page once and nothing disallowed, keep
// each site's delay and one request in flight across workers, and all end
// when no worker has a URL left.
func TestSharedCrawl(t *testing.T) {
	ns := startNATS(t)
	sites := farm(t, 6, 12)
	cfgs := sharedConfigs(t, ns.ClientURL(), 3, sites, nil)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	runs := startShared(t, ctx, cfgs, func(c *Crawler) { c.shared.compact = 5 })() // compacted during the crawl
	wantStopped(t, runs, "drained")
	// Every partition was taken by some worker, and counted in /metrics.
	var gained []int64
	total := int64(0)
	for _, r := range runs {
		n := r.c.obs.partChanges["gained_clean"] + r.c.obs.partChanges["gained_unclean"]
		gained, total = append(gained, n), total+n
	}
	if total < 16 {
		t.Errorf("partitions gained %v, %d in all; want at least the 16 of the crawl", gained, total)
	}
	// The partitions' histories were compacted as they grew.
	ov, err := cluster.Status(ctx, cfgs[0].Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if ov.Entries*2 > ov.Sequence {
		t.Errorf("%d of the stream's %d entries are left: not compacted", ov.Entries, ov.Sequence)
	}
	records := map[string]int{}
	for _, cfg := range cfgs {
		for u := range inventory(t, cfg.Output.URLs) {
			records[u]++
		}
	}
	// Each page once, but for requests whose outcome a worker could not
	// write or that failed: those are made again, and a page made again
	// by another worker is in its inventory too.
	again, recorded := 0, 0
	for k, s := range sites {
		hits := s.hits()
		for i := range 12 {
			u := fmt.Sprintf("/p%d", i)
			if hits[u] == 0 {
				t.Errorf("site %d: %s never fetched", k, u)
			}
			if records[s.URL+u] == 0 {
				t.Errorf("site %d: %s is in no worker's inventory", k, u)
			}
			again += max(hits[u]-1, 0)
			recorded += max(records[s.URL+u]-1, 0)
		}
		if hits["/private"] != 0 {
			t.Errorf("site %d: /private, disallowed, fetched %d times", k, hits["/private"])
		}
		if n := s.maxInFlight(); n > 1 {
			t.Errorf("site %d: %d requests in flight at once", k, n)
		}
		if gap := s.minGap(); gap < cfgs[0].Politeness.Delay-5*time.Millisecond {
			t.Errorf("site %d: two requests %v apart; the delay is %v", k, gap, cfgs[0].Politeness.Delay)
		}
	}
	if n := runsAgain(runs); again > n || recorded > n {
		t.Errorf("%d pages fetched again, %d recorded again; want at most the %d requests not written or retried", again, recorded, n)
	}
}

// BenchmarkSharedCrawl crawls many loopback hosts whose pages take 50 ms
// to answer, with one worker and with three sharing the crawl through an
// embedded NATS server, each with fetch.workers 2: the latency, not the
// machine, bounds a worker, so the pages/s of three against one is what
// sharing the crawl gives. It also reports the load on the server: client
// messages and bytes it received per page fetched (leases, heartbeats,
// appends, routed links, replays and their acknowledgements).
func BenchmarkSharedCrawl(b *testing.B) {
	const hosts, pages = 150, 12
	var seeds []string
	var served atomic.Int64
	var mu sync.Mutex
	var first, last time.Time
	for range hosts {
		inner := benchSite(b, pages)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(50 * time.Millisecond)
			if r.URL.Path != "/robots.txt" {
				served.Add(1)
				mu.Lock()
				if first.IsZero() {
					first = time.Now()
				}
				last = time.Now()
				mu.Unlock()
			}
			inner.Config.Handler.ServeHTTP(w, r)
		}))
		b.Cleanup(srv.Close)
		seeds = append(seeds, srv.URL+"/0")
	}
	for _, workers := range []int{1, 3} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var fetched, msgs, bytes int64
			var elapsed time.Duration
			for b.Loop() {
				ns := startNATS(b)
				served.Store(0)
				mu.Lock() // a handler of the last run may still be answering
				first, last = time.Time{}, time.Time{}
				mu.Unlock()
				v0, _ := ns.Varz(nil)
				var wg sync.WaitGroup
				for i := range workers {
					cfg := DefaultConfig()
					cfg.Seeds, cfg.StateDir = seeds, b.TempDir()
					cfg.Politeness.Delay = 0
					cfg.Fetch.Workers = 2
					cfg.Cluster = cluster.Config{NATS: ns.ClientURL(), Name: "bench", Worker: fmt.Sprintf("w%d", i), Partitions: 256, Lease: cluster.DefaultLease}
					c, err := New(cfg, Options{})
					if err != nil {
						b.Fatal(err)
					}
					wg.Go(func() {
						sum, err := c.Run(context.Background())
						if err != nil {
							b.Error(err)
						}
						b.Logf("worker %d: %d pages in %v", i, sum.Fetched(), sum.Elapsed)
						c.Close()
					})
				}
				wg.Wait()
				v1, _ := ns.Varz(nil)
				fetched += served.Load()
				msgs += v1.InMsgs - v0.InMsgs
				bytes += v1.InBytes - v0.InBytes
				mu.Lock()
				elapsed += last.Sub(first)
				mu.Unlock()
			}
			if fetched != int64(b.N*hosts*pages) {
				b.Errorf("%d pages fetched in %d crawls; want %d each", fetched, b.N, hosts*pages)
			}
			b.ReportMetric(float64(fetched)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(msgs)/float64(fetched), "msgs/page")
			b.ReportMetric(float64(bytes)/float64(fetched), "bytes/page")
		})
	}
}

// TestSharedCrawlMaxPages: scope.max_pages is the crawl's, not each
// worker's: three workers together fetch exactly that many pages, a lease
// that fetches nothing (a disallowed link) taking none, and all end.
func TestSharedCrawlMaxPages(t *testing.T) {
	ns := startNATS(t)
	sites := farm(t, 6, 12)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cfgs := sharedConfigs(t, ns.ClientURL(), 3, sites, func(cfg *Config) { cfg.Scope.MaxPages = 30 })
	wantStopped(t, startShared(t, ctx, cfgs, nil)(), "max_pages", "drained")
	if total, _ := farmHits(sites); total != 30 {
		t.Errorf("%d pages fetched; max_pages is 30", total)
	}
}

// TestSharedRobotsKeep: the server keeps a shared robots.txt answer as
// long as any worker may use it, and no longer.
func TestSharedRobotsKeep(t *testing.T) {
	if cluster.RobotsKeep != robots.CacheMax {
		t.Fatalf("cluster.RobotsKeep = %v, robots.CacheMax = %v; want the same", cluster.RobotsKeep, robots.CacheMax)
	}
}

// TestSharedCrawlRobotsRedirect: a host whose robots.txt redirects to
// another host's is crawled by the rules found there even when another
// worker holds that host (only it may ask it, and it shares the answer),
// and each robots.txt is requested once.
func TestSharedCrawlRobotsRedirect(t *testing.T) {
	const pairs, pages = 6, 4
	ns := startNATS(t)
	var sites []*testSite
	for k := range pairs {
		a, b := newSite(t), newSite(t)
		a.set("/robots.txt", page{status: 302, headers: map[string]string{"Location": b.URL + "/robots.txt"}})
		robotsTxt := page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private\n"}
		if k%2 == 1 {
			// Kept a minute only (robots.CacheMin), and shared as long.
			robotsTxt.headers = map[string]string{"Cache-Control": "no-cache"}
		}
		b.set("/robots.txt", robotsTxt)
		for _, s := range []*testSite{a, b} {
			for i := range pages {
				s.html(fmt.Sprintf("/p%d", i), fmt.Sprintf("/p%d", i+1), "/private")
			}
		}
		sites = append(sites, a, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	runs := startShared(t, ctx, sharedConfigs(t, ns.ClientURL(), 3, sites, nil), nil)()
	wantStopped(t, runs, "drained")
	again, robotsAgain := 0, 0
	for k, s := range sites {
		hits := s.hits()
		for i := range pages {
			if u := fmt.Sprintf("/p%d", i); hits[u] == 0 {
				t.Errorf("site %d: %s never fetched", k, u)
			} else {
				again += hits[u] - 1
			}
		}
		if hits["/private"] != 0 || hits["/robots.txt"] < 1 {
			t.Errorf("site %d: /private fetched %d times (disallowed), /robots.txt %d (want once)", k, hits["/private"], hits["/robots.txt"])
		}
		robotsAgain += hits["/robots.txt"] - 1
	}
	if n := runsAgain(runs); again > n {
		t.Errorf("%d pages fetched again; want at most the %d requests not written or retried", again, n)
	}
	wantRobotsAgain(t, runs, robotsAgain)
}

// TestSharedCrawlRobotsRedirectNoURLs: a host whose robots.txt redirects
// to a host the crawl has no URL of (in scope, never linked) is crawled by
// the rules found there: the worker holding the target, which would never
// ask it of its own accord, fetches it when asked (WantRobots) and shares
// the answer, rather than the host waiting two leases and being given up
// on. Each robots.txt is requested once.
func TestSharedCrawlRobotsRedirectNoURLs(t *testing.T) {
	const pairs, pages = 6, 3
	ns := startNATS(t)
	var sites, targets []*testSite
	for range pairs {
		a, b := newSite(t), newSite(t)
		a.set("/robots.txt", page{status: 302, headers: map[string]string{"Location": b.URL + "/robots.txt"}})
		b.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private\n"})
		for i := range pages {
			a.html(fmt.Sprintf("/p%d", i), fmt.Sprintf("/p%d", i+1), "/private")
		}
		sites, targets = append(sites, a), append(targets, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cfgs := sharedConfigs(t, ns.ClientURL(), 3, sites, func(cfg *Config) {
		for _, s := range append(slices.Clone(sites), targets...) {
			cfg.Scope.Hosts = append(cfg.Scope.Hosts, s.URL)
		}
	})
	start := time.Now()
	runs := startShared(t, ctx, cfgs, nil)()
	wantStopped(t, runs, "drained")
	robotsAgain := 0
	for k, s := range sites {
		hits := s.hits()
		for i := range pages {
			if u := fmt.Sprintf("/p%d", i); hits[u] == 0 {
				t.Errorf("site %d: %s never fetched", k, u)
			}
		}
		if hits["/private"] != 0 || hits["/robots.txt"] < 1 {
			t.Errorf("site %d: /private fetched %d times (disallowed), /robots.txt %d (want once)", k, hits["/private"], hits["/robots.txt"])
		}
		robotsAgain += hits["/robots.txt"] - 1
		if n := targets[k].hits()["/robots.txt"]; n != 1 {
			t.Errorf("site %d: its robots.txt's target asked %d times, want once", k, n)
		}
	}
	wantRobotsAgain(t, runs, robotsAgain)
	t.Logf("crawled in %v (a host given up on waits two leases, %v)", time.Since(start).Round(time.Millisecond), 2*cfgs[0].Cluster.Lease)
}

// wantRobotsAgain fails the test when the robots.txt of the redirecting
// hosts was fetched again (again times in all) more often than partitions
// changed hands after the first were dealt (the balance moves them): a
// new holder has no copy of a redirecting robots.txt (only its target's
// answer is shared) and asks it again, once.
func wantRobotsAgain(t *testing.T, runs []sharedRun, again int) {
	t.Helper()
	gained := int64(0)
	for _, r := range runs {
		gained += r.c.obs.partChanges["gained_clean"] + r.c.obs.partChanges["gained_unclean"]
	}
	if moved := gained - int64(runs[0].c.cfg.Cluster.Partitions); int64(again) > moved {
		t.Errorf("robots.txt fetched again %d times; want once each, or at most once a partition moved (%d)", again, moved)
	}
}

// TestSharedCrawlServerRestart stops the NATS server part way through a
// crawl of three workers and starts it again on its store: the workers
// start no request while it is away (nothing they learn could be written),
// carry on when it is back, and finish with every page fetched, a few at
// most twice (those whose writes the stop cut off), and politeness kept.
func TestSharedCrawlServerRestart(t *testing.T) {
	store := t.TempDir()
	opts := func(port int) *server.Options {
		return &server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: store, NoLog: true, NoSigs: true}
	}
	ns := clustertest.ServerWith(t, opts(-1)) // shut down part way, and again at the end, harmlessly
	url, port := ns.ClientURL(), ns.Addr().(*net.TCPAddr).Port
	sites := farm(t, 6, 15)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cfgs := sharedConfigs(t, url, 3, sites, func(cfg *Config) { cfg.Politeness.Delay = 100 * time.Millisecond })
	wait := startShared(t, ctx, cfgs, nil)
	waitHits(t, sites, len(sites)*15/4)
	ns.Shutdown()
	ns.WaitForShutdown()
	down, _ := farmHits(sites)
	time.Sleep(cluster.MinLease) // every window closes meanwhile
	during, _ := farmHits(sites)
	clustertest.ServerWith(t, opts(port))
	runs := wait()
	wantStopped(t, runs, "drained")
	// A request may have started just before the stop; none long after.
	if during > down+3*cfgs[0].Fetch.Workers {
		t.Errorf("%d pages fetched while the server was away", during-down)
	}
	// Those the stop cut off, and any other request a worker could not
	// write (a partition lost to a late turn) or tried again.
	checkFarm(t, sites, 15, 100*time.Millisecond, runsAgain(runs))
}

// TestSharedDaemonRevisits runs two workers of a shared daemon: every page
// is fetched, then revisited on schedule by whichever worker holds its
// host, with politeness kept across them, until each is stopped.
func TestSharedDaemonRevisits(t *testing.T) {
	ns := startNATS(t)
	sites := farm(t, 4, 4)
	var stops []func() error
	for i := range 2 {
		cfg := sharedConfig(t, ns.ClientURL(), fmt.Sprintf("w%d", i), sites)
		cfg.Daemon.Enabled = true
		cfg.Daemon.Recrawl = time.Second
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		c, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)).With("worker", i)})
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, runInBackground(c))
		t.Cleanup(func() { c.Close() })
	}
	revisited := func() bool {
		for _, s := range sites {
			for i := range 4 {
				if s.hits()[fmt.Sprintf("/p%d", i)] < 2 {
					return false
				}
			}
		}
		return true
	}
	ok := poll(revisited)
	for i, stop := range stops {
		if err := stop(); err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	if !ok {
		for k, s := range sites {
			t.Logf("site %d: %v", k, s.hits())
		}
		t.Fatalf("not every page was revisited within %v", patience)
	}
	for k, s := range sites {
		if s.hits()["/private"] != 0 || s.maxInFlight() > 1 || s.minGap() < 30*time.Millisecond-5*time.Millisecond {
			t.Errorf("site %d: /private %d, %d in flight at once, smallest gap %v", k, s.hits()["/private"], s.maxInFlight(), s.minGap())
		}
	}
}
