package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/robots"
)

// adHocRobotsTries is how many fetches of an unreachable robots.txt an ad
// hoc crawl makes before it parks the host (robots.RetryMin apart).
const adHocRobotsTries = 2

// errOutOfScope refuses a robots.txt redirect to a host the crawl may not
// contact.
var errOutOfScope = errors.New("redirect to a host out of scope")

// robotsFor returns the robots.txt group that applies to the lease's host,
// fetching robots.txt first when it is due. When it returns false the lease
// has gone back to the queue: robots.txt was just fetched (a request, so the
// page waits its turn), another worker is fetching it, or it is unreachable
// and the host waits until it is tried again.
func (c *Crawler) robotsFor(ctx context.Context, l *frontier.Lease, now time.Time) (*robots.Group, bool) {
	act, g, st := c.robots.Lookup(l.Origin, now)
	switch act {
	case politeness.RobotsWait:
		// The worker fetching robots.txt makes the host ready when done.
		c.release(l, time.Time{})
		return nil, false
	case politeness.RobotsFetch:
		c.fetchRobots(ctx, l, now)
		return nil, false
	}
	if st.DisallowAll {
		// Unreachable (429, 5xx, no answer): nothing but robots.txt is
		// requested until it answers well.
		c.gate.Wait(l.Origin, st.NextFetch, politeness.WhyRobots)
		c.putBack(l, st.NextFetch, now)
		return nil, false
	}
	return g, true
}

// fetchRobots fetches the lease's host's robots.txt, through the gate like
// every request (redirect hops included), stores what the policy makes of
// it, and puts the lease back.
func (c *Crawler) fetchRobots(ctx context.Context, l *frontier.Lease, now time.Time) {
	origin := l.Origin
	if f, asked, ok := c.sharedRobots(origin+"/robots.txt", origin, now); ok {
		// Fetched a moment ago, where another host's robots.txt
		// redirects: not fetched twice. Its age counts from when that
		// fetch was asked for.
		c.storeRobots(l, f, asked, now)
		return
	}
	ok, at := c.gate.Acquire(origin, now)
	if !ok {
		c.robots.Abandon(origin)
		c.putBack(l, at, now)
		return
	}
	// held is the origin whose slot this worker holds: before changes it
	// between hops, the trace reads it from the transport's goroutine.
	// sentAt is when the held slot's request went out, zero before.
	// late is the origin whose slot was released before its request was
	// seen going out, "" when none.
	var mu sync.Mutex
	var sentAt time.Time
	held, late, first := origin, "", true
	hold := func(o string) { mu.Lock(); held, late, sentAt = o, "", time.Time{}; mu.Unlock() }
	// drop clears held before its slot is released: net/http may call
	// WroteHeaders after the fetch returned (a timeout firing while the
	// headers are written), and a Sent after the Release would count as
	// another request's. Such a send is told as SentLate, to late.
	drop := func() (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		h, sent := held, !sentAt.IsZero()
		held, late = "", ""
		if !sent {
			late = h
		}
		return h, sent
	}
	// last is the URL of the latest hop; shared the answer reused for it,
	// sharedAsked when the fetch that got that answer was asked for.
	var last *url.URL
	var shared robots.Fetch
	var sharedAsked time.Time
	hops := 0
	before := func(ctx context.Context, u *url.URL) error {
		last = u
		if first {
			first = false
			return nil // the slot taken above
		}
		hops++
		// A redirect hop is a request of its own: it waits its host's turn.
		target := originOf(u)
		if c.conf().scope.check(u, target, 0) == rejectHost {
			return fmt.Errorf("%w: %s", errOutOfScope, target)
		}
		prev, _ := drop()
		c.gate.Release(prev, c.now(), politeness.Result{Status: 301})
		c.hostReady(prev, c.now())
		if f, asked, ok := c.sharedRobots(robotsKey(u), origin, c.now()); ok {
			shared, shared.Redirects, sharedAsked = f, hops, asked
			return errRobotsShared
		}
		if err := c.acquireWaiting(ctx, target); err != nil {
			return err
		}
		// The target's host may have fetched it while this hop waited.
		if f, asked, ok := c.sharedRobots(robotsKey(u), origin, c.now()); ok {
			c.gate.Release(target, c.now(), politeness.Result{Status: 200, Unsent: true})
			c.hostReady(target, c.now())
			shared, shared.Redirects, sharedAsked = f, hops, asked
			return errRobotsShared
		}
		hold(target)
		return nil
	}
	trace := &httptrace.ClientTrace{WroteHeaders: func() {
		t := time.Now()
		mu.Lock()
		h := held
		switch {
		case h != "" && sentAt.IsZero():
			sentAt = t
			c.gate.Sent(h, t) // under mu: drop cannot come in between
		case h == "" && late != "":
			c.gate.SentLate(late, t) // released already: the counts stay
			late = ""
		default:
			h = ""
		}
		mu.Unlock()
		if h != "" {
			c.hostReady(h, t)
		}
	}, GotFirstResponseByte: func() {
		t := time.Now()
		mu.Lock()
		h, sent := held, sentAt
		mu.Unlock()
		if h != "" && !sent.IsZero() {
			c.gate.Answered(h, sent, t)
		}
	}}
	fctx, cancel := context.WithTimeout(httptrace.WithClientTrace(ctx, trace), c.conf().Fetch.Timeout)
	f, err := politeness.FetchRobots(fctx, c.fetch.client, origin, c.conf().UserAgent, before)
	cancel()
	done := c.now()
	took := done.Sub(now)
	key := ""
	if err == nil && last != nil {
		// Before the slot is released: the target's own host must find
		// it, and the robots cache has it only once stored below.
		key = robotsKey(last)
		c.share.put(key, origin, f, now, done)
	}
	defer c.share.settle(key, origin)
	if held, sent := drop(); held != "" {
		c.gate.Release(held, done, politeness.Result{Status: f.Status, Err: f.Err,
			RetryAfter: retryAfterHeader(f.RetryAfter), Unsent: !sent})
		if held != origin {
			c.hostReady(held, done)
		}
	}
	if ctx.Err() != nil {
		c.robots.Abandon(origin)
		c.release(l, time.Time{})
		c.hostReady(origin, done)
		return
	}
	asked := now
	if errors.Is(err, errRobotsShared) {
		f, err, asked = shared, nil, sharedAsked
	}
	if err != nil {
		// Refused (a redirect out of scope): robots.txt cannot be read,
		// so the host is treated as unreachable and tried again later.
		c.log.Warn("robots.txt not fetched", "host", origin, "err", err)
		f = robots.Fetch{Err: err}
	}
	c.countFetch(robotsResponse(f, took), f.Err)
	c.storeRobots(l, f, asked, done)
}

