package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Load is what a worker reports of its work, for the termination check
// and for Status.
type Load struct {
	Queued   int64 `json:"queued"`    // URLs waiting in its partitions (delayed ones included)
	InFlight int64 `json:"in_flight"` // requests started and not yet settled
	Unrouted int64 `json:"unrouted"`  // URLs found for other partitions and not yet routed
	Done     int64 `json:"done"`      // URLs done in its partitions
}

// idle reports whether the worker has nothing to do.
func (l Load) idle() bool { return l.Queued == 0 && l.InFlight == 0 && l.Unrouted == 0 }

// memberStatus is a worker's membership key's value.
type memberStatus struct {
	Worker  string `json:"worker"`
	Started int64  `json:"started"` // Unix nanoseconds: tells a restarted worker from its predecessor
	Version uint64 `json:"version"` // moves whenever Held or Load does
	Held    []int  `json:"held"`
	Load    Load   `json:"load"`
	// Through: the engine has applied every entry of every partition in
	// Held up to this stream sequence (the least of what Applied said of
	// each; 0 when it said nothing of one).
	Through uint64 `json:"through"`
	// Lent: the worker holds pages it took from the budget (Take) and has
	// not handed out, which it may give back.
	Lent bool `json:"lent,omitempty"`
	// Weights: the work left in each partition held (ReportWeights), in
	// milliseconds, for the balance; partitions with none are left out.
	Weights map[int]int64 `json:"weights,omitempty"`
	At      time.Time     `json:"at"` // when written, by the worker's clock, for display
}

// Report publishes the worker's load: at once when it changed, and with
// every heartbeat. Report whenever the load changes, busy as well as idle:
// the end of the crawl is decided on the last load each worker reported,
// and a worker that dies keeps its last report until its membership
// expires.
func (m *Member) Report(l Load) {
	m.changeStatus(func() bool {
		if l == m.load {
			return false
		}
		m.load = l
		return true
	})
}

// changeStatus runs change under m.mu; when it says it changed what the
// status holds, the status's version moves and it is written at once.
func (m *Member) changeStatus(change func() bool) {
	m.mu.Lock()
	changed := change()
	if changed {
		m.version++
	}
	m.mu.Unlock()
	if changed {
		m.wakeStatus()
	}
}

// Applied tells the member that the engine has applied every entry of
// partition p up to stream sequence through (as Replay returned it), in
// the hold that Gained with tenure began. It is what the end of the crawl
// is checked against: a partition gained and not yet replayed, or replayed
// into an earlier hold's state, counts as not read.
func (m *Member) Applied(p int, tenure, through uint64) {
	m.changeStatus(func() bool {
		h := m.holds[p]
		if h == nil || h.claimRev != tenure || through <= h.applied {
			return false
		}
		h.applied = through
		return true
	})
}

// heartbeat writes the worker's membership key, which lives a lease.
func (m *Member) heartbeat(ctx context.Context) error {
	m.beat.Lock()
	defer m.beat.Unlock()
	m.mu.Lock()
	if m.started == 0 {
		m.started = time.Now().UnixNano()
	}
	s := memberStatus{Worker: m.cfg.Worker, Started: m.started, Version: m.version, Load: m.load, Lent: m.lent, At: time.Now().UTC()}
	for p, w := range m.weights {
		if h := m.holds[p]; h != nil && h.leavingAt.IsZero() && w > 0 {
			if s.Weights == nil {
				s.Weights = map[int]int64{}
			}
			s.Weights[p] = w
		}
	}
	for p, h := range m.holds {
		if s.Held == nil || h.applied < s.Through {
			s.Through = h.applied
		}
		s.Held = append(s.Held, p)
	}
	m.mu.Unlock()
	slices.Sort(s.Held)
	b, _ := json.Marshal(&s)
	_, err := m.members.Put(ctx, memberKey(m.cfg.Worker), b)
	return err
}

// ErrPagesLent is Take's answer when the budget is spent on the server
// but another live worker holds pages it took and has not handed out: it
// may yet give them back (GiveBack), so the budget is not spent for good.
// Ask again a moment later.
var ErrPagesLent = errors.New("cluster: max_pages: the rest is lent to other workers")

