package crawler

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/storage"
)

// visit takes one leased URL from the robots check to its recorded outcome.
// Every path through it ends the lease: Done, Retry or Release. A visit that
// makes no request readies its host before it writes its outcome, so that
// the host's next URL need not wait for the write.
func (c *Crawler) visit(ctx context.Context, l *frontier.Lease) {
	now := c.now()
	if why := c.conf().scope.check(mustParse(l.Request), l.Origin, 0); why == rejectHost {
		// Queued before a reload or restart narrowed the scope: a host
		// out of scope is never contacted, robots.txt included.
		c.hostReady(l.Origin, now)
		c.finish(l, storage.Record{Error: "out of scope: " + why}, nil, nil)
		return
	}
	if _, busy := c.inflight.LoadOrStore(l.Key, struct{}{}); busy {
		// The same URL, as the other kind (a sitemap linked as a page), is
		// being visited: this one waits for its record.
		c.hostReady(l.Origin, now)
		c.release(l, now.Add(100*time.Millisecond))
		return
	}
	defer c.inflight.Delete(l.Key)
	prev, known, err := c.pages.Get(l.Key)
	if err != nil {
		c.log.Warn("read page record", "url", l.Request, "err", err)
	}
	if known && !l.Revisit && l.Kind == frontier.KindPage {
		// Fetched already this crawl, as a sitemap: not fetched again.
		c.hostReady(l.Origin, now)
		c.finish(l, storage.Record{Status: prev.Status, FinalURL: prev.FinalURL, ContentType: prev.ContentType,
			Robots: storage.RobotsAllowed, Error: "fetched already, as a sitemap"}, nil, nil)
		return
	}
	group, ok := c.robotsFor(ctx, l, now)
	if !ok {
		return // the lease went back to the queue
	}
	if !group.Allowed(l.Request) {
		c.metrics.disallowed.Inc()
		c.stats.count(&c.stats.disallowed)
		c.hostReady(l.Origin, now)
		c.finish(l, storage.Record{Robots: storage.RobotsDisallowed, Error: "disallowed by robots.txt"}, nil, nil)
		return
	}
	if budget := c.conf().Scope.MaxPagesPerHost; budget > 0 && c.stats.pagesOf(l.Origin) >= budget {
		c.stats.reject("host-budget")
		c.metrics.rejected.WithLabelValues("host-budget").Inc()
		c.hostReady(l.Origin, now)
		c.finish(l, storage.Record{Robots: storage.RobotsAllowed, Error: "over the per-host page budget"}, nil, nil)
		return
	}
	if ok, at := c.gate.Acquire(l.Origin, now); !ok {
		c.putBack(l, at, now)
		return
	}
	c.hostReady(l.Origin, now)

	var guard sentGuard
	req := request{
		url: l.Request, limit: c.bodyLimit(l.Kind), timeout: c.conf().Fetch.Timeout,
		sent: func(t time.Time) {
			if guard.sent(c.gate, l.Origin, t) {
				c.hostReady(l.Origin, t) // the gate grants the next request from now on
			}
		},
		answered: func(t time.Time) {
			if sent := guard.sentAt(); !sent.IsZero() {
				c.gate.Answered(l.Origin, sent, t)
			}
		},
	}
	if known && prev.Status >= 200 && prev.Status < 300 {
		// A revisit, of a page or a sitemap, asks whether what was
		// fetched changed; validators of an error answer are not asked
		// about.
		req.etag, req.lastModified = prev.ETag, prev.LastModified
	}
	resp, ferr := c.fetch.get(ctx, req)
	done := c.now()
	res := gateResult(resp, ferr)
	res.Unsent = guard.release()
	out := c.gate.Release(l.Origin, done, res)
	c.hostReady(l.Origin, done)
	if ferr != nil && ctx.Err() != nil {
		c.release(l, done) // stopping: the URL goes back, uncounted
		return
	}
	c.countFetch(resp, ferr)
	if out.Parked != "" {
		c.park(l.Origin, out.Parked)
	}
	if retried := c.retryIfDue(l, resp, ferr, out); retried {
		return
	}
	if ferr != nil {
		rec := storage.Record{Robots: storage.RobotsAllowed}
		rec.Error = errorText(ferr)
		c.finish(l, rec, nil, nil)
		return
	}
	c.handle(ctx, l, resp, done, prev, known)
}

