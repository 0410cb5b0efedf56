package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/lru"
	"github.com/politecrawl/crawler/storage/render"
)

// Options are what a crawl needs besides its Config: where its log, its
// progress and (for discover) its inventory go.
type Options struct {
	// Logger receives the crawl's log; nil discards it.
	Logger *slog.Logger
	// Inventory, when set, receives the JSON Lines inventory instead of the
	// file Config.Output.URLs names (crawler discover writes to stdout).
	Inventory io.Writer
	// Status, when set, is given the live progress line twice a second
	// (for a terminal: the caller draws it, and keeps it to the
	// terminal's width), and "" when the run ends. Without it, progress
	// goes to the log every ProgressEvery (default 10s).
	Status        func(line string)
	ProgressEvery time.Duration
	// Stdout is where Config.Output.URLs "-" writes.
	Stdout io.Writer
	// NoBodies keeps no page bodies: no mirror, no WARC (crawler discover).
	NoBodies bool
	// Scratch says the state_dir is removed when the run ends (crawler
	// discover without --state-dir), so that what a run commits need not
	// be synced to disk: syncing was a sixth of an audit's CPU (the
	// 20-host farm at no delay: 500 µs per request synced, 413 not).
	Scratch bool
	// Refresh makes an ad hoc crawl one more pass over every URL done on
	// its state (crawl --refresh): each is due again at once, asked with
	// its validators, and its new links are followed. max_pages counts
	// the pages of this pass only.
	Refresh bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Getenv reads the environment for the proxy when fetch.proxy is
	// empty (HTTPS_PROXY, HTTP_PROXY, NO_PROXY); nil means no proxy.
	Getenv func(string) string
	// Version is the crawler's version, for crawler_build_info; "" means
	// the main module's version from the build info.
	Version string
}

// Crawler is one crawl, and the wiring of the parts that do it: its
// config, log and clock; the frontier (which URL next); the hosts (may this
// host be asked now, and what its robots.txt says); the exchange, the one
// path of every request; the outputs and page records (what is kept); and
// the observer, which counts every event once. Make one with New, run it
// with Run, and Close it. See the package doc for the pipeline.
type Crawler struct {
	cfg   Config // as given to New; the keys a reload may change live in live
	live  atomic.Pointer[liveConfig]
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	agent string

	state *storage.State
	front *frontier.Frontier
	pages *storage.Pages
	hosts *hosts
	x     *exchange
	out   *outputs
	obs   *observer

	budget   budget   // max_pages
	refusals refusals // URLs refused this run, recorded once
	visiting visiting // URLs being visited, or relinked
	retrying retrying // requisites waiting for a retry, for the max_pages drain
	// working counts the leases handed to workers and not yet settled.
	working atomic.Int64
	// cpu bounds the responses parsed at once to the Go scheduler's
	// processors, so that parsing alone cannot take more than the machine
	// (many workers parsing at once would only share it). The next request
	// to a host does not wait for a free processor: the exchange yields
	// when it gives a slot back, so the host's next request goes out
	// before the answer is parsed.
	cpu    chan struct{}
	wakeCh chan struct{}
	halt   halt      // a write that failed ends the crawl
	relink *relinker // the mirror's links, after each pass
	chains *chains   // redirects' records, until their chain ends
	shared *shared   // the crawl shared by several workers; nil on one machine

	render *rendering // the browser, when render.enabled; nil otherwise
}

// New opens (or creates) the crawl state in cfg.StateDir and the outputs.
// cfg must have passed Validate.
func New(cfg Config, opts Options) (*Crawler, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Refresh && cfg.Cluster.Enabled() {
		// Each worker's state holds what it crawled, not the crawl: a
		// pass over it would miss the rest and disagree with the log.
		return nil, errors.New("--refresh: not available in a crawl shared by several workers (cluster.nats); start a crawl of a new cluster.name instead")
	}
	c := &Crawler{
		cfg: cfg, opts: opts, log: opts.Logger, now: opts.Now,
		agent:  ProductToken(cfg.UserAgent),
		obs:    newObserver(opts.Version),
		wakeCh: make(chan struct{}, 1),
		cpu:    make(chan struct{}, max(1, runtime.GOMAXPROCS(0))),
	}
	st, err := storage.Open(cfg.StateDir, storage.StateOptions{PageSize: frontier.PageSize, Scratch: opts.Scratch})
	if err != nil {
		return nil, err
	}
	c.state, c.pages = st, st.Pages
	if err := c.open(); err != nil {
		st.Close()
		return nil, err
	}
	return c, nil
}

