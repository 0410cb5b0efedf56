package cluster

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Errors a caller branches on.
var (
	// ErrNotHeld is returned for a partition the member does not hold.
	ErrNotHeld = errors.New("cluster: partition not held")
	// ErrFenced is returned when a write finds that another worker has
	// claimed the partition since: this member lost it, and what it was
	// writing is the successor's to redo.
	ErrFenced = errors.New("cluster: partition claimed by another worker")
)

// ChangeKind says what happened to a partition.
type ChangeKind uint8

// The changes Options.OnChange reports.
const (
	// Gained: the member holds the partition and has fenced off its
	// previous owner; restore and replay it (Restore, Replay), then crawl.
	Gained ChangeKind = iota + 1
	// Handover: the partition should move to another worker. Start no
	// request for it; when those in flight are settled and written, call
	// Release. Nothing more is reported of it.
	Handover
	// Lost: the member no longer holds the partition (its lease ran out
	// or another worker holds it). Start nothing for it; writes fail.
	Lost
)

// String returns "gained", "handover" or "lost".
func (k ChangeKind) String() string {
	switch k {
	case Gained:
		return "gained"
	case Handover:
		return "handover"
	}
	return "lost"
}

// Change reports a partition gained or lost.
type Change struct {
	Partition int
	Kind      ChangeKind
	// Clean, for Gained, is true when the previous owner gave the
	// partition up with no request in flight (Release, Close), or it had
	// none: requests may start at once, subject to the host waits its
	// log holds. When false the previous owner died or hung, and its last
	// requests, started before its window closed, may still be in flight:
	// wait the fetch timeout before starting any, so that max_per_host
	// and the delay hold across the change of owner (a host's delay longer
	// than that must have been written as a HostWait before the request
	// that needs it started).
	Clean bool
	// Tenure, for Gained, names this hold of the partition, for Applied.
	Tenure uint64
}

// Options are what Join takes besides the Config.
type Options struct {
	// OnChange, when not nil, is called from the member's loop for every
	// partition gained, handed over or lost, in order. It must not block
	// (queue the change and return, as net/http's ConnState hook must);
	// it may call the Member's methods. With no OnChange a partition
	// handed over is released at once.
	OnChange func(Change)
	// OnRobotsWanted, when not nil, is called for every origin another
	// worker wants the robots.txt of (WantRobots) whose partition the
	// member holds. It is called from the client's delivery goroutine and
	// must not block.
	OnRobotsWanted func(origin string)
}

// Hold describes a partition the member holds.
type Hold struct {
	Partition int
	// Since is when the member's claim and its fence were written: its
	// window to start requests opens then.
	Since time.Time
	// Until is when the window to start requests closes unless a renewal
	// moves it: the send time of the last successful write of the claim,
	// plus the lease, less a margin of a fifth of it. The server cannot
	// have let the claim go before it (see doc.go). Zero while handing
	// over.
	Until time.Time
	// Revision is the claim's revision in the leases bucket.
	Revision uint64
	// Leaving is true from Handover until Release.
	Leaving bool
	// Clean and Tenure are those of the Gained that began the hold.
	Clean  bool
	Tenure uint64
}

// hold is the member's state of one partition.
type hold struct {
	p         int
	claimRev  uint64 // the revision the claim was created with; names this tenure
	rev       uint64 // the claim's revision now; written by the loop, under Member.mu
	since     time.Time
	until     time.Time
	leavingAt time.Time // zero unless handing over
	released  bool
	applied   uint64 // the engine has applied the partition's entries up to this sequence

	wmu     sync.Mutex  // serialises the partition's log writes
	seq     uint64      // the last sequence of its log subject, as this owner wrote it
	writes  uint64      // appends tried, for their Nats-Msg-Id
	snapRev uint64      // the revision of its snapshot pointer, as this owner wrote it
	snapObj string      // the object that pointer names
	clean   bool        // the previous owner left it with nothing in flight
	marked  bool        // a release mark is written
	fenced  atomic.Bool // set once the claim is gone or a write found another owner
}

