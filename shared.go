package crawler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/frontier/cluster"
	"github.com/politecrawl/crawler/robots"
)

// shared is this worker's side of a crawl shared by several (README,
// "Several machines"; frontier/cluster's doc, "The engine's part"). The
// frontier stays the one bbolt frontier of one machine: it holds the URLs
// of the partitions this worker holds, and of those it held before, whose
// hosts it no longer hands out (owns). What a successor needs is written
// to the partition's log before the frontier commits it (found, done and
// waits, see settle); URLs for hosts of other partitions are routed to
// them rather than queued here. A loop applies the member's changes
// (gained: restore and replay; handover: release once settled; lost:
// forget), replays the URLs routed here, reports the worker's load, and
// asks whether the whole crawl is over.
//
// It is safe for concurrent use.
type shared struct {
	m       *cluster.Member
	parts   int
	front   *frontier.Frontier
	hosts   *hosts
	obs     *observer
	log     *slog.Logger
	now     func() time.Time
	timeout time.Duration // fetch.timeout: what an unclean takeover waits
	lease   time.Duration
	daemon  bool
	compact int    // entries that make a partition's history worth compacting, at least
	wake    func() // the dispatcher's
	signal  chan struct{}
	// unwritten counts the requests made whose outcome could not be
	// written (the partition lost meanwhile, the server away): each may
	// be made again, by this worker or the partition's next owner.
	unwritten atomic.Int64

	mu           sync.Mutex
	changes      []cluster.Change
	held         map[int]*heldPart        // gained and replayed
	busy         map[int]int              // leases handed out and not settled, and hosts' slots taken, by partition
	over         bool                     // every worker is done: the crawl is over
	awaited      map[string]awaitedRobots // robots.txt awaited from another worker, by origin
	wanting      map[string]bool          // origins whose robots.txt is being fetched for another worker
	robotsMaxAge time.Duration            // a daemon's recrawl, which robots.txt copies last at most
	// store stores a robots.txt answer for an origin (Crawler.storeRobots).
	store func(origin string, f robots.Fetch, asked, done time.Time)
}

// heldPart is a partition this worker crawls.
type heldPart struct {
	tenure  uint64    // of the Gained that began the hold
	startAt time.Time // no request before: an unclean takeover waits fetch.timeout
	through uint64    // every entry of the partition up to this sequence is applied
	inbound uint64    // routed messages as counted when last replayed
	leaving bool      // handed over: released once its requests are settled
	entries int       // written or read since the last compaction
	size    int       // URLs in the last snapshot
}

// compactAfter is the least number of entries of a partition's history
// worth compacting into a snapshot (see compactOne); tests lower it.
const compactAfter = 10000

// pollEvery is how often the loop looks for URLs routed here, and reports
// the worker's load.
const pollEvery = 250 * time.Millisecond

// newShared makes this worker's side of the crawl of c's cluster block,
// joined by joinShared: /metrics reads it from the start.
func newShared(c *Crawler) *shared {
	return &shared{
		front: c.front, hosts: c.hosts, obs: c.obs, log: c.log, now: c.now,
		timeout: c.cfg.Fetch.Timeout, lease: c.cfg.Cluster.Lease, daemon: c.cfg.Daemon.Enabled,
		wake: c.wake, compact: compactAfter, signal: make(chan struct{}, 1),
		held: map[int]*heldPart{}, busy: map[int]int{},
		store: c.storeRobots,
		robotsMaxAge: func() time.Duration {
			if c.cfg.Daemon.Enabled {
				return c.cfg.Daemon.Recrawl
			}
			return 0
		}(),
	}
}

// joinShared joins the crawl of the cluster block, if there is one, queues
// the seeds (routed to their workers) and starts the loop; the function it
// returns stops the loop (call it once no request is in flight), and
// leaveShared then leaves the crawl. On one machine it queues the seeds.
func (c *Crawler) joinShared(ctx context.Context) (stop func(), err error) {
	s := c.shared
	if s == nil {
		return func() {}, c.seed()
	}
	loop, cancel := context.WithCancel(ctx)
	var wanted wants
	m, err := cluster.Join(ctx, c.cfg.Cluster, c.log, cluster.Options{OnChange: s.changed, OnRobotsWanted: func(origin string) {
		wanted.run(func() { c.robotsWanted(loop, origin) })
	}})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("cluster: %w", err)
	}
	s.m, s.parts = m, m.Partitions()
	wanted.open()
	c.log.Info("joined the crawl", "cluster", c.cfg.Cluster.Name, "worker", m.Worker(), "partitions", s.parts)
	// Busy until the seeds are routed: the others must not find the
	// crawl over before they are (the loop reports the real load next).
	m.Report(cluster.Load{Unrouted: int64(len(c.cfg.Seeds) + len(c.cfg.Sitemaps))})
	if err := c.seed(); err != nil {
		cancel()
		wanted.stop()
		return nil, errors.Join(err, c.leaveShared())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(loop, c.working.Load)
	}()
	return func() { cancel(); <-done; wanted.stop() }, nil
}