func (c *Crawler) open() (err error) {
	defer func() {
		// bbolt panics on a page it cannot read; storage.Open checks
		// the whole of a small file, the frontier's first reads find
		// the rest.
		if p := recover(); p != nil {
			err = c.state.Damaged(fmt.Sprint(p))
		}
	}()
	if c.front, err = frontier.New(c.state.DB(), frontier.Options{}); err != nil {
		return fmt.Errorf("open frontier: %w", err)
	}
	live, err := newLiveConfig(c.cfg, c.now)
	if err != nil {
		return err
	}
	c.live.Store(live)
	start := c.now()
	c.hosts = newHosts(c.conf(), start, c.front, c.state, c.obs, c.log, c.conf, c.now)
	c.hosts.fail = func(err error) { c.stop(fmt.Errorf("state_dir %s: %w", c.cfg.StateDir, err)) }
	rc, err := newReach(c.cfg.Fetch, c.opts.Getenv)
	if err != nil {
		return err
	}
	fetch := newFetcher(c.cfg.UserAgent, c.cfg.Fetch.Timeout, int64(c.cfg.Fetch.MaxBody), c.cfg.Politeness.MaxPerHost, c.now, rc)
	c.x = &exchange{hosts: c.hosts, fetch: fetch, obs: c.obs, now: c.now}
	c.budget.most = func() int { return c.conf().Scope.MaxPages }
	c.obs.gauges = c.gauges
	if c.out, err = openOutputs(c.cfg, c.opts, c.log, c.state.Digests); err != nil {
		return err
	}
	fetch.keepRaw = c.out.warc != nil
	c.relink = relinkerOf(c)
	if err := c.hosts.restore(start, c.pages, c.cfg.Scope.MaxPages > 0); err != nil {
		return err
	}
	c.budget.before = c.hosts.doneEarly
	if c.opts.Refresh && !c.cfg.Daemon.Enabled {
		n, err := c.front.RescheduleDone(start)
		if err != nil {
			return fmt.Errorf("state_dir %s: refresh: %w", c.cfg.StateDir, err)
		}
		c.log.Info("refresh: every URL done is due again", "urls", n)
		c.budget.before = 0
	}
	if c.chains, err = newChains(c.state, func() int { return c.conf().Fetch.MaxRedirects }); err != nil {
		return fmt.Errorf("state_dir %s: %w", c.cfg.StateDir, err)
	}
	if c.cfg.Cluster.Enabled() {
		c.shared = newShared(c)
		c.hosts.shared = c.shared
	}
	if c.cfg.Render.Enabled {
		rc := c.cfg.Render
		path, err := render.FindBrowser(rc.Browser)
		if err != nil {
			return fmt.Errorf("render.browser: %w", err)
		}
		c.render = &rendering{
			r: render.New(render.Options{Browser: path, Tabs: rc.Tabs, Timeout: rc.Timeout, Settle: rc.Settle,
				UserAgent: c.cfg.UserAgent, Log: c.log}),
			kept: lru.New(renderCacheSize, keptCost),
		}
		c.hosts.renderTabs = rc.Tabs
	}
	return nil
}