// Member is a worker's membership of a crawl: its claims on partitions,
// kept by a loop that heartbeats, renews, and claims or hands over
// partitions as rendezvous hashing over the live workers says. Its methods
// are safe for concurrent use.
type Member struct {
	*conn
	t    timing
	log  *slog.Logger
	opts Options

	mu      sync.Mutex
	holds   map[int]*hold
	load    Load
	version uint64 // of the status: load and holds
	// lent: the member holds pages taken from the budget (Take) and not
	// yet handed out; its status says so, for Take's spent-or-lent call.
	lent bool
	// beat serialises status writes, so that one that read the status
	// before a change cannot land after the write that carries it.
	beat sync.Mutex
	// pagesMu serialises Take and GiveBack; stash is what the member took
	// from the budget and has not handed out.
	pagesMu sync.Mutex
	stash   int64
	// weights: the engine's estimate of the work left in each partition
	// it holds (ReportWeights), published with the status; moving: the
	// partitions this member last moved for balance, and when (see
	// balance).
	weights map[int]int64
	moving  []int
	movedAt time.Time
	nonce   string // tells this process's claims from another's
	closed  bool
	started int64 // Unix nanoseconds of the first heartbeat

	poke     chan struct{}      // a turn now: a release, a write fenced
	status   chan struct{}      // a heartbeat now: the status changed
	cancel   context.CancelFunc // ends the loop
	done     chan struct{}      // closed when the loop has returned
	stopOnce sync.Once
}

// Join connects to the crawl of cfg (creating its streams and buckets if
// needed), announces the worker, and starts the loop that claims, renews
// and hands over its partitions. It returns an error naming the problem
// when cfg is invalid, the server is unreachable or lacks JetStream, or the
// crawl was created with other partitions or lease. Close leaves the crawl.
func Join(ctx context.Context, cfg Config, log *slog.Logger, opts Options) (*Member, error) {
	if cfg.Worker == "" {
		cfg.Worker = defaultWorker()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, fmt.Errorf("cluster.nats: no server given")
	}
	c, err := dial(ctx, cfg, "crawler "+cfg.Worker, true, log)
	if err != nil {
		return nil, err
	}
	m := &Member{
		conn: c, t: timingOf(cfg.Lease), log: log.With("worker", cfg.Worker), opts: opts,
		holds: map[int]*hold{}, poke: make(chan struct{}, 1), status: make(chan struct{}, 1), done: make(chan struct{}),
	}
	m.nonce = rand.Text()
	m.warnDuplicate(ctx)
	if opts.OnRobotsWanted != nil {
		if _, err := c.nc.Subscribe(c.robotsSubject("*"), m.robotsWanted); err != nil {
			c.nc.Close()
			return nil, fmt.Errorf("cluster: subscribe to robots.txt wanted: %w", err)
		}
	}
	if err := m.heartbeat(ctx); err != nil {
		c.nc.Close()
		return nil, fmt.Errorf("cluster: announce worker %s: %w", cfg.Worker, err)
	}
	loop, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go m.run(loop)
	return m, nil
}

// Worker returns the member's worker id.
func (m *Member) Worker() string { return m.cfg.Worker }

// Connected reports whether the connection to the server is up. While it
// is down every write fails at once (there is no reconnect buffer), so an
// engine should start no work whose outcome it must write.
func (m *Member) Connected() bool { return m.nc.IsConnected() }

// Partitions returns the crawl's number of partitions.
func (m *Member) Partitions() int { return m.cfg.Partitions }

// Holds lists the partitions the member holds, in order.
func (m *Member) Holds() []Hold {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Hold, 0, len(m.holds))
	for _, h := range m.holds {
		out = append(out, h.info())
	}
	slices.SortFunc(out, func(a, b Hold) int { return a.Partition - b.Partition })
	return out
}

// Hold describes partition p, if the member holds it.
func (m *Member) Hold(p int) (Hold, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.holds[p]
	if h == nil {
		return Hold{}, false
	}
	return h.info(), true
}

func (h *hold) info() Hold {
	return Hold{Partition: h.p, Since: h.since, Until: h.until, Revision: h.rev, Leaving: !h.leavingAt.IsZero(),
		Clean: h.clean, Tenure: h.claimRev}
}

// MayStart reports whether a request for a host of partition p may start
// at now: the member holds p, is not handing it over, and now is before
// its Until. A request started in time may finish and be written after.
func (m *Member) MayStart(p int, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.holds[p]
	return h != nil && h.leavingAt.IsZero() && now.Before(h.until)
}

// Release gives up partition p after a Handover, once the engine has
// settled its requests: the claim is deleted at the loop's next turn, so
// that the new owner need not wait for the lease to run out. A partition
// not handed over is not released.
func (m *Member) Release(p int) {
	m.mu.Lock()
	if h := m.holds[p]; h != nil && !h.leavingAt.IsZero() {
		h.released = true
	}
	m.mu.Unlock()
	m.wake()
}

func (m *Member) wake() {
	select {
	case m.poke <- struct{}{}:
	default:
	}
}