// sentGuard stands between one visit's request and the gate's Sent. net/http
// may call the WroteHeaders hook after Do returned, when a timeout fires
// while the headers are written: a Sent reaching the gate after the visit's
// Release would count as another request's, and end that one's hold before
// it went out. Once released, the guard passes a send on as SentLate, which
// keeps the interval from it and leaves the counts alone.
type sentGuard struct {
	mu       sync.Mutex
	at       time.Time // when the request went out; zero before
	released bool
}

// sent tells g that the request to origin went out at t, once, and reports
// whether it told it as Sent: after the visit released its slot it tells
// it as SentLate instead. The gate hears it under the guard's lock, so a
// release cannot come between the check and the telling.
func (s *sentGuard) sent(g *politeness.Gate, origin string, t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.at.IsZero() {
		return false
	}
	s.at = t
	if s.released {
		g.SentLate(origin, t)
		return false
	}
	g.Sent(origin, t)
	return true
}

// sentAt is when the request went out; zero before.
func (s *sentGuard) sentAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at
}

// release closes the guard before the slot is released, and reports
// whether the request never went out (Result.Unsent).
func (s *sentGuard) release() (unsent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = true
	return s.at.IsZero()
}

func gateResult(resp *response, err error) politeness.Result {
	if err != nil {
		return politeness.Result{Err: err}
	}
	return politeness.Result{Status: resp.status, RetryAfter: resp.header.Get("Retry-After")}
}

// retryIfDue puts the URL back when its answer asks for another try: 429 and
// 503 wait for the host as long as it asked (without counting an attempt,
// the host's own give-up bounds them); other 5xx answers and network errors
// are tried fetch.retries times with backoff.
func (c *Crawler) retryIfDue(l *frontier.Lease, resp *response, err error, out politeness.Outcome) bool {
	status := 0
	if resp != nil {
		status = resp.status
	}
	switch {
	case status == 429 || status == 503:
		c.persistWait(l.Origin, out.RetryAt)
		c.metrics.retries.Inc()
		c.release(l, out.RetryAt)
		return true
	case (err != nil || status >= 500) && l.Attempts < c.conf().Fetch.Retries:
		c.metrics.retries.Inc()
		if rerr := c.front.Retry(l, out.RetryAt); rerr != nil {
			c.fail("retry", rerr)
		}
		return true
	}
	return false
}

// handle records a response and queues what it leads to.
func (c *Crawler) handle(ctx context.Context, l *frontier.Lease, resp *response, now time.Time, prev storage.Page, known bool) {
	rec := storage.Record{
		Robots:      storage.RobotsAllowed,
		Status:      resp.status,
		ContentType: resp.header.Get("Content-Type"),
		Bytes:       int64(len(resp.body)),
		DurationMS:  resp.duration.Milliseconds(),
	}
	page := storage.Page{
		Key: l.Key, URL: l.Request, FinalURL: l.Request, Status: resp.status,
		ContentType: rec.ContentType, Length: int64(len(resp.body)),
		ETag: resp.header.Get("ETag"), LastModified: resp.header.Get("Last-Modified"),
		Depth: l.Depth, Referrer: l.Referrer, FetchedAt: now, Duration: resp.duration,
	}
	if known {
		page.Unchanged, page.WARC = prev.Unchanged, prev.WARC
		if prev.MirrorPath != "" {
			// The file an earlier visit saved stays as it is until a
			// new body replaces it or the page is gone: its type named
			// it, and it may have been relinked. An answer with no body
			// for the mirror (a redirect, an error) must not leave it to
			// be relinked again, which would read its relative links as
			// the site's.
			page.MirrorPath, page.ContentType, page.Relinked = prev.MirrorPath, prev.ContentType, prev.Relinked
		}
	}
	u := mustParse(l.Request)
	page.WARC = c.out.saveWARC(u, resp, resp.sent, page.WARC)
	var links []frontier.Item
	switch {
	case resp.status >= 300 && resp.status < 400 && resp.status != 304:
		links = c.redirect(l, resp, &rec)
		if rec.FinalURL != "" {
			page.FinalURL = rec.FinalURL // the next hop: the mirror links to the end of the chain
		}
	case resp.status == 304 && known:
		rec.NotModified = true
		c.metrics.notModified.Inc()
		warc := page.WARC
		page = prev
		page.FetchedAt, page.Unchanged, page.WARC = now, prev.Unchanged+1, warc
	case resp.status >= 200 && resp.status < 300:
		page.ContentType = rec.ContentType
		page.Hash = storage.ContentHash(resp.body)
		if known && prev.Hash == page.Hash {
			page.Unchanged = prev.Unchanged + 1
		} else {
			page.Unchanged = 0
		}
		if resp.truncated {
			rec.Error = "body cut at fetch.max_body"
		}
		if l.Kind == frontier.KindSitemap {
			c.parsing(func() { links = c.readSitemap(ctx, l, resp, &rec) })
		} else {
			c.parsing(func() { links = c.follow(l, resp, &page) })
			switch {
			case !c.mirroring():
			case page.Unchanged > 0 && prev.ContentType == page.ContentType && c.out.inMirror(page.MirrorPath):
				// The body the mirror holds, maybe relinked since:
				// a revisit of a server that sends no validators
				// leaves it as it is.
			default:
				page.MirrorPath, page.Relinked = c.out.saveMirror(u, resp), false
			}
		}
	case (resp.status == 404 || resp.status == 410) && known && l.Revisit:
		// Every revisit that finds the page missing says so, whether it
		// was there at the first visit or not: the last record of a URL
		// is its current state. The page keeps the type of its last
		// body, which named its mirror file.
		rec.Gone, page.ContentType = true, prev.ContentType
		if !c.conf().Daemon.KeepGone && prev.MirrorPath != "" {
			c.out.removeMirror(u, prev.ContentType)
			page.MirrorPath, page.Relinked = "", false
		}
	}
	if resp.status >= 200 && resp.status < 300 && l.Kind == frontier.KindPage {
		c.fetched.Add(1)
		c.stats.addHostPage(l.Origin)
	}
	c.finish(l, rec, links, &page)
}