// storeRobots stores what the policy makes of robots.txt fetch f of the
// lease's host, asked for at asked and answered at done, applies it (its
// Crawl-delay, its Sitemap: lines, giving up on the host), and puts the
// lease back.
func (c *Crawler) storeRobots(l *frontier.Lease, f robots.Fetch, asked, done time.Time) {
	origin := l.Origin
	// A copy is fresh for its max-age from when it was asked for, as RFC
	// 9111 counts a response's age: counted from a slow answer's end, it
	// would outlive the server's own reckoning. Failures back off from
	// their end.
	stamp := done
	if r := robots.Classify(f); r == robots.ResultOK || r == robots.ResultMissing {
		stamp = asked
	}
	st := c.robots.Store(origin, f, stamp)
	c.metrics.robots.WithLabelValues(string(st.Result)).Inc()
	d, _ := st.Rules().ForAgent(c.agent).CrawlDelay()
	c.gate.SetCrawlDelay(origin, d, done)
	if st.Result == robots.ResultOK {
		// Before the state is saved: a kill in between must not lose them.
		c.seedSitemaps(origin, st.Rules().Sitemaps())
	}
	c.saveRobots(origin, st)
	if reason := c.giveUpOn(st, d, done); reason != "" {
		c.gate.Park(origin, reason)
		c.park(origin, reason)
	}
	c.release(l, time.Time{})
	c.hostReady(origin, done)
}

// acquireWaiting takes a slot of origin, waiting for its turn: only for
// the redirect hops of robots.txt, which cannot go back to the queue.
// A refusal with no time (a request in flight or not yet sent) waits for
// the gate to say the host changed, which a Sent or Release does at once.
func (c *Crawler) acquireWaiting(ctx context.Context, origin string) error {
	for {
		changed := c.gate.Changed(origin) // before Acquire: no change missed
		ok, at := c.gate.Acquire(origin, c.now())
		if ok {
			return nil
		}
		var due <-chan time.Time // nil, never ready, when at is zero
		var t *time.Timer
		if !at.IsZero() {
			t = time.NewTimer(max(at.Sub(c.now()), time.Millisecond))
			due = t.C
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// robotsResponse is a robots.txt fetch as countFetch sees it.
func robotsResponse(f robots.Fetch, took time.Duration) *response {
	if f.Err != nil {
		return nil
	}
	return &response{status: f.Status, body: f.Body, duration: took}
}

// originOf is scheme://host[:port] of u, canonical.
func originOf(u *url.URL) string {
	if c, err := frontier.Canonicalize(u.Scheme+"://"+u.Host+"/", 0); err == nil {
		return c.Origin
	}
	return u.Scheme + "://" + u.Host
}

// giveUpOn says why an ad hoc crawl gives up on a host after fetching its
// robots.txt, or "": a robots.txt that keeps failing, or that asks (by
// Retry-After or Crawl-delay) for a wait longer than
// politeness.retry_after_max. A daemon waits instead.
func (c *Crawler) giveUpOn(st robots.State, crawlDelay time.Duration, now time.Time) string {
	cfg := c.conf()
	if cfg.Daemon.Enabled {
		return ""
	}
	switch most := cfg.Politeness.RetryAfterMax; {
	case st.DisallowAll && st.Failures >= adHocRobotsTries:
		return fmt.Sprintf("robots.txt unreachable %d times (%s)", st.Failures, robotsFailure(st))
	case st.DisallowAll && st.NextFetch.Sub(now) > most:
		return fmt.Sprintf("robots.txt unreachable (%s), next try in %s, past retry_after_max %s",
			robotsFailure(st), st.NextFetch.Sub(now).Round(time.Second), most)
	case cfg.Politeness.HonorCrawlDelay && crawlDelay > most:
		return fmt.Sprintf("Crawl-delay of %s exceeds retry_after_max %s", crawlDelay, most)
	}
	return ""
}

// retryAfterHeader writes a wait back as a Retry-After value for the gate.
func retryAfterHeader(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(int64(d/time.Second), 10)
}

// robotsFailure says how the last fetch of robots.txt failed.
func robotsFailure(st robots.State) string {
	if st.Error != "" {
		return st.Error
	}
	return fmt.Sprintf("status %d", st.Status)
}