// pagesBatch is the most pages Take takes from the budget at once.
const pagesBatch = 16

// Take takes up to n pages from the crawl's budget of limit pages
// (scope.max_pages) and returns how many it got: 0 once the budget is
// spent (or ErrPagesLent, while other workers hold some). A limit ≤ 0
// means no limit. The count is one KV key updated with compare-and-set, so
// workers together never take more than limit; to spare a write per page,
// the member takes from it in batches (pagesBatch, or a tenth of what is
// left when less, so that the last pages go one at a time to whoever asks)
// and hands them out from its stash. What it did not hand out goes back
// with GiveBack, which Close calls. Pages taken by a worker that dies
// before fetching them are not given back: a crawl with workers dying may
// fetch a few pages fewer than the limit.
func (m *Member) Take(ctx context.Context, n, limit int64) (int64, error) {
	if limit <= 0 || n <= 0 {
		return max(n, 0), nil
	}
	m.pagesMu.Lock()
	defer m.pagesMu.Unlock()
	if m.stash >= n {
		m.stash -= n
		if m.stash == 0 {
			m.setLent(false)
		}
		return n, nil
	}
	got := m.stash
	m.stash = 0
	for {
		used, rev, err := m.pagesUsed(ctx)
		if err != nil {
			m.stash = got
			return 0, err
		}
		left := limit - used
		if left <= 0 {
			if got > 0 {
				return got, nil
			}
			m.setLent(false)
			return 0, m.othersLent(ctx)
		}
		batch := min(left, max(n-got, min(pagesBatch, left/10)))
		if batch > n-got && !m.isLent() {
			// Said before the budget moves: a worker that finds it
			// spent then finds this one holding the rest.
			m.setLent(true)
			if err := m.heartbeat(ctx); err != nil {
				m.stash = got
				return 0, fmt.Errorf("cluster: take pages: %w", err)
			}
		}
		v := []byte(strconv.FormatInt(used+batch, 10))
		if rev == 0 {
			_, err = m.state.Create(ctx, "pages", v)
		} else {
			_, err = m.state.Update(ctx, "pages", v, rev)
		}
		if err == nil {
			m.stash = max(got+batch-n, 0)
			if m.stash == 0 {
				m.setLent(false)
			}
			return min(got+batch, n), nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			m.stash = got
			return 0, fmt.Errorf("cluster: take pages: %w", err)
		}
	}
}

// GiveBack returns to the budget the pages Take took and did not hand
// out: when the worker has nothing left to fetch, and as it leaves.
func (m *Member) GiveBack(ctx context.Context) error {
	m.pagesMu.Lock()
	defer m.pagesMu.Unlock()
	for m.stash > 0 {
		used, rev, err := m.pagesUsed(ctx)
		if err != nil {
			return err
		}
		_, err = m.state.Update(ctx, "pages", []byte(strconv.FormatInt(max(used-m.stash, 0), 10)), rev)
		if err == nil {
			m.stash = 0
			break
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("cluster: give pages back: %w", err)
		}
	}
	m.setLent(false)
	return nil
}

// Stash returns how many pages the member took from the budget and has
// not handed out.
func (m *Member) Stash() int64 {
	m.pagesMu.Lock()
	defer m.pagesMu.Unlock()
	return m.stash
}

func (m *Member) isLent() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lent
}

// setLent records whether the member holds pages of the budget, for its
// status.
func (m *Member) setLent(lent bool) {
	m.changeStatus(func() bool {
		if m.lent == lent {
			return false
		}
		m.lent = lent
		return true
	})
}

// othersLent is ErrPagesLent when another live worker's status says it
// holds pages of the budget, else nil.
func (m *Member) othersLent(ctx context.Context) error {
	statuses, err := m.statuses(ctx)
	if err != nil {
		return err
	}
	for _, s := range statuses {
		if s.Lent && s.Worker != m.cfg.Worker {
			return ErrPagesLent
		}
	}
	return nil
}