// parsing runs parse, which reads a response's links, holding one of
// c.cpu's slots. Saving the body (file creation, whose cost is in the
// kernel and which one directory serialises) and writing the outcome
// (an fsync) hold none, so that they go on beside the next parse.
func (c *Crawler) parsing(parse func()) {
	c.cpu <- struct{}{}
	defer func() { <-c.cpu }()
	parse()
}

// redirect turns a 3xx answer into the next hop: a new frontier item with
// the depth of the URL that redirected, checked like any link. Loops end in
// the seen set; chains end at fetch.max_redirects.
func (c *Crawler) redirect(l *frontier.Lease, resp *response, rec *storage.Record) []frontier.Item {
	loc := strings.TrimSpace(resp.header.Get("Location"))
	if loc == "" {
		rec.Error = "redirect without Location"
		return nil
	}
	target, err := mustParse(l.Request).Parse(loc)
	if err != nil {
		rec.Error = "bad Location: " + err.Error()
		return nil
	}
	rec.FinalURL = target.String()
	if c.redirectsOf(l) >= c.conf().Fetch.MaxRedirects {
		rec.Error = "too many redirects"
		c.stats.reject("redirects")
		return nil
	}
	return c.admit(l, []link{{url: target, kind: linkRedirect}})
}

// follow extracts the links of an HTML page (and, for the mirror, the
// references of a stylesheet) unless robots meta tags or X-Robots-Tag say
// nofollow. A page's canonical URL and hreflang alternates go into its
// record.
func (c *Crawler) follow(l *frontier.Lease, resp *response, page *storage.Page) []frontier.Item {
	base := mustParse(l.Request)
	ct := resp.header.Get("Content-Type")
	switch {
	case isHTML(ct, resp.body):
		e := extractHTML(resp.body, ct, base, c.agent)
		page.Canonical, page.Hreflang = e.canonical, e.hreflang
		if c.conf().Links.HonorMetaRobots {
			if nf, _ := xRobotsTag(resp.header, c.agent); nf || e.nofollow {
				return c.admit(l, requisitesOnly(e.links))
			}
		}
		return c.admit(l, e.links)
	case isCSS(ct) && c.mirroring():
		return c.admit(l, extractCSS(resp.body, base))
	}
	return nil
}

func requisitesOnly(links []link) []link {
	var out []link
	for _, ln := range links {
		if ln.kind == linkRequisite {
			out = append(out, ln)
		}
	}
	return out
}

func (c *Crawler) mirroring() bool { return c.conf().Output.MirrorDir != "" && !c.opts.NoBodies }

