package crawler

import (
	"errors"
	"fmt"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/frontier/cluster"
	"github.com/politecrawl/crawler/storage"
)

// outcomeKind says how a visit ended.
type outcomeKind uint8

const (
	outcomeDone    outcomeKind = iota // recorded: the URL is done (or due again, in a daemon)
	outcomeRetry                      // tried and failed: again at a time, one more attempt counted
	outcomeRelease                    // not tried (politeness, robots.txt, stopping): back to the queue
	outcomeFailed                     // what must be kept of it could not be written
)

// outcome is what became of a visit, for settle.
type outcome struct {
	kind     outcomeKind
	at       time.Time       // retry, release: when the URL is due again; zero for at once
	rec      storage.Record  // done: its inventory record (settle fills in the lease's fields)
	page     *storage.Page   // done: its page record, if it has a new one
	links    []frontier.Item // done: the URLs it leads to
	graph    []storage.Link  // done: the links its page holds, for the link graph
	err      error           // failed: the write that failed
	noAnswer bool            // done: the request got no answer (a network error, a timeout)
	final    bool            // done: a URL left unfetched, recorded as the crawl ends
}

func done(rec storage.Record) outcome { return outcome{kind: outcomeDone, rec: rec} }
func retry(at time.Time) outcome      { return outcome{kind: outcomeRetry, at: at} }
func release(at time.Time) outcome    { return outcome{kind: outcomeRelease, at: at} }
func failed(output string, err error) outcome {
	return outcome{kind: outcomeFailed, err: &writeError{output: output, err: err}}
}

// writeError is a failed write of an output the config asks for.
type writeError struct {
	output string // the config key: output.urls, output.mirror_dir, output.warc
	err    error
}

