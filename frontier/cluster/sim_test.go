package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// The simulation is a crawl of a small site graph by two engines that use
// the package as the crawler's engine will: a worker is killed part way,
// the other takes its partitions over, and the crawl ends by itself.

const (
	simHosts        = 12
	simPages        = 7 // per host: page i links to 2i+1 and 2i+2 on its host
	simFetch        = 3 * time.Millisecond
	simFetchTimeout = 100 * time.Millisecond
)

func simURL(h, i int) string { return fmt.Sprintf("http://h%d.test/p%d", h, i) }

// simLinks returns the links of page i of host h: two pages below it on
// its host, and for the first page, the first page of the next host.
func simLinks(h, i int) []frontier.Item {
	var out []frontier.Item
	for _, j := range []int{2*i + 1, 2*i + 2} {
		if j < simPages {
			out = append(out, simItem(h, j))
		}
	}
	if i == 0 {
		out = append(out, simItem((h+1)%simHosts, 0))
	}
	return out
}

func simItem(h, i int) frontier.Item {
	u := simURL(h, i)
	return frontier.Item{URL: frontier.URL{Request: u, Key: u, Origin: fmt.Sprintf("http://h%d.test", h)}}
}

// fetchLog records every request, to check that two never overlap on one
// host and that only the requests whose outcome was never written (the
// killed worker's in flight, those of a partition lost meanwhile) are made
// again.
type fetchLog struct {
	mu    sync.Mutex
	spans map[string][][2]time.Time // by origin
	n     map[string]int            // by URL
}

func (l *fetchLog) fetch(origin, url string) {
	start := time.Now()
	time.Sleep(simFetch)
	l.mu.Lock()
	l.spans[origin] = append(l.spans[origin], [2]time.Time{start, time.Now()})
	l.n[url]++
	l.mu.Unlock()
}

// simPart is an engine's state of a partition it holds: what the frontier
// would keep in bbolt.
type simPart struct {
	Queue     []string
	Done      map[string]bool
	after     uint64    // applied through this stream sequence
	tenure    uint64    // of the hold, for Applied
	notBefore time.Time // no request before: after an unclean takeover
	changed   int       // entries applied since the last snapshot
}

func (s *simPart) apply(e Entry) {
	for _, it := range e.Found {
		if !s.Done[it.Key] && !slices.Contains(s.Queue, it.Key) {
			s.Queue = append(s.Queue, it.Key)
		}
	}
	for _, d := range e.Done {
		s.Done[d.Key] = true
	}
	s.changed++
}

type simEngine struct {
	t       *testing.T
	m       *Member
	log     *fetchLog
	changes chan Change
	parts   map[int]*simPart
	killAt  int64 // fetches after which the engine dies; 0: never
	fetches atomic.Int64
	// taken counts partitions gained from a dead worker; restored, those
	// gained with a snapshot.
	taken, restored int
	// fenced counts requests whose partition was lost before they were
	// written (a turn late on a busy machine): each is made again.
	fenced int
}

func newSimEngine(t *testing.T, url, worker string, p int, log *fetchLog, killAt int64) *simEngine {
	e := &simEngine{t: t, log: log, changes: make(chan Change, 1024), parts: map[int]*simPart{}, killAt: killAt}
	e.m = join(t, testConfig(url, worker, p), Options{OnChange: func(c Change) {
		select {
		case e.changes <- c:
		default:
			t.Error("change dropped")
		}
	}})
	return e
}

// run crawls until the crawl is over (true) or the engine dies (false).
func (e *simEngine) run(ctx context.Context) (bool, error) {
	for ctx.Err() == nil {
		if err := e.handleChanges(ctx); err != nil {
			return false, err
		}
		e.report()
		p, key, ok := e.pick(time.Now())
		if !ok {
			if over, err := e.idle(ctx); over || err != nil {
				return over, err
			}
			continue
		}
		h, i := 0, 0
		if n, err := fmt.Sscanf(key, "http://h%d.test/p%d", &h, &i); n != 2 {
			return false, fmt.Errorf("simulated URL %q: %v", key, err)
		}
		e.log.fetch(fmt.Sprintf("http://h%d.test", h), key)
		if e.killAt > 0 && e.fetches.Add(1) >= e.killAt {
			e.m.stop() // killed with the request in flight: nothing written
			return false, nil
		}
		if err := e.settle(ctx, p, key, simLinks(h, i)); err != nil {
			return false, err
		}
	}
	return false, ctx.Err()
}

func (e *simEngine) handleChanges(ctx context.Context) error {
	for {
		select {
		case c := <-e.changes:
			switch c.Kind {
			case Gained:
				s := &simPart{Done: map[string]bool{}, tenure: c.Tenure}
				seq, err := e.m.Restore(ctx, c.Partition, func(r io.Reader) error { return json.NewDecoder(r).Decode(s) })
				if err != nil {
					return err
				}
				s.after = seq
				if seq > 0 {
					e.restored++
				}
				if !c.Clean {
					s.notBefore = time.Now().Add(simFetchTimeout)
					e.taken++
				}
				e.parts[c.Partition] = s
				if err := e.replay(ctx, c.Partition); err != nil {
					return err
				}
			case Handover:
				delete(e.parts, c.Partition) // requests are settled between picks
				e.m.Release(c.Partition)
			case Lost:
				delete(e.parts, c.Partition)
			}
		default:
			return nil
		}
	}
}

