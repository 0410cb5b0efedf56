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
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/storage"
)

// Options are what a crawl needs besides its Config: where its log, its
// progress and (for discover) its inventory go.
type Options struct {
	// Logger receives the crawl's log; nil discards it.
	Logger *slog.Logger
	// Inventory, when set, receives the JSON Lines inventory instead of the
	// file Config.Output.URLs names (crawler discover writes to stdout).
	Inventory io.Writer
	// Progress receives the live progress line when ProgressTTY is set; off
	// a terminal, progress goes to the log every ProgressEvery.
	Progress      io.Writer
	ProgressTTY   bool
	ProgressEvery time.Duration
	// Stdout is where Config.Output.URLs "-" writes.
	Stdout io.Writer
	// NoBodies keeps no page bodies: no mirror, no WARC (crawler discover).
	NoBodies bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Crawler is one crawl: its state in bbolt, its politeness gate, its
// outputs. Make one with New, run it with Run, and Close it.
type Crawler struct {
	cfg   Config // as given to New; the keys a reload may change live in live
	live  atomic.Pointer[liveConfig]
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	agent string

	state   *storage.State
	front   *frontier.Frontier
	pages   *storage.Pages
	gate    *politeness.Gate
	robots  *politeness.RobotsCache
	share   robotsShare // robots.txt answers shared between hosts that redirect
	fetch   *fetcher
	metrics *metrics
	out     *outputs

	// cpu bounds the responses parsed at once to one fewer than the Go
	// scheduler's processors (at least one), so that a processor stays
	// free for the requests in flight: on a crawl of one host, one request
	// at a time, the next request goes out while the last page is parsed,
	// not after it.
	cpu      chan struct{}
	busy     atomic.Int64 // leases handed to workers and not yet finished
	inflight sync.Map     // canonical keys being visited, of either kind
	wakeCh   chan struct{}
	fetched  atomic.Int64 // pages fetched this run (for max_pages)
	pagesOut atomic.Int64 // page leases handed to workers and not yet finished (for max_pages)
	reading  sitemapsOut  // sitemaps being read, whose hosts' links wait for them
	stats    runStats
	// relinkWait is how often a daemon looks at its mirror after a change:
	// it is relinked then if the crawl is idle, else once a daemon.recrawl
	// has passed since the last relink (see relinkEvery).
	relinkWait time.Duration
	reloaded   chan struct{} // Reload's word to relinkEvery
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
	c := &Crawler{
		cfg: cfg, opts: opts, log: opts.Logger, now: opts.Now,
		agent:   ProductToken(cfg.UserAgent),
		metrics: newMetrics(),
		wakeCh:  make(chan struct{}, 1),
		cpu:     make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1)),
		stats:   newRunStats(),

		relinkWait: time.Minute,
		reloaded:   make(chan struct{}, 1),
	}
	st, err := storage.Open(cfg.StateDir, storage.StateOptions{PageSize: frontier.PageSize})
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

func (c *Crawler) open() error {
	var err error
	if c.front, err = frontier.New(c.state.DB(), frontier.Options{}); err != nil {
		return fmt.Errorf("open frontier: %w", err)
	}
	sc, err := newScope(c.cfg, c.now)
	if err != nil {
		return err
	}
	c.live.Store(&liveConfig{Config: c.cfg, scope: sc})
	start := c.now()
	c.gate = politeness.New(gateConfig(c.cfg), start)
	c.robots = politeness.NewRobotsCache(c.agent, 10000)
	if c.cfg.Daemon.Enabled {
		c.robots.SetMaxAge(c.cfg.Daemon.Recrawl)
	}
	c.fetch = newFetcher(c.cfg.UserAgent, c.cfg.Fetch.Timeout, int64(c.cfg.Fetch.MaxBody), c.cfg.Politeness.MaxPerHost)
	if c.out, err = openOutputs(c.cfg, c.opts, c.log); err != nil {
		return err
	}
	return c.restoreHosts(start)
}