// wants runs the robots.txt fetches other workers ask for (robotsWanted), a
// goroutine each, from open to stop. The member hears wants from inside
// cluster.Join, before the shared state is set, until it leaves, after
// the crawl's goroutines are stopped: one heard outside is dropped (its
// worker asks again), never run without an owner.
type wants struct {
	mu      sync.Mutex
	running bool
	wg      sync.WaitGroup
}

func (w *wants) open() {
	w.mu.Lock()
	w.running = true
	w.mu.Unlock()
}

// run runs f in a goroutine of its own, if w is open.
func (w *wants) run(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running {
		w.wg.Go(f)
	}
}

// stop drops the wants heard from now on and waits for those running.
func (w *wants) stop() {
	w.mu.Lock()
	w.running = false
	w.mu.Unlock()
	w.wg.Wait()
}

// leaveShared leaves the crawl shared by several workers, if it is one.
func (c *Crawler) leaveShared() error {
	if c.shared == nil || c.shared.m == nil {
		return nil
	}
	if err := c.shared.close(); err != nil {
		return fmt.Errorf("cluster: leave the crawl: %w", err)
	}
	return nil
}

// queue adds items found from origin's host ("" for the config's seeds)
// to the frontier: in a crawl shared by several workers, through the
// cluster (see shared.found). It returns how many were new here.
func (c *Crawler) queue(origin string, items []frontier.Item) (int, error) {
	if c.shared != nil {
		var err error
		if items, err = c.shared.found(origin, items, nil); err != nil {
			return 0, err
		}
	}
	return c.front.Add(items)
}

// changed queues a change from the member's loop, which must not block.
func (s *shared) changed(ch cluster.Change) {
	s.mu.Lock()
	s.changes = append(s.changes, ch)
	s.mu.Unlock()
	s.poke()
}

func (s *shared) poke() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

func (s *shared) partition(origin string) int { return cluster.Partition(origin, s.parts) }

// owns reports whether a request to origin may start at now: its partition
// is held here, replayed, not being handed over, its window open, and an
// unclean takeover's wait over. If not, at is when to ask again (a far
// future when the partition is not held: a Gained readies its hosts).
func (s *shared) owns(origin string, now time.Time) (ok bool, at time.Time) {
	p := s.partition(origin)
	s.mu.Lock()
	h := s.held[p]
	held := h != nil && !h.leaving
	var startAt time.Time
	if held {
		startAt = h.startAt
	}
	s.mu.Unlock()
	switch {
	case !held:
		return false, farFuture
	case now.Before(startAt):
		return false, startAt
	case !s.m.MayStart(p, now) || !s.m.Connected():
		// Held, but its window closed (a renewal is late, or the
		// partition is being lost), or the server is away, so that what
		// a request finds could not be written: looked at again soon,
		// since neither a renewal that lands nor a reconnection reports
		// anything.
		return false, now.Add(s.lease / 8)
	}
	return true, time.Time{}
}

// holdBack keeps origin from being handed out until at, a time owns gave.
// A partition gained meanwhile readied its hosts before this could put
// one off: owns is asked again after, and the host readied if it is ours
// now.
func (s *shared) holdBack(origin string, at time.Time) {
	s.front.SetReady(origin, at)
	if ours, _ := s.owns(origin, s.now()); ours {
		s.front.SetReady(origin, time.Time{})
	}
}

// holds reports whether origin's partition is held here, handed over or
// not: its URLs are this worker's to record at the end of a crawl.
func (s *shared) holds(origin string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[s.partition(origin)] != nil
}

// mine reports whether origin's partition is held here and not being
// handed over, for what looks at every host of the frontier (the end of a
// crawl).
func (s *shared) mine(origin string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[s.partition(origin)]
	return h != nil && !h.leaving
}

// handed counts a lease of origin handed out, or a slot of it taken (+1),
// and its end (-1): a partition is handed over only once none is left.
func (s *shared) handed(origin string, n int) {
	p := s.partition(origin)
	s.mu.Lock()
	s.busy[p] += n
	last := s.busy[p] == 0
	if last {
		delete(s.busy, p)
	}
	leaving := last && s.held[p] != nil && s.held[p].leaving
	s.mu.Unlock()
	if leaving {
		s.poke()
	}
}

