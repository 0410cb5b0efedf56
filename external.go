package crawler

import (
	"context"
	"errors"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
)

// external reports whether origin is a host out of scope whose URLs are
// queued only to check the links to them (scope.check_external).
func (c *Crawler) external(origin string) bool {
	return c.conf().Scope.CheckExternal && c.conf().scope.checkStart(origin) != ""
}

// checkLink asks a URL of a host out of scope whether it works, as
// scope.check_external has it (README, "What it promises"), or a page's
// requisite in a crawl that keeps none (requisiteWay): once, as
// politely as any request (its host's robots.txt, delay and waits), with
// HEAD, or GET when the server refuses HEAD (405, 501; its other links
// are then asked with GET), reading no body and following nothing: a
// redirect's record names its Location, which is not asked. 429, 503,
// other 5xx and network errors are tried again as a page's are. The answer is no page of the crawl: it counts toward no
// page budget, and keeps nothing but its inventory record.
func (c *Crawler) checkLink(ctx context.Context, l *frontier.Lease, now time.Time) outcome {
	group, o, ok := c.robotsFor(ctx, l, now)
	if !ok {
		return o
	}
	if !group.Allowed(l.Request) {
		c.obs.disallow()
		c.hosts.pass(l.Origin, now)
		return done(storage.Record{Robots: storage.RobotsDisallowed, Error: "disallowed by robots.txt"})
	}
	if ok, at := c.x.try(l.Origin, now); !ok {
		return release(at)
	}
	r := request{url: l.Request, head: !c.hosts.refusesHead(l.Origin), limit: 1, timeout: c.conf().Fetch.Timeout, attempt: l.Attempts}
	refused := func(resp *response, err error) bool {
		return err == nil && r.head && (resp.status == 405 || resp.status == 501)
	}
	resp, out, err := c.x.do(ctx, l.Origin, r, func(resp *response, err error) {
		if refused(resp, err) {
			// Known before the slot is free: the host's other links,
			// whose requests may start as soon as it is, go straight
			// to GET.
			c.hosts.headRefused(l.Origin)
		}
	})
	if refused(resp, err) {
		// Asked again with GET at once, in its turn.
		r.head = false
		if err = c.x.wait(ctx, l.Origin); err == nil {
			resp, out, err = c.x.do(ctx, l.Origin, r, nil)
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return release(time.Time{}) // stopping: the URL goes back, uncounted
	case errors.Is(err, errHostParked), errors.Is(err, errNotOurs):
		return release(time.Time{}) // the host was given up on: its URLs are recorded so
	}
	if o, ok := c.unanswered(l, resp, out, err); ok {
		return o
	}
	rec := storage.Record{
		Robots: storage.RobotsAllowed, Status: resp.status, ContentType: resp.header.Get("Content-Type"),
		DurationMS: resp.duration.Milliseconds(),
	}
	if redirectAnswer(resp.status) {
		if target, why := location(l, resp); target != nil {
			rec.FinalURL = target.String()
		} else {
			rec.Error = why
		}
	}
	return done(rec)
}
