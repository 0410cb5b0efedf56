package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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
	ok, at := c.gate.Acquire(origin, now)
	if !ok {
		c.robots.Abandon(origin)
		c.putBack(l, at, now)
		return
	}
	held, first := origin, true // the origin whose slot this worker holds
	before := func(ctx context.Context, u *url.URL) error {
		if first {
			first = false
			return nil // the slot taken above
		}
		// A redirect hop is a request of its own: it waits its host's turn.
		target := originOf(u)
		if c.conf().scope.check(u, target, 0) == rejectHost {
			return fmt.Errorf("%w: %s", errOutOfScope, target)
		}
		c.gate.Release(held, c.now(), politeness.Result{Status: 301})
		c.hostReady(held, c.now())
		held = ""
		if err := c.acquireWaiting(ctx, target); err != nil {
			return err
		}
		held = target
		return nil
	}
	fctx, cancel := context.WithTimeout(ctx, c.conf().Fetch.Timeout)
	f, err := politeness.FetchRobots(fctx, c.fetch.client, origin, c.conf().UserAgent, before)
	cancel()
	done := c.now()
	if held != "" {
		c.gate.Release(held, done, politeness.Result{Status: f.Status, Err: f.Err})
	}
	if ctx.Err() != nil {
		c.robots.Abandon(origin)
		c.release(l, time.Time{})
		c.hostReady(origin, done)
		return
	}
	if err != nil {
		// Refused (a redirect out of scope): robots.txt cannot be read,
		// so the host is treated as unreachable and tried again later.
		c.log.Warn("robots.txt not fetched", "host", origin, "err", err)
		f = robots.Fetch{Err: err}
	}
	c.countFetch(robotsResponse(f), f.Err)
	st := c.robots.Store(origin, f, done)
	c.metrics.robots.WithLabelValues(string(st.Result)).Inc()
	d, _ := st.Rules().ForAgent(c.conf().UserAgent).CrawlDelay()
	c.gate.SetCrawlDelay(origin, d, done)
	c.saveRobots(origin, st)
	if st.DisallowAll && !c.conf().Daemon.Enabled && st.Failures >= adHocRobotsTries {
		// An ad hoc crawl does not wait hours for a robots.txt that keeps
		// failing: the host is given up, and the summary says so.
		reason := fmt.Sprintf("robots.txt unreachable %d times (%s)", st.Failures, robotsFailure(st))
		c.gate.Park(origin, reason)
		c.park(origin, reason)
	}
	if st.Result == robots.ResultOK {
		c.seedSitemaps(origin, st.Rules().Sitemaps())
	}
	c.release(l, time.Time{})
	c.hostReady(origin, done)
}

// acquireWaiting takes a slot of origin, waiting for its turn: only for
// the redirect hops of robots.txt, which cannot go back to the queue.
func (c *Crawler) acquireWaiting(ctx context.Context, origin string) error {
	for {
		ok, at := c.gate.Acquire(origin, c.now())
		if ok {
			return nil
		}
		wait := time.Second
		if !at.IsZero() {
			wait = max(at.Sub(c.now()), time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// robotsResponse is a robots.txt fetch as countFetch sees it.
func robotsResponse(f robots.Fetch) *response {
	if f.Err != nil {
		return nil
	}
	return &response{status: f.Status, body: f.Body}
}

// originOf is scheme://host[:port] of u, canonical.
func originOf(u *url.URL) string {
	if c, err := frontier.Canonicalize(u.Scheme+"://"+u.Host+"/", 0); err == nil {
		return c.Origin
	}
	return u.Scheme + "://" + u.Host
}

// robotsFailure says how the last fetch of robots.txt failed.
func robotsFailure(st robots.State) string {
	if st.Error != "" {
		return st.Error
	}
	return fmt.Sprintf("status %d", st.Status)
}