// errNotOurs is what a write for a partition this worker no longer holds
// gets: its URL goes back to the local queue, and its new owner redoes it.
var errNotOurs = errors.New("partition held by another worker")

// found makes items, found from origin's host ("" for the config's seeds),
// durable before they are queued, with done (when not nil) the URL whose
// visit found them: those of other partitions are routed to them, those
// of origin's own partition are written to its log with done. It returns
// the items to queue here.
func (s *shared) found(origin string, items []frontier.Item, done *cluster.Done) ([]frontier.Item, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.writeTimeout())
	defer cancel()
	p := -1
	if origin != "" {
		p = s.partition(origin)
	}
	var own, others []frontier.Item
	for _, it := range items {
		if p >= 0 && s.partition(it.Origin) == p {
			own = append(own, it)
		} else {
			others = append(others, it)
		}
	}
	if len(others) > 0 {
		if _, err := s.m.Route(ctx, others); err != nil {
			return nil, err
		}
	}
	if p < 0 {
		return nil, nil
	}
	e := cluster.Entry{Found: own}
	if done != nil {
		e.Done = []cluster.Done{*done}
	}
	if _, err := s.m.Append(ctx, p, e); err != nil {
		if errors.Is(err, cluster.ErrFenced) || errors.Is(err, cluster.ErrNotHeld) {
			return nil, fmt.Errorf("%w: %w", errNotOurs, err)
		}
		return nil, err
	}
	s.counted(p, 1)
	return own, nil
}

// hostWait makes a host's wait or parking durable before the frontier
// keeps it. A partition no longer held is its new owner's business.
func (s *shared) hostWait(w cluster.HostWait) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.writeTimeout())
	defer cancel()
	p := s.partition(w.Origin)
	_, err := s.m.Append(ctx, p, cluster.Entry{Waits: []cluster.HostWait{w}})
	if errors.Is(err, cluster.ErrFenced) || errors.Is(err, cluster.ErrNotHeld) {
		return nil
	}
	if err == nil {
		s.counted(p, 1)
	}
	return err
}

// counted counts n entries of partition p written or read since its last
// compaction.
func (s *shared) counted(p, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[p]; h != nil {
		h.entries += n
	}
}

// starting reports whether a request to origin, whose interval is iv, may
// start at now. A successor that takes the partition over from a worker
// that died waits fetch.timeout, and the dead worker's window closed at
// least a fifth of a lease before its own opened: a longer interval is
// written as a wait before the request may start, so that it holds across
// the change of owner too. (Written when the gate then refuses, it only
// makes a successor wait longer.)
func (s *shared) starting(origin string, now time.Time, iv time.Duration) bool {
	if iv <= s.timeout+s.lease/5 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.writeTimeout())
	defer cancel()
	p := s.partition(origin)
	if _, err := s.m.Append(ctx, p, cluster.Entry{Waits: []cluster.HostWait{{Origin: origin, Until: now.Add(iv)}}}); err != nil {
		if !errors.Is(err, cluster.ErrFenced) && !errors.Is(err, cluster.ErrNotHeld) {
			s.log.Warn("cluster: keep a host's interval", "host", origin, "err", err)
		}
		return false
	}
	s.counted(p, 1)
	return true
}

// writeTimeout bounds one write to the cluster: a write that cannot land
// within a lease would land after the partition is lost anyway.
func (s *shared) writeTimeout() time.Duration { return s.lease }

// takePage takes the page about to be requested, when max_pages counts it
// (budgeted), from the budget that the workers of a shared crawl share, at
// the last moment, so that a lease that fetches nothing (disallowed, put off) takes
// nothing. If it may not be fetched, ok is false and o says what becomes
// of the lease.
func (c *Crawler) takePage(ctx context.Context, budgeted bool) (o outcome, ok bool) {
	most := c.conf().Scope.MaxPages
	if c.shared == nil || c.cfg.Daemon.Enabled || most <= 0 || !budgeted {
		return outcome{}, true
	}
	n, err := c.shared.m.Take(ctx, 1, int64(most))
	switch {
	case errors.Is(err, cluster.ErrPagesLent):
		// Spent, but another worker holds pages it may give back.
		return release(c.now().Add(time.Second)), false
	case err != nil:
		c.log.Warn("cluster: take a page from max_pages", "err", err)
		return release(c.now().Add(time.Second)), false
	case n == 0:
		c.budget.spent.Store(true) // the workers together took max_pages: the dispatcher stops
		c.wake()
		return release(time.Time{}), false
	}
	return outcome{}, true
}