// newScope compiles the scope of cfg: the hosts given, or those of the
// seeds and sitemaps when none are.
func newScope(cfg Config, now func() time.Time) (*scope, error) {
	s := &scope{
		hosts:       map[string]bool{},
		maxDepth:    cfg.Scope.MaxDepth,
		maxLen:      cfg.Scope.MaxURLLength,
		maxSegments: cfg.Scope.MaxPathDepth,
		maxRepeats:  cfg.Scope.MaxRepeatedSegments,
		now:         now,
		queries:     newQueryVariants(cfg.Scope.MaxQueryVariants),
	}
	var err error
	if s.requisites, err = newRequisiteHosts(cfg.Scope.Requisites); err != nil {
		return nil, err
	}
	for _, h := range cfg.Scope.Hosts {
		for _, origin := range scopeOrigins(h) {
			s.hosts[origin] = true
		}
	}
	if len(cfg.Scope.Hosts) == 0 {
		for _, raw := range append(append([]string{}, cfg.Seeds...), cfg.Sitemaps...) {
			if u, err := frontier.Canonicalize(raw, cfg.Scope.MaxURLLength); err == nil {
				s.hosts[u.Origin] = true
			}
		}
	}
	for origin := range s.hosts {
		if _, hostport, ok := strings.Cut(origin, "://"); ok {
			host, _ := splitHostPort(hostport)
			s.requisites.local = s.requisites.local || nonPublic(host)
		}
	}
	for _, list := range []struct {
		key  string
		pats []string
		dst  *[]*regexp.Regexp
	}{{"scope.include", cfg.Scope.Include, &s.include}, {"scope.exclude", cfg.Scope.Exclude, &s.exclude}} {
		for i, p := range list.pats {
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", list.key, i, err)
			}
			*list.dst = append(*list.dst, re)
		}
	}
	return s, nil
}

// scopeOrigins reads a scope.hosts entry: an origin, or a bare host[:port]
// meaning that host over http and https.
func scopeOrigins(h string) []string {
	if u, err := url.Parse(h); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		if c, err := frontier.Canonicalize(u.Scheme+"://"+u.Host+"/", 0); err == nil {
			return []string{c.Origin}
		}
		return nil
	}
	var out []string
	for _, scheme := range []string{"http", "https"} {
		if c, err := frontier.Canonicalize(scheme+"://"+h+"/", 0); err == nil {
			out = append(out, c.Origin)
		}
	}
	return out
}

// Close flushes the outputs and closes the state. It is safe to call once
// Run has returned.
func (c *Crawler) Close() error {
	if c.render != nil {
		c.render.r.Close()
	}
	err := c.out.close()
	if c.front != nil {
		err = errors.Join(err, c.front.Close())
	}
	if c.state != nil {
		err = errors.Join(err, c.state.Close())
	}
	return err
}

// Run crawls until the frontier is drained or a limit is hit (or, in daemon
// mode, until ctx is cancelled), then returns what it did. Cancelling ctx
// stops it gracefully: requests in flight are abandoned and their URLs go
// back to the queue, and the state is flushed. A write that fails (an
// output, the state) stops it the same way, and Run returns that error.
// Run returns only after its goroutines have stopped.
func (c *Crawler) Run(parent context.Context) (Summary, error) {
	started := c.now()
	ctx := c.halt.watch(parent)
	stopShared, err := c.joinShared(ctx)
	if err != nil {
		return Summary{}, err
	}
	work := make(chan job)
	var wg sync.WaitGroup
	for range c.cfg.Fetch.Workers {
		wg.Go(func() {
			for j := range work {
				c.process(ctx, j)
				c.handedBack(j.out)
				c.wake()
			}
		})
	}
	stopProgress := c.startProgress(ctx)
	stopRelink := c.relink.relinkEvery(ctx)
	err = c.dispatch(ctx, work)
	close(work)
	wg.Wait()
	stopShared()
	stopRelink()
	stopProgress()
	var broken int
	if ctx.Err() == nil && err == nil && !c.cfg.Daemon.Enabled {
		err = c.recordUnfetched()
		// The pass is over: the mirror's links can point at its files.
		report, rerr := c.relink.relinkMirror()
		err, broken = errors.Join(err, rerr), len(report.Broken)+report.Unlisted
	}
	if c.halt.err() == nil {
		// Redirects whose chain has not ended are written as far as it
		// is known; once the crawl is over, they are forgotten.
		over := ctx.Err() == nil && err == nil && !c.cfg.Daemon.Enabled && !c.budget.reached()
		err = errors.Join(err, c.chains.flush(over, c.out.inventory))
	}
	if ferr := c.out.flush(); ferr != nil {
		err = errors.Join(err, ferr)
	}
	err = errors.Join(err, c.leaveShared(), c.halt.err())
	sum := c.summary(started)
	sum.BrokenLinks = broken
	switch {
	case c.halt.err() != nil:
		sum.Stopped = "error"
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		sum.Stopped = "time"
	case parent.Err() != nil:
		sum.Stopped = "signal"
	case c.budget.reached():
		sum.Stopped = "max_pages"
	default:
		sum.Stopped = "drained"
	}
	return sum, err
}

