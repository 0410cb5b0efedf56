package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/robots"
	"github.com/politecrawl/crawler/storage/warc"
)

// errOutOfScope refuses a robots.txt redirect to a host the crawl may not
// contact.
var errOutOfScope = errors.New("redirect to a host out of scope")

// robotsFor returns the robots.txt group that applies to the lease's host.
// When robots.txt must be fetched first (this worker does it, a request of
// its own, so the page waits its turn), is being fetched by another worker,
// or is unreachable, it returns false and the outcome that gives the lease
// back.
func (c *Crawler) robotsFor(ctx context.Context, l *frontier.Lease, now time.Time) (*robots.Group, outcome, bool) {
	act, g, st := c.hosts.robots.Lookup(l.Origin, now)
	switch act {
	case politeness.RobotsWait:
		c.hosts.awaitRobots(l.Origin, now)
		return nil, release(time.Time{}), false
	case politeness.RobotsFetch:
		c.readRobots(ctx, l.Origin, now)
		return nil, release(time.Time{}), false
	}
	if st.DisallowAll {
		// Unreachable (429, 5xx, no answer): nothing but robots.txt is
		// requested until it answers well.
		// The host waits, not the URL: it keeps its place, and a last
		// call (hosts.lastCall) that brings the host forward finds it.
		c.hosts.robotsUnreachable(l.Origin, st.NextFetch)
		return nil, release(time.Time{}), false
	}
	return g, outcome{}, true
}

// readRobots fetches origin's robots.txt, unless an answer shared from
// another host's fetch serves, and stores what the policy makes of it.
func (c *Crawler) readRobots(ctx context.Context, origin string, now time.Time) {
	if c.shared != nil && c.shared.robotsAwaited(origin, now) {
		return // answered, given up on, or still awaited: see awaitRobots
	}
	if f, asked, ok := c.hosts.sharedRobots(origin+"/robots.txt", origin, now); ok {
		// Fetched a moment ago, where another host's robots.txt
		// redirects: not fetched twice. Its age counts from when that
		// fetch was asked for.
		c.storeRobots(origin, f, asked, now)
		return
	}
	if c.shared != nil {
		// Fetched a moment ago by another worker: by the worker that
		// held the host before, or for a host whose robots.txt
		// redirects here.
		if f, asked, ok := c.shared.sharedRobots(origin+"/robots.txt", now, true); ok {
			c.storeRobots(origin, f, asked, now)
			return
		}
	}
	if ok, _ := c.x.try(origin, now); !ok {
		c.hosts.robots.Abandon(origin)
		c.hosts.ready(origin, now) // a lease that waited for this fetch may have put the host off
		return
	}
	f, asked, key, err := c.fetchRobots(ctx, origin, now)
	defer c.hosts.share.settle(key, origin)
	var elsewhere *robotsElsewhere
	switch {
	case errors.As(err, &elsewhere):
		c.shared.awaitRobots(origin, *elsewhere, asked)
		return
	case err != nil:
		c.hosts.robots.Abandon(origin) // stopping
		c.hosts.ready(origin, c.now())
		return
	}
	c.storeRobots(origin, f, asked, c.now())
}

// fetchRobots fetches origin's robots.txt on the slot the caller holds,
// following its redirects (RFC 9309 §2.3.1.2) each on a slot of its own
// host, through the one exchange. It returns the answer, when the fetch
// that got it was asked for, and the robots.txt URL it ended at; the error
// is for a crawl that is stopping.
func (c *Crawler) fetchRobots(ctx context.Context, origin string, asked time.Time) (robots.Fetch, time.Time, string, error) {
	u := &url.URL{Path: "/robots.txt"}
	if o, err := url.Parse(origin); err == nil {
		u.Scheme, u.Host = o.Scheme, o.Host
	}
	held := origin
	for hop := 0; ; hop++ {
		var f robots.Fetch
		var next *url.URL
		key := robotsKey(u)
		resp, _, err := c.x.do(ctx, held, request{url: u.String(), robots: true, limit: robots.MaxSize, timeout: c.conf().Fetch.Timeout}, func(resp *response, err error) {
			f = robotsAnswer(resp, err, c.now())
			f.Redirects = hop
			if err == nil {
				next = redirectTarget(u, resp)
			}
			if next == nil || hop == robots.MaxRedirects {
				next = nil
				// Before the slot is free: the target's own host must
				// find the answer, not fetch it again.
				c.hosts.share.put(key, origin, f, asked, c.now())
			}
		})
		if err := ctx.Err(); err != nil {
			return robots.Fetch{}, asked, key, err
		}
		if err == nil {
			c.archive(u, resp) // after the slot is free: the host's next request need not wait for the disk
		}
		if next == nil {
			if c.shared != nil {
				c.shared.shareRobots(key, f, asked)
			}
			return f, asked, key, nil
		}
		// A redirect hop is a request of its own: it waits its host's turn.
		target := originOf(next)
		if c.conf().scope.checkStart(target) != "" && !c.requisiteRobots(origin, target) {
			err := fmt.Errorf("fetch %s: %w: %s", next, errOutOfScope, target)
			c.log.Warn("robots.txt not fetched", "host", origin, "err", err)
			return robots.Fetch{Err: err, Redirects: hop}, asked, key, nil
		}
		if sf, sAsked, ok := c.hosts.sharedRobots(robotsKey(next), origin, c.now()); ok {
			sf.Redirects = hop + 1
			return sf, sAsked, "", nil
		}
		if c.shared != nil && robotsKey(next) != "" {
			if !c.shared.mine(target) {
				// Another worker's host: its answer comes through the
				// cluster, once that worker has fetched it.
				return robots.Fetch{}, asked, key, &robotsElsewhere{key: robotsKey(next), hops: hop + 1}
			}
		}
		if err := c.x.wait(ctx, target); errors.Is(err, errHostParked) || errors.Is(err, errNotOurs) {
			err = fmt.Errorf("fetch %s: %w", next, err)
			c.log.Warn("robots.txt not fetched", "host", origin, "err", err)
			return robots.Fetch{Err: err, Redirects: hop}, asked, key, nil
		} else if err != nil {
			return robots.Fetch{}, asked, "", err
		}
		// The target's host may have fetched it while this hop waited.
		if sf, sAsked, ok := c.hosts.sharedRobots(robotsKey(next), origin, c.now()); ok {
			c.x.giveBack(target)
			sf.Redirects = hop + 1
			return sf, sAsked, "", nil
		}
		held, u = target, next
	}
}