// holding counts the partitions crawled here.
func (s *shared) holding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// finished reports whether the whole crawl is over.
func (s *shared) finished() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.over
}

// run is the loop: until ctx ends, it applies the member's changes, polls
// for URLs routed here, reports the load and, when this worker is idle in
// an ad hoc crawl, asks whether every worker is.
func (s *shared) run(ctx context.Context, working func() int64) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.signal:
		case <-tick.C:
		}
		if !s.m.Connected() {
			continue // every write and read would fail; the client reconnects
		}
		// Each step is bounded: a read whose answer a server restart
		// lost (a watcher's end, an object's chunks) would otherwise
		// hold the loop, and the worker's part of the crawl, for ever.
		s.bounded(ctx, s.applyChanges)
		s.bounded(ctx, s.releaseSettled)
		s.bounded(ctx, s.poll)
		s.bounded(ctx, s.compactOne)
		load := s.load(working())
		s.m.Report(load)
		s.mu.Lock()
		for p, h := range s.held {
			s.m.Applied(p, h.tenure, h.through)
		}
		pending := len(s.changes) > 0
		s.mu.Unlock()
		if s.daemon || pending || load.Queued > 0 || load.InFlight > 0 {
			continue
		}
		if s.m.Stash() > 0 {
			// Nothing left to fetch here: the pages this worker took
			// from max_pages go back for the others.
			s.bounded(ctx, func(ctx context.Context) {
				if err := s.m.GiveBack(ctx); err != nil && ctx.Err() == nil {
					s.log.Warn("cluster: give pages back to max_pages", "err", err)
				}
			})
		}
		var over bool
		var why string
		var err error
		s.bounded(ctx, func(ctx context.Context) { over, why, err = s.m.Quiescent(ctx, s.quiescentGap()) })
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("cluster: is the crawl over?", "err", err)
		case over && s.idle(working()):
			// Over, and this worker still idle: it reports nothing
			// while it looks, so it checks itself once more.
			s.log.Info("cluster: no worker has a URL left: the crawl is over")
			s.mu.Lock()
			s.over = true
			s.mu.Unlock()
			s.wake()
			return
		default:
			s.log.Debug("cluster: the crawl goes on", "why", why)
		}
	}
}

// bounded runs a step of the loop with a context that ends after two
// leases: a step cut short is tried again at the next turn.
func (s *shared) bounded(ctx context.Context, step func(context.Context)) {
	ctx, cancel := context.WithTimeout(ctx, 2*s.lease)
	defer cancel()
	step(ctx)
}

// applyChanges acts on the member's changes, in order.
func (s *shared) applyChanges(ctx context.Context) {
	for {
		s.mu.Lock()
		if len(s.changes) == 0 {
			s.mu.Unlock()
			return
		}
		ch := s.changes[0]
		s.changes = s.changes[1:]
		s.mu.Unlock()
		switch ch.Kind {
		case cluster.Gained:
			if hold, ok := s.m.Hold(ch.Partition); !ok || hold.Tenure != ch.Tenure {
				continue // lost again since: its Lost follows
			}
			if err := s.gain(ctx, ch); err != nil {
				// The member holds the claim, and the crawl cannot end
				// without the partition: try again at the next turn.
				if !errors.Is(err, context.Canceled) {
					s.log.Error("cluster: take over partition", "partition", ch.Partition, "err", err)
				}
				s.mu.Lock()
				s.changes = append([]cluster.Change{ch}, s.changes...)
				s.mu.Unlock()
				return
			}
		case cluster.Handover:
			s.mu.Lock()
			h := s.held[ch.Partition]
			if h != nil {
				h.leaving = true // released once its requests are settled
			}
			s.mu.Unlock()
			if h == nil {
				s.m.Release(ch.Partition) // not replayed yet: nothing of it is here
			}
		case cluster.Lost:
			s.mu.Lock()
			delete(s.held, ch.Partition) // the member logged why
			s.forgetAwaitedLocked(ch.Partition)
			s.mu.Unlock()
		}
		s.obs.partitionChange(changeName(ch))
		s.wake()
	}
}

// changeName is a change's label in /metrics.
func changeName(ch cluster.Change) string {
	switch {
	case ch.Kind == cluster.Gained && ch.Clean:
		return "gained_clean"
	case ch.Kind == cluster.Gained:
		return "gained_unclean"
	}
	return ch.Kind.String()
}