// admit turns the links of a page into frontier items: canonical, in scope,
// not nofollow, each once. What is refused is counted by reason, and URLs
// refused by scope get an inventory record so an audit sees them.
func (c *Crawler) admit(parent *frontier.Lease, links []link) []frontier.Item {
	items := make([]frontier.Item, 0, len(links))
	seen := make(map[string]bool, len(links))
	for _, ln := range links {
		if ln.kind == linkRequisite && !c.mirroring() {
			continue
		}
		if c.cfg.Daemon.Enabled && ln.kind != linkRedirect && c.limitReached() {
			// A daemon at max_pages keeps revisiting what it has, and
			// takes no new pages.
			c.stats.reject("max-pages")
			continue
		}
		if ln.nofollow && c.conf().Links.HonorNofollow {
			c.stats.reject("nofollow")
			continue
		}
		ln.url.Fragment, ln.url.RawFragment = "", ""
		raw := ln.url.String()
		canon, err := frontier.Canonicalize(raw, c.conf().Scope.MaxURLLength)
		if err != nil {
			c.refuse(parent, raw, ln.kind, rejectReason(err))
			continue
		}
		if seen[canon.Key] || (strings.HasSuffix(canon.Key, "/robots.txt") && ln.kind != linkRedirect) {
			continue // robots.txt is fetched as robots.txt, not as a page
		}
		seen[canon.Key] = true
		depth, via := parent.Depth+1, frontier.ViaLink
		switch ln.kind {
		case linkRedirect:
			depth, via = parent.Depth, frontier.ViaRedirect
		case linkRequisite:
			// A page's images, scripts and stylesheets are part of it, not
			// a hop away: they are at its depth, so a mirror's pages at
			// max_depth are whole (as wget -p has them) and no URL is
			// fetched deeper than max_depth.
			depth = parent.Depth
		}
		if why := c.conf().scope.check(mustParse(canon.Request), canon.Origin, depth); why != "" {
			c.refuse(parent, raw, ln.kind, why)
			continue
		}
		kind := frontier.KindPage
		if ln.kind == linkRedirect {
			kind = parent.Kind
		}
		items = append(items, frontier.Item{
			URL: canon, Depth: depth, Via: via, Referrer: parent.Request,
			Kind: kind,
		})
	}
	return items
}

func rejectReason(err error) string {
	var re *frontier.URLError
	if errors.As(err, &re) {
		return string(re.Reason)
	}
	return "invalid"
}

// refuse counts a URL kept out of the frontier and records it once (per
// run, within a bounded memory) in the inventory.
func (c *Crawler) refuse(parent *frontier.Lease, raw string, kind linkKind, why string) {
	c.stats.reject(why)
	c.metrics.rejected.WithLabelValues(why).Inc()
	if !c.stats.firstRefusal(raw) {
		return
	}
	depth, via := parent.Depth+1, storage.FoundLink
	switch {
	case kind == linkRedirect:
		depth, via = parent.Depth, storage.FoundRedirect
	case kind == linkSitemap:
		depth, via = 0, storage.FoundSitemap
	}
	c.out.inventory(storage.Record{
		URL: raw, Depth: depth, FoundVia: via, Referrer: parent.Request,
		FetchedAt: c.now(), Error: "out of scope: " + why,
	})
}

// finish completes the lease with its record and the items it yielded, in
// one transaction with the page record.
func (c *Crawler) finish(l *frontier.Lease, rec storage.Record, items []frontier.Item, page *storage.Page) {
	now := c.now()
	rec.URL, rec.Depth, rec.Referrer = l.Request, l.Depth, l.Referrer
	rec.FoundVia, rec.InSitemap = storage.FoundVia(l.Via.String()), l.InSitemap
	rec.Lastmod, _ = time.Parse(time.RFC3339, l.Lastmod)
	rec.FetchedAt = now
	if rec.FinalURL == "" && rec.Status != 0 {
		rec.FinalURL = l.Request
	}
	outcome := frontier.Outcome{RevisitAt: c.revisitAt(l, rec, page, now)}
	c.dueWhenFound(items, now)
	if page != nil {
		outcome.Hook = c.pages.PutHook(*page)
	}
	// The record is written before the URL is done: a kill in between
	// repeats the visit and its record, but never loses the record.
	c.out.inventory(rec)
	if _, err := c.front.Done(l, outcome, items); err != nil {
		c.fail("complete "+l.Request, err)
		// The lease must still end: the URL is tried again later.
		if rerr := c.front.Retry(l, now.Add(time.Minute)); rerr != nil {
			c.fail("retry "+l.Request, rerr)
		}
		return
	}
	c.stats.count(&c.stats.done)
	c.wake()
}