// archive writes an exchange that is no URL's visit (robots.txt) to the
// WARC files, and its record to the index of payloads; failing to keep it
// stops the crawl, as any output's failure.
func (c *Crawler) archive(u *url.URL, resp *response) {
	if c.out.warc == nil {
		return
	}
	ref, err := c.out.saveWARC(u, resp, resp.sent, warc.Ref{})
	if err != nil {
		c.writeFailed(&writeError{output: "output.warc", err: err})
		return
	}
	if err := c.state.Digests.Add(u.String(), ref); err != nil {
		c.writeFailed(fmt.Errorf("state_dir %s: %w", c.cfg.StateDir, err))
	}
}

// robotsAnswer is what one answer (or err, when none came) to a request
// for robots.txt says, for the policy of package robots.
func robotsAnswer(resp *response, err error, now time.Time) robots.Fetch {
	if err != nil {
		return robots.Fetch{Err: err}
	}
	return politeness.RobotsAnswer(resp.status, resp.header, resp.body, now)
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// storeRobots stores what the policy makes of robots.txt fetch f of
// origin, asked for at asked and answered at done, and applies it: its
// Crawl-delay, its Sitemap: lines, giving up on the host.
func (c *Crawler) storeRobots(origin string, f robots.Fetch, asked, done time.Time) {
	st, crawlDelay := c.hosts.learnRobots(origin, f, asked, done)
	c.hosts.retryAfterAsked(origin, f, done)
	if st.Result == robots.ResultOK && c.conf().scope.checkStart(origin) == "" {
		// Before the state is saved: a kill in between must not lose them.
		// (A host out of scope, asked only to check links to it, has no
		// sitemaps read.)
		c.seedSitemaps(origin, st.Rules().Sitemaps())
	}
	c.hosts.saveRobots(origin, st)
	if reason := c.giveUpOn(st, crawlDelay, done); reason != "" && !c.hosts.gate.Parked(origin) {
		c.hosts.park(origin, reason)
	}
	c.hosts.ready(origin, done)
}

// originOf is scheme://host[:port] of u, canonical.
func originOf(u *url.URL) string {
	if c, err := frontier.Canonicalize(u.Scheme+"://"+u.Host+"/", 0); err == nil {
		return c.Origin
	}
	return u.Scheme + "://" + u.Host
}

// giveUpOn says why an ad hoc crawl gives up on a host after fetching its
// robots.txt, or "": a robots.txt that asks (by Retry-After or
// Crawl-delay) for a wait longer than politeness.retry_after_max. One that
// keeps failing is asked again while other hosts have work, and given up on
// at the end (hosts.lastCall). A daemon waits instead.
func (c *Crawler) giveUpOn(st robots.State, crawlDelay time.Duration, now time.Time) string {
	cfg := c.conf()
	if cfg.Daemon.Enabled {
		return ""
	}
	switch most := cfg.Politeness.RetryAfterMax; {
	case st.DisallowAll && st.NextFetch.Sub(now) > most:
		return fmt.Sprintf("robots.txt unreachable (%s), next try in %s, past retry_after_max %s",
			robotsFailure(st), st.NextFetch.Sub(now).Round(time.Second), most)
	case cfg.Politeness.HonorCrawlDelay && crawlDelay > most:
		return fmt.Sprintf("Crawl-delay of %s exceeds retry_after_max %s", crawlDelay, most)
	}
	return ""
}

// robotsFailure says how the last fetch of robots.txt failed.
func robotsFailure(st robots.State) string {
	if st.Error != "" {
		return st.Error
	}
	return fmt.Sprintf("status %d", st.Status)
}