func (e *simEngine) replay(ctx context.Context, p int) error {
	s := e.parts[p]
	through, err := e.m.Replay(ctx, p, s.after, func(_ uint64, en Entry) error { s.apply(en); return nil })
	if err != nil {
		return err
	}
	s.after = through
	e.m.Applied(p, s.tenure, through)
	return nil
}

// pick returns a URL of a held partition that may be fetched at now.
func (e *simEngine) pick(now time.Time) (int, string, bool) {
	for p, s := range e.parts {
		if now.Before(s.notBefore) || !e.m.MayStart(p, now) {
			continue
		}
		for len(s.Queue) > 0 && s.Done[s.Queue[0]] {
			s.Queue = s.Queue[1:]
		}
		if len(s.Queue) > 0 {
			return p, s.Queue[0], true
		}
	}
	return 0, "", false
}

// settle writes what the request found before acknowledging it, as the
// engine must: the done URL and links of its own partition to the log,
// the others routed.
func (e *simEngine) settle(ctx context.Context, p int, key string, links []frontier.Item) error {
	var mine, others []frontier.Item
	for _, it := range links {
		if Partition(it.Origin, e.m.Partitions()) == p {
			mine = append(mine, it)
		} else {
			others = append(others, it)
		}
	}
	if _, err := e.m.Route(ctx, others); err != nil {
		return err
	}
	en := Entry{Found: mine, Done: []Done{{Key: key}}}
	if _, err := e.m.Append(ctx, p, en); errors.Is(err, ErrFenced) || errors.Is(err, ErrNotHeld) {
		delete(e.parts, p) // lost meanwhile: its new owner redoes the request
		e.fenced++
		return nil
	} else if err != nil {
		return err
	}
	s := e.parts[p]
	s.apply(en)
	if s.changed >= 8 {
		if err := e.replay(ctx, p); err != nil {
			return err
		}
		var b bytes.Buffer
		_ = json.NewEncoder(&b).Encode(s)
		if err := e.m.Snapshot(ctx, p, s.after, &b); err != nil && !errors.Is(err, ErrFenced) {
			return err
		}
		s.changed = 0
	}
	return nil
}

// report tells the member the engine's load, as it must whenever it
// changes.
func (e *simEngine) report() int64 {
	queued := int64(0)
	for _, s := range e.parts {
		for _, k := range s.Queue {
			if !s.Done[k] {
				queued++
			}
		}
	}
	e.m.Report(Load{Queued: queued})
	return queued
}

// idle reads routed URLs, reports the engine's load, and asks whether the
// crawl is over.
func (e *simEngine) idle(ctx context.Context) (bool, error) {
	for p := range e.parts {
		if err := e.replay(ctx, p); err != nil {
			return false, err
		}
	}
	if queued := e.report(); queued > 0 {
		time.Sleep(10 * time.Millisecond) // waiting for a window or a notBefore
		return false, nil
	}
	over, _, err := e.m.Quiescent(ctx, 50*time.Millisecond)
	return over, err
}

// TestSimulatedCrawl: two engines crawl a site graph; one dies with a
// request in flight. Every URL is done, only that request is made again
// (and any whose partition a late turn lost before it was written), no
// two requests to one host overlap, and the survivor ends the crawl.
func TestSimulatedCrawl(t *testing.T) {
	t.Parallel() // it mostly waits for a lease to run out
	const p = 4
	s := startServer(t, true)
	ctx := testContext(t)
	log := &fetchLog{spans: map[string][][2]time.Time{}, n: map[string]int{}}
	a := newSimEngine(t, s.ClientURL(), "a", p, log, 15)
	b := newSimEngine(t, s.ClientURL(), "b", p, log, 0)
	if _, err := a.m.Route(ctx, []frontier.Item{simItem(0, 0)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var overA, overB bool
	var errA, errB error
	wg.Go(func() { overA, errA = a.run(ctx) })
	wg.Go(func() { overB, errB = b.run(ctx) })
	wg.Wait()
	if errA != nil || errB != nil || overA || !overB {
		t.Fatalf("a: over %v, %v; b: over %v, %v; want a killed and b to end the crawl", overA, errA, overB, errB)
	}

	done := map[string]bool{}
	for _, s := range b.parts {
		for k := range s.Done {
			done[k] = true
		}
	}
	again := 0 // requests made again
	for h := range simHosts {
		for i := range simPages {
			u := simURL(h, i)
			if !done[u] {
				t.Errorf("%s never done", u)
			}
			switch n := log.n[u]; {
			case n == 0:
				t.Errorf("%s never fetched", u)
			case n > 1:
				again += n - 1
			}
		}
	}
	// The killed worker's request in flight is made again, and so is
	// any whose partition was lost before it was written.
	if lost := a.fenced + b.fenced; again > 1+lost {
		t.Errorf("%d requests made again; only the killed worker's request in flight may be, and the %d whose partition was lost before they were written", again, lost)
	}
	for origin, spans := range log.spans {
		slices.SortFunc(spans, func(x, y [2]time.Time) int { return x[0].Compare(y[0]) })
		for i := 1; i < len(spans); i++ {
			if spans[i][0].Before(spans[i-1][1]) {
				t.Errorf("%s: a request started at %v while another ran until %v", origin, spans[i][0], spans[i-1][1])
			}
		}
	}
	if b.taken == 0 {
		t.Error("b took no partition over from a")
	}
	t.Logf("b took %d partitions from a, %d restored from a snapshot; %d requests made again", b.taken, b.restored, again)
	if len(b.m.Holds()) != p {
		t.Errorf("b holds %d partitions at the end, want %d", len(b.m.Holds()), p)
	}
}