// putBack returns a lease the gate refused, to be tried at at. A zero at
// means the host is full (it becomes ready when a request ends) or parked.
func (c *Crawler) putBack(l *frontier.Lease, at, now time.Time) {
	if at.IsZero() {
		c.release(l, now)
		return
	}
	c.metrics.politeWait.Add(at.Sub(now).Seconds())
	c.release(l, at)
	c.front.SetReady(l.Origin, at)
}

func (c *Crawler) release(l *frontier.Lease, at time.Time) {
	if err := c.front.Release(l, at); err != nil {
		c.fail("release "+l.Request, err)
	}
}

// hostReady tells the frontier when the gate will next let origin be asked.
func (c *Crawler) hostReady(origin string, now time.Time) {
	if at, ok := c.gate.Ready(origin, now); ok {
		c.front.SetReady(origin, at)
	}
}

// park gives up on a host: for good in an ad hoc crawl (the summary lists
// it); until the next pass in a daemon, which must not lose a host to a
// passing outage.
func (c *Crawler) park(origin, reason string) {
	if cfg := c.conf(); cfg.Daemon.Enabled {
		until := c.now().Add(cfg.Daemon.Recrawl)
		c.log.Warn("host resting until the next pass", "host", origin, "reason", reason, "until", until)
		c.gate.Unpark(origin)
		c.gate.Wait(origin, until, politeness.WhyBackoff)
		c.persistWait(origin, until)
		c.front.SetReady(origin, until)
		return
	}
	c.log.Warn("host parked", "host", origin, "reason", reason)
	if err := c.front.Park(origin, reason); err != nil {
		c.fail("park host", err)
	}
}

// recordParked ends an ad hoc crawl's URLs still queued on parked hosts,
// each with an inventory record that says why it was not fetched, so that
// an audit sees every URL found. It runs once the rest is drained; each
// host is unparked in the frontier only to hand its URLs out (Next at a time
// past any wait), and parked again, in the gate too, for a later resume.
func (c *Crawler) recordParked() error {
	for _, h := range c.front.Hosts() {
		if !h.Parked || h.Queued == 0 {
			continue
		}
		if err := c.front.Unpark(h.Origin); err != nil {
			return err
		}
		c.front.SetReady(h.Origin, time.Time{}) // the gate left it busy when it parked
		for {
			l, _, err := c.front.Next(farFuture)
			if err != nil {
				return err
			}
			if l == nil {
				break
			}
			// Only a parked host has URLs left, so l is of h.Origin.
			c.finish(l, storage.Record{Error: "not fetched: host parked: " + h.ParkReason}, nil, nil)
			c.front.SetReady(l.Origin, time.Time{})
		}
		if err := c.front.Park(h.Origin, h.ParkReason); err != nil {
			return err
		}
	}
	return nil
}

// farFuture is later than any wait the frontier may hold.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func (c *Crawler) persistWait(origin string, until time.Time) {
	if err := c.front.SetHostWait(origin, until); err != nil {
		c.fail("save host wait", err)
	}
}

// fail logs an error of the crawl's own state. The crawl goes on: what was
// not saved is fetched again after a restart.
func (c *Crawler) fail(what string, err error) {
	c.stats.count(&c.stats.stateErrors)
	c.log.Error(what, "err", err)
}

func (c *Crawler) countFetch(resp *response, err error) {
	if err != nil {
		c.metrics.fetched(0, 0, 0)
		c.stats.count(&c.stats.errors)
		return
	}
	c.metrics.fetched(resp.status, len(resp.body), resp.duration)
	c.stats.status(resp.status, len(resp.body))
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

// mustParse parses a URL the frontier made valid; it cannot fail, and an
// empty URL stands in if it ever did.
func mustParse(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		return &url.URL{}
	}
	return u
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

// redirectsOf is how many redirects led to the lease's URL: the chain of
// referrers, each recorded with a 3xx answer, that ends at it. It looks no
// further than max_redirects+1 hops.
func (c *Crawler) redirectsOf(l *frontier.Lease) int {
	if l.Via != frontier.ViaRedirect {
		return 0
	}
	n, ref := 0, l.Referrer
	for n <= c.conf().Fetch.MaxRedirects {
		u, err := frontier.Canonicalize(ref, 0)
		if err != nil {
			break
		}
		p, ok, err := c.pages.Get(u.Key)
		if err != nil || !ok || p.Status < 300 || p.Status > 399 {
			break
		}
		n++
		ref = p.Referrer
	}
	return n
}