func gateConfig(cfg Config) politeness.Config {
	return politeness.Config{
		Delay:           cfg.Politeness.Delay,
		MaxPerHost:      cfg.Politeness.MaxPerHost,
		HonorCrawlDelay: cfg.Politeness.HonorCrawlDelay,
		GiveUp:          cfg.Politeness.RetryAfterMax,
	}
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
// back to the queue, and the state is flushed. Run returns only after its
// goroutines have stopped.
func (c *Crawler) Run(ctx context.Context) (Summary, error) {
	started := c.now()
	if err := c.seed(); err != nil {
		return Summary{}, err
	}
	work := make(chan *frontier.Lease)
	var wg sync.WaitGroup
	for range c.cfg.Fetch.Workers {
		wg.Go(func() {
			for l := range work {
				kind, origin := l.Kind, l.Origin
				c.visit(ctx, l)
				c.handedBack(kind, origin)
				c.wake()
			}
		})
	}
	stopProgress := c.startProgress(ctx)
	stopRelink := c.relinkEvery(ctx)
	err := c.dispatch(ctx, work)
	close(work)
	wg.Wait()
	stopRelink()
	stopProgress()
	var broken int
	if ctx.Err() == nil && err == nil && !c.cfg.Daemon.Enabled {
		if !c.limitReached() {
			if perr := c.recordParked(); perr != nil {
				err = fmt.Errorf("record the URLs of parked hosts: %w", perr)
			}
		} else if c.fetched.Load() > 0 {
			if perr := c.recordLeft(); perr != nil {
				err = fmt.Errorf("record the URLs left at max_pages: %w", perr)
			}
		}
		// The pass is over: the mirror's links can point at its files.
		report, rerr := c.relinkMirror()
		err, broken = errors.Join(err, rerr), len(report.Broken)+report.Unlisted
	}
	if ferr := c.out.flush(); ferr != nil {
		err = errors.Join(err, ferr)
	}
	sum := c.summary(started)
	sum.BrokenLinks = broken
	return sum, err
}

// wake tells the dispatcher that something changed: a worker finished, or a
// host became ready.
func (c *Crawler) wake() {
	select {
	case c.wakeCh <- struct{}{}:
	default:
	}
}

// dispatch hands leases to the workers as hosts become ready, and returns
// when there is nothing left to do, a limit is hit, or ctx is cancelled.
func (c *Crawler) dispatch(ctx context.Context, work chan<- *frontier.Lease) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if ctx.Err() != nil {
			return nil
		}
		if !c.cfg.Daemon.Enabled && c.limitReached() {
			c.log.Info("page limit reached", "max_pages", c.conf().Scope.MaxPages)
			return nil
		}
		now := c.now()
		wakeup := c.front.Wake()
		busy := c.busy.Load() // before Next: a worker ending after it wakes us
		l, idle, err := c.front.Next(now)
		if err != nil {
			return fmt.Errorf("frontier: %w", err)
		}
		if l != nil && c.reading.hold(l, c) {
			continue // the host waits for its sitemap; others go on
		}
		if l != nil && c.pagesHeld(l) {
			// Each page max_pages allows is fetched or being fetched:
			// this one waits for a visit to end, which may not count.
			if err := c.front.Release(l, time.Time{}); err != nil {
				return fmt.Errorf("frontier: %w", err)
			}
			c.front.SetReady(l.Origin, now)
			select {
			case <-c.wakeCh:
			case <-ctx.Done():
			}
			continue
		}
		if l != nil {
			c.handedOut(l.Kind, l.Origin)
			select {
			case work <- l:
				continue
			case <-ctx.Done():
				c.handedBack(l.Kind, l.Origin)
				return c.front.Release(l, time.Time{})
			}
		}
		if busy == 0 && idle.Until.IsZero() && !c.cfg.Daemon.Enabled {
			return nil // drained, or only parked hosts are left
		}
		wait := time.Minute
		if !idle.Until.IsZero() {
			wait = min(max(idle.Until.Sub(now), time.Millisecond), time.Minute)
		}
		timer.Reset(wait)
		select {
		case <-wakeup:
		case <-c.wakeCh:
		case <-timer.C:
		case <-ctx.Done():
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// handedOut counts a lease of kind and origin handed to a worker: in busy,
// and in pagesOut or reading by its kind.
func (c *Crawler) handedOut(kind frontier.Kind, origin string) {
	c.busy.Add(1)
	if kind == frontier.KindPage {
		c.pagesOut.Add(1)
	} else {
		c.reading.start(origin)
	}
}

// handedBack undoes handedOut once the lease is finished or not handed out
// after all.
func (c *Crawler) handedBack(kind frontier.Kind, origin string) {
	if kind == frontier.KindPage {
		c.pagesOut.Add(-1)
	} else {
		c.reading.end(origin, c)
	}
	c.busy.Add(-1)
}

// pagesHeld reports whether page lease l must wait because the pages
// fetched and those being fetched make max_pages already (ad hoc only), so
// that workers in flight cannot overshoot the limit.
func (c *Crawler) pagesHeld(l *frontier.Lease) bool {
	most := c.conf().Scope.MaxPages
	return most > 0 && !c.cfg.Daemon.Enabled && l.Kind == frontier.KindPage &&
		c.fetched.Load()+c.stats.doneBefore+c.pagesOut.Load() >= int64(most)
}

// recordLeft gives each URL that max_pages left queued an inventory record
// saying so, so that an audit sees every URL found. They stay queued: a
// run with a larger max_pages fetches them, and its records come later.
func (c *Crawler) recordLeft() error {
	now := c.now()
	return c.front.Pending(func(it frontier.Item) error {
		rec := storage.Record{
			URL: it.Request, Depth: it.Depth, FoundVia: storage.FoundVia(it.Via.String()),
			Referrer: it.Referrer, InSitemap: it.InSitemap, FetchedAt: now,
			Error: "not fetched: max_pages reached",
		}
		rec.Lastmod, _ = time.Parse(time.RFC3339, it.Lastmod)
		c.out.inventory(rec)
		return nil
	})
}

func (c *Crawler) limitReached() bool {
	most := c.conf().Scope.MaxPages
	return most > 0 && c.fetched.Load()+c.stats.doneBefore >= int64(most)
}