// gain restores and replays a partition gained, then readies its hosts.
func (s *shared) gain(ctx context.Context, ch cluster.Change) error {
	size := 0
	from, err := s.m.Restore(ctx, ch.Partition, func(r io.Reader) error {
		return cluster.ReadSnapshot(r, func(e cluster.Entry) error {
			size += len(e.Found) + len(e.Done)
			return s.apply(0, e)
		})
	})
	if err != nil {
		return err
	}
	entries := 0
	_, counts, err := s.m.Inbound(ctx)
	if err != nil {
		return err
	}
	through, err := s.m.Replay(ctx, ch.Partition, from, func(seq uint64, e cluster.Entry) error {
		entries++
		return s.apply(seq, e)
	})
	if err != nil {
		return err
	}
	now := s.now()
	h := &heldPart{tenure: ch.Tenure, through: through, inbound: counts[ch.Partition], startAt: now, entries: entries, size: size}
	if !ch.Clean {
		// Its last owner died or hung: its last requests may still be in
		// flight until their timeout. (They started before its window
		// closed, a fifth of a lease before this hold began; that fifth
		// covers a request checked in its window and sent a little
		// after.)
		h.startAt = now.Add(s.timeout)
	}
	s.mu.Lock()
	s.held[ch.Partition] = h
	s.mu.Unlock()
	n := 0
	for _, fh := range s.front.Hosts() {
		if s.partition(fh.Origin) == ch.Partition {
			s.hosts.ready(fh.Origin, now)
			n++
		}
	}
	s.log.Debug("cluster: partition replayed", "partition", ch.Partition, "clean", ch.Clean, "hosts", n, "through", through)
	return nil
}

// apply adds an entry of a partition's log or inbound subject to the
// frontier: URLs found, URLs done, host waits.
func (s *shared) apply(_ uint64, e cluster.Entry) error {
	if len(e.Found) > 0 {
		if _, err := s.front.Add(e.Found); err != nil {
			return err
		}
	}
	if len(e.Done) > 0 {
		fin := make([]frontier.Finished, len(e.Done))
		for i, d := range e.Done {
			fin[i] = frontier.Finished{Key: d.Key, Kind: d.Kind, RevisitAt: d.RevisitAt}
		}
		if _, err := s.front.MarkDone(fin); err != nil {
			return err
		}
	}
	for _, w := range e.Waits {
		if err := s.hosts.learnWait(w); err != nil {
			return err
		}
	}
	return nil
}

// releaseSettled gives up the partitions handed over whose requests are
// all settled, with the waits their hosts still have to keep.
func (s *shared) releaseSettled(ctx context.Context) {
	s.mu.Lock()
	var done []int
	now := s.now()
	for p, h := range s.held {
		// A partition still in its unclean wait is released only once
		// the dead owner's requests are over too: the release mark
		// lets the next owner start at once.
		if h.leaving && s.busy[p] == 0 && !now.Before(h.startAt) {
			done = append(done, p)
			delete(s.held, p)
			s.forgetAwaitedLocked(p)
		}
	}
	s.mu.Unlock()
	if len(done) == 0 {
		return
	}
	s.writeWaits(ctx, now, func(p int) bool { return slices.Contains(done, p) })
	for _, p := range done {
		s.m.Release(p)
	}
}

// poll replays the partitions held here to which URLs were routed since
// their last replay; the others are up to date with the stream.
func (s *shared) poll(ctx context.Context) {
	last, counts, err := s.m.Inbound(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cluster: look for routed URLs", "err", err)
		}
		return
	}
	s.mu.Lock()
	type todo struct {
		p        int
		n, after uint64
	}
	var work []todo
	for p, h := range s.held {
		if counts[p] == h.inbound {
			h.through = max(h.through, last)
			continue
		}
		work = append(work, todo{p: p, n: counts[p], after: h.through})
	}
	s.mu.Unlock()
	for _, w := range work {
		n := 0
		// Its log is this worker's own writing while it holds it.
		through, err := s.m.ReplayRouted(ctx, w.p, w.after, func(seq uint64, e cluster.Entry) error {
			n++
			return s.apply(seq, e)
		})
		s.counted(w.p, n)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cluster: read routed URLs", "partition", w.p, "err", err)
			}
			continue
		}
		s.mu.Lock()
		if h := s.held[w.p]; h != nil {
			h.through, h.inbound = max(h.through, through), w.n
		}
		s.mu.Unlock()
		s.wake()
	}
}