func (e *writeError) Error() string { return e.output + ": " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// settle acts on a visit's outcome: it is the one place that ends a lease
// (Done, Retry, Release). A URL is done only once what the config keeps of
// it is kept: its inventory record is written before Done commits, with
// its page record and the URLs it found, in one transaction. A failed
// write of an output or of the state ends the crawl (see stop): the URL
// stays queued, and the same command carries on once the cause is mended.
func (c *Crawler) settle(l *frontier.Lease, o outcome) {
	var err error
	switch o.kind {
	case outcomeRelease:
		err = c.front.Release(l, o.at)
	case outcomeRetry:
		c.obs.retry()
		c.log.Debug("a request failed: it is tried again later", "url", l.Request, "at", o.at)
		err = c.front.Retry(l, o.at)
	case outcomeFailed:
		c.writeFailed(o.err)
		err = c.front.Release(l, time.Time{})
	case outcomeDone:
		err = c.complete(l, o)
	}
	if err != nil {
		c.stop(fmt.Errorf("state_dir %s: %w", c.cfg.StateDir, err))
	}
	c.retrying.settled(l, o.kind, o.at)
	if !c.cfg.Daemon.Enabled && c.shared == nil && c.budget.reached() {
		c.drainReady(l, o)
	}
}

// drainReady readies, in the max_pages drain, the hosts of requisites that
// a settled lease gave back for a retry or found (a stylesheet's font):
// the drain may have put them off for the pages they have left, before
// these were queued. Readied, the dispatcher hands out a requisite first,
// or puts the host off again until its next retry (retrying.next).
func (c *Crawler) drainReady(l *frontier.Lease, o outcome) {
	now := c.now()
	if o.kind == outcomeRetry && l.Requisite {
		c.hosts.pass(l.Origin, now)
	}
	if o.kind != outcomeDone {
		return
	}
	readied := map[string]bool{}
	for _, it := range o.links {
		if it.Requisite && !readied[it.Origin] {
			readied[it.Origin] = true
			c.hosts.pass(it.Origin, now)
		}
	}
}

// complete writes a done URL's record and commits it done.
func (c *Crawler) complete(l *frontier.Lease, o outcome) error {
	now := c.now()
	rec := o.rec
	rec.URL, rec.Depth, rec.Referrer = l.Request, l.Depth, l.Referrer
	rec.FoundVia, rec.InSitemap, rec.LinkDepth = storage.FoundVia(l.Via.String()), l.InSitemap, linkDepthField(l.LinkDepth)
	rec.Lastmod = lastmodTime(l.Lastmod)
	rec.FetchedAt, rec.External = now, c.external(l.Origin) || (l.Requisite && c.conf().scope.checkStart(l.Origin) != "")
	if rec.FinalURL == "" && rec.Status != 0 {
		rec.FinalURL = l.Request
	}
	fo := frontier.Outcome{RevisitAt: c.revisitAt(o.page, now)}
	c.dueWhenFound(o.links, now)
	var target *frontier.Item // a redirect's next hop, followed
	if redirectAnswer(rec.Status) && len(o.links) == 1 && o.links[0].Via == frontier.ViaRedirect &&
		(c.shared == nil || c.shared.holds(o.links[0].Origin)) {
		// A hop to another worker's host is visited there: this chain's
		// record is written now, ending at the hop (README, "Several
		// machines"), rather than waiting here for a visit that never
		// comes, a copy more at each revisit of a daemon.
		target = &o.links[0]
	}
	recs, chainHook := c.chains.settle(l, rec, target)
	var pageHook, warcHook storage.Hook
	if o.page != nil {
		pageHook = c.pages.PutHook(*o.page)
		if c.out.warc != nil {
			// The record holding the page's payload, for the revisits
			// of the WARC writer (identical bodies, a 304).
			warcHook = c.state.Digests.AddHook(frontier.MustParse(l.Request).String(), o.page.WARC)
		} else if o.page.WARC.TargetURI == "" {
			// A body no WARC holds (this run keeps none): what an
			// earlier run archived for the URL is no original for a 304
			// to its new validators.
			warcHook = c.state.Digests.ForgetHook(frontier.MustParse(l.Request).String())
		}
	}
	fo.Hook = storage.Hooks(pageHook, chainHook, warcHook)
	// The records are written before the URL is done: a kill in between
	// repeats the visit and its records, but never loses them.
	if err := c.out.linkGraph(o.graph); err != nil {
		c.writeFailed(&writeError{output: "output.links", err: err})
		return c.front.Release(l, time.Time{})
	}
	for _, r := range recs {
		if err := c.out.inventory(r); err != nil {
			c.writeFailed(&writeError{output: "output.urls", err: err})
			return c.front.Release(l, time.Time{})
		}
	}
	// And those of the URLs the visit refused, which are held (refused):
	// a redirect whose chain goes on writes no record of its own yet.
	if err := c.out.flushInventory(); err != nil {
		c.writeFailed(&writeError{output: "output.urls", err: err})
		return c.front.Release(l, time.Time{})
	}
	links := o.links
	if c.shared != nil && !o.final {
		// What a successor must know is written before the frontier
		// commits it; a partition lost meanwhile is its new owner's.
		done := cluster.Done{Key: l.Key, Kind: l.Kind, RevisitAt: fo.RevisitAt}
		own, err := c.shared.found(l.Origin, o.links, &done)
		switch {
		case errors.Is(err, errNotOurs):
			// Its new owner's: a request in flight when the partition
			// was lost (a pause, a lease run out), made again there.
			c.shared.unwritten.Add(1)
			c.log.Debug("cluster: a URL done is left to its partition's new owner", "url", l.Request)
			return c.front.Release(l, time.Time{})
		case err != nil:
			// The server is away, or slow: the URL is fetched again
			// later, once it can be written (owns waits for the
			// connection).
			c.shared.unwritten.Add(1)
			c.log.Warn("cluster: write a URL done", "url", l.Request, "err", err)
			return c.front.Release(l, now.Add(c.shared.lease/4))
		}
		links = own
	}
	if _, err := c.front.Done(l, fo, links); err != nil {
		// Nothing changed: the lease is still out, and goes back.
		return fmt.Errorf("complete %s: %w", l.Request, errors.Join(err, c.front.Release(l, time.Time{})))
	}
	c.chains.committed(l.Key, o.page != nil)
	c.obs.urlDone()
	if rec.Status >= 400 || o.noAnswer {
		c.obs.brokenURL(BrokenURL{URL: rec.URL, Status: rec.Status, Error: rec.Error, Referrer: rec.Referrer})
	}
	return nil
}

// writeFailed counts a failed write of an output and stops the crawl.
func (c *Crawler) writeFailed(err error) {
	var we *writeError
	if errors.As(err, &we) {
		c.obs.outputError(we.output)
	}
	c.stop(err)
}

// lastmodTime is a URL's sitemap lastmod, as the frontier keeps it
// (RFC 3339), for its record; zero when it has none. Most URLs have none,
// and time.Parse of "" builds an error each time.
func lastmodTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339, s)
	return t
}