// process visits one job's lease and settles its outcome, holding its URL
// so that no other worker (the same URL as the other kind: a sitemap
// linked as a page) nor a relink of the mirror works on it meanwhile.
func (c *Crawler) process(ctx context.Context, j job) {
	l := j.l
	if !c.visiting.hold(l.Key) {
		// That one's record comes first; this one waits for it.
		now := c.now()
		c.hosts.pass(l.Origin, now)
		c.settle(l, release(now.Add(100*time.Millisecond)))
		return
	}
	o := c.visit(ctx, l, j.out.budgeted)
	if o.kind == outcomeRelease {
		// Nothing is written of a URL given back: it is let go first,
		// so that the next lease of it, which may follow at once, finds
		// it free rather than going back to wait (out of its turn, and
		// of its link depth's).
		c.visiting.drop(l.Key)
		c.settle(l, o)
		return
	}
	defer c.visiting.drop(l.Key)
	c.settle(l, o)
}

// summary is what the run did, from the observer, the frontier and the
// hosts.
func (c *Crawler) summary(started time.Time) Summary {
	now := c.now()
	sum := Summary{Elapsed: now.Sub(started), Queued: c.stats().Queued}
	c.obs.fill(&sum)
	for _, h := range c.hosts.snapshot(now) {
		if h.Parked != "" {
			sum.Parked = append(sum.Parked, ParkedHost{Origin: h.Origin, Reason: h.Parked})
		}
	}
	return sum
}

// stats counts the frontier's URLs: in a crawl shared by several workers,
// those of the partitions this worker holds (it keeps those it held
// before, which are another's now).
func (c *Crawler) stats() frontier.Stats {
	if c.shared == nil {
		return c.front.Stats()
	}
	var st frontier.Stats
	for _, h := range c.front.Hosts() {
		if c.shared.mine(h.Origin) {
			st.Queued, st.Leased, st.Done, st.Scheduled = st.Queued+h.Queued, st.Leased+h.Leased, st.Done+h.Done, st.Scheduled+h.Scheduled
		}
	}
	return st
}

// gauges are the crawl's levels now, for /metrics and the progress line.
func (c *Crawler) gauges() gauges {
	st := c.stats()
	g := gauges{queued: st.Queued, leased: st.Leased, done: st.Done, partitions: -1}
	if c.shared != nil {
		g.partitions = c.shared.holding()
	}
	g.active, g.waiting, g.parked = countHosts(c.hosts.snapshot(c.now()))
	return g
}

// halt is how a crawl stops itself: the first error given to stop ends
// the context watch returned, and err reports it.
type halt struct {
	mu     sync.Mutex
	first  error
	cancel context.CancelFunc
}

// watch returns a context that stop ends.
func (h *halt) watch(ctx context.Context) context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	ctx, h.cancel = context.WithCancel(ctx)
	return ctx
}

func (h *halt) stop(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.first == nil {
		h.first = err
	}
	if h.cancel != nil {
		h.cancel()
	}
}

func (h *halt) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first
}

// stop ends the crawl because a write failed, once: what was done is kept,
// the URL being settled goes back to the queue, and Run returns err.
func (c *Crawler) stop(err error) {
	if c.halt.err() == nil {
		c.log.Error("crawl stopped", "err", err)
	}
	c.halt.stop(err)
}

// visiting is the set of URLs (canonical keys) a worker is visiting or a
// relink is rewriting, so that the two never work on one at once.
type visiting struct{ m sync.Map }

// hold takes key, and reports false when another holds it.
func (v *visiting) hold(key string) bool {
	_, busy := v.m.LoadOrStore(key, struct{}{})
	return !busy
}

// drop gives key back.
func (v *visiting) drop(key string) { v.m.Delete(key) }
