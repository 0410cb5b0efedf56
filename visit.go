package crawler

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/storage"
)

// visit takes one leased URL from the robots check to what became of it,
// as a flat pipeline of steps each of which may end it: in scope, not
// fetched already, allowed by robots.txt, within the host's page budget,
// a slot of the host, the request, the answer. It returns the outcome;
// settle acts on it. A visit that makes no request readies its host at
// once, so that the host's next URL need not wait for the outcome to be
// written. budgeted says max_pages counts the page (leaseOut.budgeted, as
// counted when the lease was handed out).
func (c *Crawler) visit(ctx context.Context, l *frontier.Lease, budgeted bool) outcome {
	now := c.now()
	way := requisiteFetched // what is done with a page: fetched, once in scope
	if l.Requisite {
		way = c.requisiteWay(l.Origin)
	}
	switch {
	case way == requisiteChecked, !l.Requisite && c.external(l.Origin):
		return c.checkLink(ctx, l, now)
	case way == requisiteRefused:
		c.hosts.pass(l.Origin, now)
		return done(storage.Record{Error: "out of scope: " + rejectHost})
	}
	if why := c.conf().scope.checkStart(l.Origin); why != "" && !l.Requisite {
		// Queued before a reload or restart narrowed the scope: a host
		// out of scope is never contacted, robots.txt included.
		c.hosts.pass(l.Origin, now)
		return done(storage.Record{Error: "out of scope: " + why})
	}
	prev, known := c.previous(l)
	if known && !l.Revisit && l.Kind == frontier.KindPage {
		// Fetched already this crawl, as a sitemap: not fetched again.
		c.hosts.pass(l.Origin, now)
		return done(storage.Record{Status: prev.Status, FinalURL: prev.FinalURL, ContentType: prev.ContentType,
			Robots: storage.RobotsAllowed, Error: "fetched already, as a sitemap"})
	}
	group, o, ok := c.robotsFor(ctx, l, now)
	if !ok {
		return o
	}
	if c.hosts.firstSitemaps(l) {
		return release(time.Time{})
	}
	if !group.Allowed(l.Request) {
		c.obs.disallow()
		c.hosts.pass(l.Origin, now)
		return done(storage.Record{Robots: storage.RobotsDisallowed, Error: "disallowed by robots.txt"})
	}
	if budget := c.conf().Scope.MaxPagesPerHost; budget > 0 && !l.Requisite && c.hosts.pagesOf(l.Origin) >= budget {
		c.obs.reject("host-budget")
		c.hosts.pass(l.Origin, now)
		return done(storage.Record{Robots: storage.RobotsAllowed, Error: "over the per-host page budget"})
	}
	if resp, ok := c.fetchedForRender(l); ok {
		// A render asked for it this run, through the same path: not
		// asked again.
		c.hosts.pass(l.Origin, now)
		return c.answer(ctx, l, resp, prev, known)
	}
	if ok, at := c.x.try(l.Origin, now); !ok {
		return release(at)
	}
	if o, ok := c.takePage(ctx, budgeted); !ok {
		c.x.giveBack(l.Origin)
		return o
	}
	resp, out, err := c.x.do(ctx, l.Origin, c.pageRequest(l, prev, known), nil)
	if err != nil && ctx.Err() != nil {
		return release(time.Time{}) // stopping: the URL goes back, uncounted
	}
	if err == nil {
		c.obs.page(resp.status)
	} else {
		c.obs.page(0)
	}
	if o, ok := c.unanswered(l, resp, out, err); ok {
		return o
	}
	return c.answer(ctx, l, resp, prev, known)
}

// unanswered is what becomes of a request whose answer is not one to act
// on: a failure (5xx, 429, a network error) tried again later, when the
// gate says (out.RetryAt: the URL's own backoff, after the host's wait if
// it has one), fetch.retries times; or a network error for good. ok is
// false when resp is to be acted on.
func (c *Crawler) unanswered(l *frontier.Lease, resp *response, out politeness.Outcome, err error) (outcome, bool) {
	switch {
	case out.Failed && l.Attempts < c.conf().Fetch.Retries:
		return retry(out.RetryAt), true
	case err != nil:
		o := done(storage.Record{Robots: storage.RobotsAllowed, Error: errorText(err)})
		o.noAnswer = true
		return o, true
	}
	return outcome{}, false
}

// previous is the page record of the lease's URL, if it has one.
func (c *Crawler) previous(l *frontier.Lease) (storage.Page, bool) {
	prev, known, err := c.pages.Get(l.Key)
	if err != nil {
		c.log.Warn("read page record", "url", l.Request, "err", err)
	}
	return prev, known
}

// pageRequest is the request for a page or sitemap lease. A revisit asks
// whether what was fetched changed; validators of an error answer are not
// asked about, nor those of a body the WARC files do not hold (WARC turned
// on for an existing state_dir), whose 304 would be a revisit of nothing.
func (c *Crawler) pageRequest(l *frontier.Lease, prev storage.Page, known bool) request {
	r := request{url: l.Request, limit: c.bodyLimit(l.Kind), timeout: c.conf().Fetch.Timeout, attempt: l.Attempts}
	if known && prev.Status >= 200 && prev.Status < 300 && c.out.archived(l.Request, prev.WARC) {
		r.etag, r.lastModified = prev.ETag, prev.LastModified
	}
	return r
}

// errorText is the inventory's error for a failed request.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return err.Error()
}

// bodyLimit is how much of a body is read: fetch.max_body, or for a
// sitemap at least sitemap_limits.max_bytes, so the sitemap's own cap
// decides.
func (c *Crawler) bodyLimit(k frontier.Kind) int64 {
	if k == frontier.KindSitemap {
		return max(int64(c.conf().Fetch.MaxBody), int64(c.conf().SitemapLimits.MaxBytes)+1)
	}
	return int64(c.conf().Fetch.MaxBody)
}