// compactOne compacts the history of one partition held here that grew
// by more entries than its last snapshot held URLs (and at least
// s.compact), so that the stream stays short and a successor restores
// one object rather than replaying every entry; spaced so, compacting
// costs a bounded multiple of the writes themselves.
func (s *shared) compactOne(ctx context.Context) {
	s.mu.Lock()
	p, through := -1, uint64(0)
	for q, h := range s.held {
		if !h.leaving && h.entries >= max(s.compact, h.size) {
			p, through = q, h.through
			break
		}
	}
	s.mu.Unlock()
	if p < 0 {
		return
	}
	size, err := s.m.Compact(ctx, p, through)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cluster: compact a partition's history", "partition", p, "err", err)
		}
		s.counted(p, -s.compact) // tried again once as many entries came
		return
	}
	s.mu.Lock()
	if h := s.held[p]; h != nil {
		// The purge lowered the partition's count of routed messages:
		// equal counts no longer mean nothing new, so the next poll
		// replays it.
		h.entries, h.size, h.inbound = 0, size, ^uint64(0)
	}
	s.mu.Unlock()
	s.log.Debug("cluster: partition compacted", "partition", p, "urls", size, "through", through)
}

// load is what this worker has to do in the partitions it holds, those
// it is handing over included: their URLs are nobody else's yet, and the
// crawl is not over while they wait.
func (s *shared) load(working int64) cluster.Load {
	l := cluster.Load{InFlight: working}
	s.mu.Lock()
	held := make(map[int]bool, len(s.held))
	for p := range s.held {
		held[p] = true
	}
	s.mu.Unlock()
	// And those released here that the member still holds: until its
	// next turn deletes the claim, the status lists them as this
	// worker's, and their URLs must keep the crawl going.
	for _, h := range s.m.Holds() {
		held[h.Partition] = true
	}
	weights := map[int]int64{}
	for _, fh := range s.front.Hosts() {
		p := s.partition(fh.Origin)
		if !held[p] {
			continue
		}
		l.Done += fh.Done
		if !fh.Parked {
			// A URL leased and not yet handed to a worker is in
			// neither working nor Queued.
			l.Queued += fh.Queued + fh.Leased
			weights[p] += (fh.Queued + fh.Leased) * max(s.hosts.gate.Interval(fh.Origin), urlTime).Milliseconds()
		}
	}
	// A partition with a host awaiting another worker's robots.txt is
	// not offered to the balance: the await is this worker's alone, and
	// a new holder would fetch that host's robots.txt again.
	s.mu.Lock()
	for origin := range s.awaited {
		delete(weights, s.partition(origin))
	}
	s.mu.Unlock()
	s.m.ReportWeights(weights)
	return l
}

// urlTime is the least time a URL is taken to need, for the balance's
// weights (cluster.Member.ReportWeights): a host asks for its interval
// between requests, and an answer takes time even with none.
const urlTime = 100 * time.Millisecond

// quiescentGap is the time between the two looks that decide the end of
// the crawl: long enough for every worker to publish a change of its
// load, which it does within a poll and a heartbeat. A quarter lease, as
// the cluster's doc suggests, at most a second: waited at the end of
// every crawl, twice.
func (s *shared) quiescentGap() time.Duration { return min(s.lease/4, time.Second) }

// idle reports whether this worker has nothing to do in its partitions.
func (s *shared) idle(working int64) bool {
	l := s.load(working)
	return l.Queued == 0 && l.InFlight == 0
}

// writeWaits writes, to each partition that given reports true for,
// the waits its hosts still have to keep at now, so that whoever holds it
// next keeps them.
func (s *shared) writeWaits(ctx context.Context, now time.Time, given func(p int) bool) {
	byPart := map[int][]cluster.HostWait{}
	for _, w := range s.hosts.waitsToCome(now) {
		if p := s.partition(w.Origin); given(p) {
			byPart[p] = append(byPart[p], w)
		}
	}
	for p, waits := range byPart {
		if _, err := s.m.Append(ctx, p, cluster.Entry{Waits: waits}); err != nil && ctx.Err() == nil {
			s.log.Warn("cluster: write the waits of a partition given up", "partition", p, "err", err)
		}
	}
}