func (c *conn) pagesUsed(ctx context.Context) (used int64, rev uint64, err error) {
	e, err := c.state.Get(ctx, "pages")
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("cluster: read pages: %w", err)
	}
	used, err = strconv.ParseInt(string(e.Value()), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("cluster: pages %q: %w", e.Value(), err)
	}
	return used, e.Revision(), nil
}

// Quiescent reports whether the crawl is over: every live worker reports
// itself idle and up to date with the stream, and every partition is held
// by a live worker that says so, in two looks gap apart that see the same
// stream sequence and the same status versions. A URL routed, appended or
// claimed in between moves the sequence; a worker that becomes busy or
// takes a partition moves its version. A gap of a quarter lease gives
// every worker time to publish a change it has made. why says what kept
// it from being over, for logging.
func (m *Member) Quiescent(ctx context.Context, gap time.Duration) (over bool, why string, err error) {
	fp1, why, err := m.look(ctx)
	if err != nil || why != "" {
		return false, why, err
	}
	select {
	case <-ctx.Done():
		return false, "", ctx.Err()
	case <-time.After(gap):
	}
	fp2, why, err := m.look(ctx)
	if err != nil || why != "" {
		return false, why, err
	}
	if fp1 != fp2 {
		return false, "the crawl moved between two looks", nil
	}
	return true, "", nil
}

// look returns a fingerprint of the crawl when it looks over, or why not.
func (c *conn) look(ctx context.Context) (fingerprint, why string, err error) {
	info, err := c.stream.Info(ctx)
	if err != nil {
		return "", "", fmt.Errorf("cluster: quiescence: %w", err)
	}
	last := info.State.LastSeq
	statuses, err := c.statuses(ctx)
	if err != nil {
		return "", "", err
	}
	holders, err := c.holders(ctx)
	if err != nil {
		return "", "", err
	}
	var fp strings.Builder
	fmt.Fprintf(&fp, "%d", last)
	byWorker := map[string]*memberStatus{}
	for i := range statuses {
		s := &statuses[i]
		byWorker[s.Worker] = s
		switch {
		case !s.Load.idle():
			return "", fmt.Sprintf("worker %s is busy", s.Worker), nil
		case len(s.Held) > 0 && s.Through < last:
			return "", fmt.Sprintf("worker %s has read the stream to %d of %d", s.Worker, s.Through, last), nil
		}
		fmt.Fprintf(&fp, " %s/%d/%d", s.Worker, s.Started, s.Version)
	}
	for p := range c.cfg.Partitions {
		w, ok := holders[p]
		if !ok {
			return "", fmt.Sprintf("partition %d is not held", p), nil
		}
		if s := byWorker[w]; s == nil || !slices.Contains(s.Held, p) {
			return "", fmt.Sprintf("partition %d is changing hands", p), nil
		}
	}
	return fp.String(), "", nil
}

// statuses reads the live workers' status, sorted by worker.
func (c *conn) statuses(ctx context.Context) ([]memberStatus, error) {
	es, err := entries(ctx, c.members)
	if err != nil {
		return nil, fmt.Errorf("cluster: read workers: %w", err)
	}
	out := make([]memberStatus, 0, len(es))
	for k, e := range es {
		var s memberStatus
		if err := json.Unmarshal(e.Value(), &s); err != nil {
			return nil, fmt.Errorf("cluster: worker %s: %w", k, err)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b memberStatus) int { return strings.Compare(a.Worker, b.Worker) })
	return out, nil
}

// holders reads who holds each claimed partition.
func (c *conn) holders(ctx context.Context) (map[int]string, error) {
	es, err := entries(ctx, c.leases)
	if err != nil {
		return nil, fmt.Errorf("cluster: read claims: %w", err)
	}
	out := map[int]string{}
	for k, e := range es {
		p, err := strconv.Atoi(strings.TrimPrefix(k, "p."))
		if err != nil {
			continue
		}
		var v claimValue
		if err := json.Unmarshal(e.Value(), &v); err != nil {
			return nil, fmt.Errorf("cluster: claim %s: %w", k, err)
		}
		out[p] = v.Worker
	}
	return out, nil
}
