package crawler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
)

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
func (c *Crawler) dispatch(ctx context.Context, work chan<- job) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	draining := false // max_pages reached: what counts toward no page budget is still done
	for {
		if ctx.Err() != nil {
			return nil
		}
		if !c.cfg.Daemon.Enabled && !draining && c.budget.reached() {
			c.log.Info("page limit reached", "max_pages", c.conf().Scope.MaxPages)
			if c.shared != nil {
				return nil
			}
			draining = true
		}
		now := c.now()
		wakeup := c.front.Wake()
		working := c.working.Load() // before Next: a worker ending after it wakes us
		l, idle, err := c.front.Next(now)
		if err != nil {
			return fmt.Errorf("frontier: %w", err)
		}
		if l != nil {
			if draining && c.outOf(l).budgeted {
				// A page past max_pages: its host is put off, and its
				// requisites, queued before its pages (admit), are not;
				// until the retry of one, when it has one due.
				c.front.SetReady(l.Origin, c.retrying.next(l.Origin, now))
				c.settle(l, release(time.Time{}))
				continue
			}
			if !c.handOut(ctx, l, work) {
				return nil
			}
			continue
		}
		if working == 0 && !c.cfg.Daemon.Enabled {
			switch {
			case draining && (idle.Until.IsZero() || idle.Until.After(now.AddDate(100, 0, 0))):
				// Only pages past max_pages are left, on hosts put off
				// for good (farFuture, which the frontier holds as the
				// latest time it can).
				return nil
			case c.shared != nil && c.shared.finished():
				return nil // no worker has a URL left
			case c.shared == nil && idle.Until.IsZero():
				return nil // drained, or only parked hosts are left
			}
			if c.hosts.lastCall(now, c.conf().Politeness.RobotsLastWait) {
				continue
			}
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

// handOut gives lease l to a worker, unless it must wait: for what may
// still change it (hosts.mustWait), or for max_pages. It reports false
// when ctx ended.
func (c *Crawler) handOut(ctx context.Context, l *frontier.Lease, work chan<- job) bool {
	if c.shared != nil {
		if ours, at := c.shared.owns(l.Origin, c.now()); !ours {
			c.shared.holdBack(l.Origin, at) // another worker's host, or not yet
			c.settle(l, release(time.Time{}))
			return true
		}
	}
	if c.hosts.mustWait(l) {
		c.settle(l, release(time.Time{})) // the host waits; others go on
		return true
	}
	out := c.outOf(l)
	if out.budgeted && !c.cfg.Daemon.Enabled && c.budget.full() {
		// Each page max_pages allows is fetched or being fetched: this
		// one waits for a visit to end, which may not count.
		c.settle(l, release(time.Time{})) // the host is ready again as it was
		select {
		case <-c.wakeCh:
		case <-ctx.Done():
		}
		return true
	}
	c.handedOut(out)
	select {
	case work <- job{l, out}:
		return true
	case <-ctx.Done():
		c.handedBack(out)
		c.settle(l, release(time.Time{}))
		return false
	}
}

// job is a lease handed to a worker, with what was counted of it then:
// the same is given back when it is settled, whatever a reload changed
// meanwhile.
type job struct {
	l   *frontier.Lease
	out leaseOut
}

// leaseOut is what is counted of a lease handed to a worker.
type leaseOut struct {
	origin    string
	kind      frontier.Kind
	linkDepth int  // a page's link depth; frontier.NoLinkDepth when no chain of links from a seed reaches it
	budgeted  bool // a page of the crawl's hosts, which max_pages counts
}

func (c *Crawler) outOf(l *frontier.Lease) leaseOut {
	return leaseOut{origin: l.Origin, kind: l.Kind, linkDepth: l.LinkDepth,
		budgeted: l.Kind == frontier.KindPage && !l.Requisite && !c.external(l.Origin)}
}

// handedOut counts a lease handed to a worker.
func (c *Crawler) handedOut(l leaseOut) {
	c.working.Add(1)
	if c.shared != nil {
		c.shared.handed(l.origin, 1)
	}
	if l.budgeted {
		c.budget.out.Add(1)
	}
	c.hosts.out(l)
}

// handedBack undoes handedOut once the lease is settled or not handed out
// after all.
func (c *Crawler) handedBack(l leaseOut) {
	if l.budgeted {
		c.budget.out.Add(-1)
	}
	c.hosts.back(l)
	if c.shared != nil {
		c.shared.handed(l.origin, -1)
	}
	c.working.Add(-1)
}

// budget is max_pages, a hard ceiling on the pages fetched: those of this
// run and of earlier runs on the same state, and, for an ad hoc crawl, the
// page leases out that may yet be fetched.
type budget struct {
	most    func() int   // scope.max_pages in force; 0 = unlimited
	before  int64        // pages fetched by earlier runs
	fetched atomic.Int64 // pages fetched this run
	out     atomic.Int64 // page leases handed to workers and not yet settled
	spent   atomic.Bool  // a shared crawl's budget is spent (shared.take)
}

// reached reports whether max_pages pages were fetched.
func (b *budget) reached() bool {
	most := b.most()
	return most > 0 && (b.fetched.Load()+b.before >= int64(most) || b.spent.Load())
}

// full reports whether the pages fetched and those being fetched make
// max_pages already, so that workers in flight cannot overshoot it.
func (b *budget) full() bool {
	most := b.most()
	return most > 0 && b.fetched.Load()+b.before+b.out.Load() >= int64(most)
}

// recordUnfetched ends an ad hoc crawl: each URL left queued gets an
// inventory record that says why it was not fetched, so that an audit sees
// every URL found — on hosts given up on, or past max_pages.
func (c *Crawler) recordUnfetched() error {
	if !c.budget.reached() {
		if err := c.recordParked(); err != nil {
			return fmt.Errorf("record the URLs of parked hosts: %w", err)
		}
	} else if c.budget.fetched.Load() > 0 {
		if err := c.recordLeft(); err != nil {
			return fmt.Errorf("record the URLs left at max_pages: %w", err)
		}
	}
	return nil
}

// recordLeft gives each URL that max_pages left queued an inventory record
// saying so. They stay queued: a run with a larger max_pages fetches them,
// and its records come later.
func (c *Crawler) recordLeft() error {
	now := c.now()
	return c.front.Pending(func(it frontier.Item) error {
		if c.shared != nil && !c.shared.holds(it.Origin) {
			return nil // another worker's, which records it
		}
		rec := storage.Record{
			URL: it.Request, Depth: it.Depth, FoundVia: storage.FoundVia(it.Via.String()),
			Referrer: it.Referrer, InSitemap: it.InSitemap, FetchedAt: now, LinkDepth: linkDepthField(it.LinkDepth),
			Error: "not fetched: max_pages reached",
		}
		rec.Lastmod = lastmodTime(it.Lastmod)
		return c.out.inventory(rec)
	})
}

// recordParked gives each URL still queued on a parked host an inventory
// record that says why it was not fetched. They stay queued, as those left
// at max_pages do: the next run, which tries the host again once its wait
// is over (hosts.restore), fetches them, and its records come later.
// Marking them done would lose them for good (issue 23: a host back up was
// never asked again).
func (c *Crawler) recordParked() error {
	parked := map[string]string{}
	for _, h := range c.front.Hosts() {
		if h.Parked && h.Queued > 0 && (c.shared == nil || c.shared.holds(h.Origin)) {
			parked[h.Origin] = h.ParkReason
		}
	}
	if len(parked) == 0 {
		return nil
	}
	now := c.now()
	return c.front.Pending(func(it frontier.Item) error {
		reason, ok := parked[it.Origin]
		if !ok {
			return nil
		}
		rec := storage.Record{
			URL: it.Request, Depth: it.Depth, FoundVia: storage.FoundVia(it.Via.String()),
			Referrer: it.Referrer, InSitemap: it.InSitemap, FetchedAt: now, LinkDepth: linkDepthField(it.LinkDepth),
			External: c.external(it.Origin), Error: "not fetched: host parked: " + reason,
		}
		rec.Lastmod = lastmodTime(it.Lastmod)
		noAnswer := false
		if cause, ok := strings.CutPrefix(reason, robotsUnavailable); ok {
			// A robots.txt that got no answer at all (not a status)
			// leaves the host's URLs unanswered: broken.
			rec.Error = reason
			noAnswer = strings.Trim(cause, "0123456789") != ""
		}
		if err := c.out.inventory(rec); err != nil {
			c.obs.outputError("output.urls")
			return err
		}
		c.obs.urlDone()
		if noAnswer {
			c.obs.brokenURL(BrokenURL{URL: rec.URL, Error: rec.Error, Referrer: rec.Referrer})
		}
		return nil
	})
}

// crawlIdle reports whether the crawl is idle, for relinking: no request
// is in flight, no URL is leased, and every host with URLs queued is given
// up on for now (see hosts.idle). Relinking while URLs of a host that is
// fetched this pass wait would write links to them as absolute URLs for
// good (a relinked file is not relinked again). Near the end of its rest,
// a resting host holds relinking back too; the relink that a
// daemon.recrawl forces bounds that.
//
// A URL the dispatcher has leased and not yet handed to a worker is
// neither queued nor in flight: counted as neither, a relink in that
// moment kept the index's link to the page being handed out absolute
// (TestDaemonRelinksWhenIdle, once on a busy machine). working is read
// first: a worker counts its lease out of working only once the lease is
// settled and the URLs it found are queued, so a lease is always seen as
// one or the other.
func (c *Crawler) crawlIdle(now time.Time) bool {
	if c.working.Load() != 0 {
		return false
	}
	switch st := c.stats(); {
	case st.Leased != 0:
		return false
	case st.Queued == 0:
		return true
	}
	return c.hosts.idle(now)
}

// retrying holds the requisites given back for a retry, by key, with
// their origin and when they are due, for the max_pages drain: a host put
// off for the pages it has left is readied for them (issue: a requisite
// that failed once was recorded "not fetched: max_pages reached").
type retrying struct {
	mu sync.Mutex
	m  map[string]retryDue
}

type retryDue struct {
	origin string
	at     time.Time
}

// settled notes how lease l was settled (outcome kind, at): a requisite
// given back for a retry is held until it is due, and let go once it is
// done; one released for later (its host not ready) keeps its hold, due
// then.
func (r *retrying) settled(l *frontier.Lease, kind outcomeKind, at time.Time) {
	if !l.Requisite {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, held := r.m[l.Key]
	switch {
	case kind == outcomeRetry, kind == outcomeRelease && held && !at.IsZero():
		if r.m == nil {
			r.m = map[string]retryDue{}
		}
		r.m[l.Key] = retryDue{l.Origin, at}
	case kind == outcomeDone, kind == outcomeFailed:
		delete(r.m, l.Key)
	}
}

// next is when origin has a requisite's retry due, after now; farFuture
// when it has none.
func (r *retrying) next(origin string, now time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := farFuture
	for _, d := range r.m {
		if d.origin == origin && d.at.Before(next) {
			next = d.at
		}
	}
	if !next.After(now) {
		// Due, yet the host's head is a page: it is asked again a
		// moment later rather than at once, which would spin.
		next = now.Add(100 * time.Millisecond)
	}
	return next
}