// close leaves the crawl, once requests are settled. After a crawl that
// ended everywhere it first lets the other workers' last looks see this
// one still there, so that they need not take its partitions over only to
// find them empty.
func (s *shared) close() error {
	if s.finished() {
		time.Sleep(s.quiescentGap())
	}
	// Leaving marks every partition released, which lets the next owner
	// start at once: one still in its unclean wait waits it out first.
	s.mu.Lock()
	var last time.Time
	for _, h := range s.held {
		if h.startAt.After(last) {
			last = h.startAt
		}
	}
	s.mu.Unlock()
	if wait := last.Sub(s.now()); wait > 0 {
		s.log.Info("cluster: waiting for a dead worker's requests to end before leaving", "wait", wait.Round(time.Second))
		time.Sleep(wait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.lease)
	defer cancel()
	if !s.finished() { // a crawl over has nothing left to wait for
		s.mu.Lock()
		held := maps.Clone(s.held)
		s.mu.Unlock()
		s.writeWaits(ctx, s.now(), func(p int) bool { return held[p] != nil })
	}
	return s.m.Close(ctx)
}

// robotsElsewhere is what fetchRobots returns when origin's robots.txt
// redirects to the robots.txt of a host another worker holds, which only
// that worker may ask: key, after hops redirects.
type robotsElsewhere struct {
	key  string
	hops int
}

func (e *robotsElsewhere) Error() string {
	return "robots.txt redirects to " + e.key + ", a host of another worker"
}

// awaitedRobots is a robots.txt that redirects to another worker's host,
// awaiting that worker's answer.
type awaitedRobots struct {
	robotsElsewhere
	asked  time.Time // when origin's robots.txt was asked for
	since  time.Time // when the redirect was found
	wanted time.Time // when its worker was last asked for it (WantRobots)
}

// sharedAnswer is a robots.txt answer as the workers share it.
type sharedAnswer struct {
	Status    int           `json:"status"`
	Body      []byte        `json:"body,omitempty"`
	MaxAge    time.Duration `json:"max_age,omitempty"`
	HasMaxAge bool          `json:"has_max_age,omitempty"`
	Asked     time.Time     `json:"asked"`
	Worker    string        `json:"worker"` // who fetched it
}

// shareRobots publishes f, the answer at robots.txt URL key to a fetch
// asked for at asked, for workers whose hosts' robots.txt redirect there.
// Only answers are shared (2xx, 4xx), as between this worker's hosts.
func (s *shared) shareRobots(key string, f robots.Fetch, asked time.Time) {
	if key == "" || !isAnswer(f) {
		return
	}
	b, err := json.Marshal(sharedAnswer{Status: f.Status, Body: f.Body, MaxAge: f.MaxAge, HasMaxAge: f.HasMaxAge, Asked: asked, Worker: s.m.Worker()})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.writeTimeout())
		err = s.m.ShareRobots(ctx, key, b)
		cancel()
	}
	if err != nil {
		s.log.Warn("cluster: share a robots.txt answer", "robots", key, "err", err)
	}
}

// sharedRobots returns the answer a worker shared at robots.txt URL key,
// and when its fetch was asked for, while it is fresh at now. With
// othersOnly, not one this worker fetched: as between a worker's own
// hosts, when a host's copy expires its robots.txt is fetched again.
func (s *shared) sharedRobots(key string, now time.Time, othersOnly bool) (robots.Fetch, time.Time, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), s.writeTimeout())
	defer cancel()
	b, ok, err := s.m.SharedRobots(ctx, key)
	var a sharedAnswer
	if err == nil && ok {
		err = json.Unmarshal(b, &a)
	}
	if err != nil {
		s.log.Warn("cluster: read a shared robots.txt answer", "robots", key, "err", err)
		return robots.Fetch{}, time.Time{}, false
	}
	// Fresh as long as the worker that fetched it keeps its own copy
	// (robots.CacheFor, and a daemon's recrawl).
	f := robots.Fetch{Status: a.Status, Body: a.Body, MaxAge: a.MaxAge, HasMaxAge: a.HasMaxAge}
	fresh := robots.CacheFor(f)
	if s.robotsMaxAge > 0 {
		fresh = min(fresh, s.robotsMaxAge)
	}
	if !ok || now.Sub(a.Asked) >= fresh || othersOnly && a.Worker == s.m.Worker() {
		return robots.Fetch{}, time.Time{}, false
	}
	return f, a.Asked, true
}

// awaitRobots makes origin, whose robots.txt redirects to another worker's
// host (e), wait for that worker's answer: it is looked for each time
// origin's robots.txt is due (robotsAwaited), not fetched again meanwhile.
func (s *shared) awaitRobots(origin string, e robotsElsewhere, asked time.Time) {
	now := s.now()
	s.mu.Lock()
	if s.awaited == nil {
		s.awaited = map[string]awaitedRobots{}
	}
	_, ok := s.awaited[origin]
	if !ok {
		s.awaited[origin] = awaitedRobots{robotsElsewhere: e, asked: asked, since: now, wanted: now}
	}
	s.mu.Unlock()
	if !ok {
		s.want(e.key)
	}
	s.hosts.robots.Abandon(origin)
	s.front.SetReady(origin, now.Add(robotsAwaitEvery))
}