// wakeStatus asks the loop to publish the status now, without a turn: a
// busy engine reports several times a second, and a turn renews every
// claim.
func (m *Member) wakeStatus() {
	select {
	case m.status <- struct{}{}:
	default:
	}
}

// Close leaves the crawl: it stops the loop, marks each partition released
// in its log, deletes the member's membership and claims (with their
// revisions, so a claim taken over meanwhile is left alone), and closes the
// connection. The caller must have stopped starting requests and settled
// those in flight first; writes after Close fail. Closing again does
// nothing.
func (m *Member) Close(ctx context.Context) error {
	m.stop()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	holds := m.holds
	m.holds = map[int]*hold{}
	m.mu.Unlock()
	hs := make([]*hold, 0, len(holds))
	for _, h := range holds {
		hs = append(hs, h)
	}
	each(hs, func(h *hold) { m.markReleased(ctx, h) })
	var errs []error
	if err := m.GiveBack(ctx); err != nil {
		errs = append(errs, err)
	}
	// Membership first: a worker that sees the claims gone should already
	// see this one gone, or it would leave them for this one to take.
	if err := m.members.Delete(ctx, memberKey(m.cfg.Worker)); err != nil {
		errs = append(errs, fmt.Errorf("leave: %w", err))
	}
	for _, h := range holds {
		if err := m.leases.Delete(ctx, leaseKey(h.p), jetstream.LastRevision(h.rev)); err != nil && !wrongLastSeq(err) {
			errs = append(errs, fmt.Errorf("release partition %d: %w", h.p, err))
		}
	}
	if err := m.nc.Drain(); err != nil {
		m.nc.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster: close: %w", err)
	}
	return nil
}

// stop ends the loop and waits for it; the claims stay as they are. Tests
// use it alone to play a worker that hangs.
func (m *Member) stop() {
	m.stopOnce.Do(m.cancel)
	<-m.done
}

// run is the member's loop: a turn every quarter lease, or sooner when
// woken (Release, a write fenced); between turns, a heartbeat when the
// status changed (Report, Applied). The first turn waits an eighth of a
// lease, so that workers started together see each other before they
// claim, rather than claim everything and hand most of it over at once.
func (m *Member) run(loop context.Context) {
	defer close(m.done)
	timer := time.NewTimer(m.t.renew / 2)
	defer timer.Stop()
	for {
		select {
		case <-loop.Done():
			return
		case <-m.status:
			if !m.Connected() {
				continue // published with the next heartbeat once back
			}
			ctx, cancel := context.WithTimeout(loop, m.t.renew)
			if err := m.heartbeat(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("cluster: heartbeat", "err", err)
			}
			cancel()
			continue
		case <-timer.C:
		case <-m.poke:
		}
		ctx, cancel := context.WithTimeout(loop, m.t.renew)
		m.turn(ctx)
		cancel()
		timer.Reset(m.t.renew)
	}
}

// turn renews first (what keeps the partitions), then drops what has run
// out, heartbeats, and moves partitions to where rendezvous hashing says.
func (m *Member) turn(ctx context.Context) {
	if !m.Connected() {
		// Every write would fail at once (a warning a partition): only
		// the claims whose window closed are let go.
		m.expire(time.Now())
		return
	}
	m.renew(ctx)
	m.expire(time.Now())
	if err := m.heartbeat(ctx); err != nil && ctx.Err() == nil {
		m.log.Warn("cluster: heartbeat", "err", err)
	}
	statuses, err := m.liveStatuses(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("cluster: list workers", "err", err)
		}
		return
	}
	plan, err := m.readPlan(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("cluster: read the balance's moves", "err", err)
		}
		return
	}
	live := []string{m.cfg.Worker}
	for _, s := range statuses {
		if s.Worker != m.cfg.Worker && !slices.Contains(live, s.Worker) {
			live = append(live, s.Worker)
		}
	}
	slices.Sort(live)
	m.assign(ctx, owners(live, plan, m.cfg.Partitions))
	m.balance(ctx, live, statuses)
	m.leave(ctx)
}

// warnDuplicate logs a live worker with this one's id: two processes with
// one id keep the crawl exclusive (claims are compare-and-set and tell
// processes apart), but share one status and one share of the partitions.
func (m *Member) warnDuplicate(ctx context.Context) {
	e, err := m.members.Get(ctx, memberKey(m.cfg.Worker))
	if err != nil {
		return
	}
	var s memberStatus
	if json.Unmarshal(e.Value(), &s) == nil && time.Since(s.At) < m.t.lease/2 {
		m.log.Warn("cluster: another worker with this id was seen recently; give each worker its own cluster.worker",
			"last_seen", s.At)
	}
}