// forgetAwaitedLocked drops what partition p's hosts awaited from other
// workers, as p leaves this worker: held again later, they start over.
// s.mu is held.
func (s *shared) forgetAwaitedLocked(p int) {
	for origin := range s.awaited {
		if s.partition(origin) == p {
			delete(s.awaited, origin)
		}
	}
}

// robotsAwaitEvery is how often a robots.txt awaited from another worker
// is looked for.
const robotsAwaitEvery = 500 * time.Millisecond

// robotsAwaited settles origin's robots.txt when it awaits another
// worker's answer, and reports whether it did: stored when the answer has
// come, given up on (unreachable, asked again later as any) when it has
// not within two leases and a fetch timeout, or put off again.
func (s *shared) robotsAwaited(origin string, now time.Time) (handled bool) {
	s.mu.Lock()
	a, ok := s.awaited[origin]
	s.mu.Unlock()
	if !ok {
		return false
	}
	f, asked, found := s.sharedRobots(a.key, now, false)
	switch {
	case found:
		f.Redirects = a.hops
	case now.Sub(a.since) > 2*s.lease+s.timeout:
		f, asked = robots.Fetch{Err: fmt.Errorf("%s: no answer from its worker", a.Error()), Redirects: a.hops}, a.asked
	default:
		if now.Sub(a.wanted) >= s.lease/4 {
			// The want is not stored: asked again in case its partition
			// was between workers.
			s.want(a.key)
			s.mu.Lock()
			if b, ok := s.awaited[origin]; ok {
				b.wanted = now
				s.awaited[origin] = b
			}
			s.mu.Unlock()
		}
		s.hosts.robots.Abandon(origin)
		s.front.SetReady(origin, now.Add(robotsAwaitEvery))
		return true
	}
	s.mu.Lock()
	delete(s.awaited, origin)
	s.mu.Unlock()
	s.store(origin, f, asked, now)
	return true
}

// want asks the worker holding the host of robots.txt URL key to fetch it
// and share the answer: that worker may have no URL of that host (one out
// of scope, asked only as a redirect's target), and would never fetch it
// of its own accord.
func (s *shared) want(key string) {
	if err := s.m.WantRobots(strings.TrimSuffix(key, "/robots.txt")); err != nil {
		s.log.Warn("cluster: ask for a robots.txt", "robots", key, "err", err)
	}
}

// robotsWanted fetches origin's robots.txt for another worker whose host's
// robots.txt redirects there, on origin's own turn as any request to it,
// and shares the answer, unless a fresh one is shared already or a fetch
// for that want is under way. It stores the answer for origin as its own
// fetch would: the host need not be asked again when it has URLs.
func (c *Crawler) robotsWanted(ctx context.Context, origin string) {
	s, now := c.shared, c.now()
	key := origin + "/robots.txt"
	if !s.mine(origin) {
		return
	}
	if _, _, ok := s.sharedRobots(key, now, false); ok {
		return
	}
	if st, ok := c.hosts.robots.Answer(origin, now); ok {
		// Fetched here before this worker shared answers (or shared
		// longer ago than the bucket keeps them): shared again.
		s.shareRobots(key, fetchOf(st), st.FetchedAt)
		return
	}
	s.mu.Lock()
	if s.wanting == nil {
		s.wanting = map[string]bool{}
	}
	busy := s.wanting[origin]
	s.wanting[origin] = true
	s.mu.Unlock()
	if busy {
		return
	}
	defer func() {
		s.mu.Lock()
		delete(s.wanting, origin)
		s.mu.Unlock()
	}()
	if err := c.x.wait(ctx, origin); err != nil {
		return // stopping, parked, or no longer this worker's: asked again
	}
	// The host's own robots.txt fetch may have answered while this waited.
	if _, _, ok := s.sharedRobots(key, c.now(), false); ok {
		c.x.giveBack(origin)
		return
	}
	f, asked, got, err := c.fetchRobots(ctx, origin, c.now())
	defer c.hosts.share.settle(got, origin)
	if err != nil {
		return // stopping, or it redirects on to another worker's host
	}
	c.storeRobots(origin, f, asked, c.now())
}
