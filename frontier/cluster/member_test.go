package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

func TestJoinUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = Join(testContext(t), testConfig("nats://"+addr, "a", 4), quietLog(), Options{})
	if err == nil || !strings.Contains(err.Error(), "cluster.nats: connect to nats://"+addr) {
		t.Fatalf("Join = %v, want a cluster.nats connect error", err)
	}
}

func TestJoinWithoutJetStream(t *testing.T) {
	s := startServer(t, false)
	_, err := Join(testContext(t), testConfig(s.ClientURL(), "a", 4), quietLog(), Options{})
	if !errors.Is(err, ErrNoJetStream) || !strings.Contains(err.Error(), "cluster.nats") {
		t.Fatalf("Join = %v, want ErrNoJetStream naming cluster.nats", err)
	}
}

func TestJoinRefusesOtherSettings(t *testing.T) {
	s := startServer(t, true)
	join(t, testConfig(s.ClientURL(), "a", 4), Options{})
	cfg := testConfig(s.ClientURL(), "b", 8)
	cfg.Lease = 3 * time.Second
	_, err := Join(testContext(t), cfg, quietLog(), Options{})
	var ce *ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 2 ||
		ce.Problems[0].Key != "cluster.partitions" || ce.Problems[1].Key != "cluster.lease" {
		t.Fatalf("Join = %v, want problems with cluster.partitions and cluster.lease", err)
	}
}

// heldBy maps each partition to the members holding it.
func heldBy(ms ...*Member) map[int][]string {
	out := map[int][]string{}
	for _, m := range ms {
		for _, h := range m.Holds() {
			out[h.Partition] = append(out[h.Partition], m.Worker())
		}
	}
	return out
}

// balanced reports whether every partition is held by exactly the member
// rendezvous hashing over ms gives it.
func balanced(p int, ms ...*Member) bool {
	var workers []string
	for _, m := range ms {
		workers = append(workers, m.Worker())
	}
	held := heldBy(ms...)
	for i := range p {
		if len(held[i]) != 1 || held[i][0] != owner(workers, i) {
			return false
		}
	}
	return true
}

func TestBalanceOneToThree(t *testing.T) {
	const p = 48
	s := startServer(t, true)
	a := join(t, testConfig(s.ClientURL(), "a", p), Options{})
	waitFor(t, "a to hold every partition", func() bool { return balanced(p, a) })
	b := join(t, testConfig(s.ClientURL(), "b", p), Options{})
	waitFor(t, "a and b to split the partitions", func() bool { return balanced(p, a, b) })
	c := join(t, testConfig(s.ClientURL(), "c", p), Options{})
	waitFor(t, "a, b and c to split the partitions", func() bool { return balanced(p, a, b, c) })
	for _, m := range []*Member{a, b, c} {
		if n := len(m.Holds()); n < p/3/2 || n > p/3*2 {
			t.Errorf("%s holds %d of %d partitions, want about %d", m.Worker(), n, p, p/3)
		}
	}
	st, err := Status(testContext(t), testConfig(s.ClientURL(), "", p))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Workers) != 3 || len(st.Unheld) != 0 {
		t.Fatalf("Status = %+v, want 3 workers holding everything", st)
	}
	for i, ws := range st.Workers {
		if want := []*Member{a, b, c}[i]; ws.Worker != want.Worker() || len(ws.Partitions) != len(want.Holds()) {
			t.Errorf("Status worker %d = %s holding %v, want %s holding %d", i, ws.Worker, ws.Partitions, want.Worker(), len(want.Holds()))
		}
	}
}

// TestPausedMemberLosesPartitions plays a worker that hangs (its loop stops,
// as in a long pause or a lost network): the other takes its partitions
// once the server lets its claims go, the hung one's window to start
// requests closed before the other's opened, and the hung one's late
// write is refused.
func TestPausedMemberLosesPartitions(t *testing.T) {
	t.Parallel() // it mostly waits for a lease to run out
	const p = 8
	s := startServer(t, true)
	a := join(t, testConfig(s.ClientURL(), "a", p), Options{})
	b := join(t, testConfig(s.ClientURL(), "b", p), Options{})
	waitFor(t, "a and b to split the partitions", func() bool { return balanced(p, a, b) })
	a.stop()
	before := a.Holds()
	if len(before) == 0 {
		t.Fatal("a holds nothing")
	}
	waitFor(t, "b to hold every partition", func() bool { return balanced(p, b) })
	for _, ha := range before {
		hb, ok := b.Hold(ha.Partition)
		if !ok {
			t.Fatalf("b does not hold partition %d", ha.Partition)
		}
		if !ha.Until.Before(hb.Since) {
			t.Errorf("partition %d: a may start until %v, b from %v: the windows overlap", ha.Partition, ha.Until, hb.Since)
		}
		// The server keeps a claim a lease after it stored a's last
		// write of it, which a sent at Until less the window's length:
		// measured from that write, not from the stop, which a loop
		// late on a busy machine may follow by more than a turn.
		sent := ha.Until.Add(-(a.t.lease - a.t.margin))
		if d := hb.Since.Sub(sent); d < a.t.lease {
			t.Errorf("partition %d taken %v after a's last claim was sent, sooner than its lease allows", ha.Partition, d)
		}
		if a.MayStart(ha.Partition, time.Now()) {
			t.Errorf("a may still start requests for partition %d", ha.Partition)
		}
		if hb.Clean {
			t.Errorf("partition %d taken from a hung worker is said to be clean", ha.Partition)
		}
	}
	_, err := a.Append(testContext(t), before[0].Partition, Entry{Done: []Done{{Key: "http://x.test/"}}})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("a's late Append = %v, want ErrFenced", err)
	}
}

// changes records what OnChange reports.
type changes struct {
	mu  sync.Mutex
	log []Change
}

func (c *changes) add(ch Change) {
	c.mu.Lock()
	c.log = append(c.log, ch)
	c.mu.Unlock()
}

func (c *changes) of(kind ChangeKind) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, ch := range c.log {
		if ch.Kind == kind {
			out = append(out, ch.Partition)
		}
	}
	return out
}

// TestHandover: a worker that should give partitions to a newcomer stops
// starting requests at once and keeps its claims until the engine releases
// them; the newcomer claims them after, well within a lease.
func TestHandover(t *testing.T) {
	const p = 8
	s := startServer(t, true)
	var ca, cb changes
	a := join(t, testConfig(s.ClientURL(), "a", p), Options{OnChange: ca.add})
	waitFor(t, "a to hold every partition", func() bool { return balanced(p, a) })
	if got := ca.of(Gained); len(got) != p {
		t.Fatalf("a gained %v, want all %d", got, p)
	}
	for _, h := range a.Holds() {
		if !h.Clean {
			t.Errorf("partition %d, never crawled, is not clean", h.Partition)
		}
	}
	b := join(t, testConfig(s.ClientURL(), "b", p), Options{OnChange: cb.add})
	waitFor(t, "a to hand partitions over", func() bool { return len(ca.of(Handover)) > 0 })
	time.Sleep(a.t.renew * 2) // b's turns find the partitions still claimed
	moving := ca.of(Handover)
	for _, i := range moving {
		if a.MayStart(i, time.Now()) {
			t.Errorf("a may start requests for partition %d it hands over", i)
		}
		if _, ok := b.Hold(i); ok {
			t.Errorf("b holds partition %d before a released it", i)
		}
	}
	deleted := watchDeletes(t, a)
	for _, i := range moving {
		a.Release(i)
	}
	waitFor(t, "b to take the partitions", func() bool { return balanced(p, a, b) })
	for _, i := range moving {
		// Not let go by the server when its lease ran out, which a
		// crash would have needed: a deleted it.
		if !deleted(i) {
			t.Errorf("partition %d: a's claim was not deleted on release", i)
		}
	}
	if got, want := fmt.Sprint(cb.of(Gained)), fmt.Sprint(moving); got != want {
		t.Errorf("b gained %s, want %s", got, want)
	}
	for _, i := range moving {
		if h, _ := b.Hold(i); !h.Clean {
			t.Errorf("partition %d released by a is not clean for b", i)
		}
	}
}

// watchDeletes watches the crawl's claims through m's connection and
// returns what reports whether partition p's claim was deleted since (by
// Release or Close). A claim the server lets go when its lease runs out
// leaves no mark, so this tells a worker that gave a partition up from
// one that died, whatever the time either took.
func watchDeletes(t *testing.T, m *Member) (deleted func(p int) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := m.leases.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range w.Updates() {
			if e != nil && e.Operation() == jetstream.KeyValueDelete {
				mu.Lock()
				seen[e.Key()] = true
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		_ = w.Stop()
		cancel()
		<-done
	})
	return func(p int) bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[leaseKey(p)]
	}
}

// TestGracefulLeave: a worker that closes gives its partitions up at once.
func TestGracefulLeave(t *testing.T) {
	const p = 8
	s := startServer(t, true)
	a := join(t, testConfig(s.ClientURL(), "a", p), Options{})
	b := join(t, testConfig(s.ClientURL(), "b", p), Options{})
	waitFor(t, "a and b to split the partitions", func() bool { return balanced(p, a, b) })
	held := b.Holds()
	deleted := watchDeletes(t, a)
	if err := b.Close(testContext(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a to hold every partition", func() bool { return balanced(p, a) })
	for _, hb := range held {
		// Deleted at once, not let go when the lease ran out, as
		// after a crash.
		if !deleted(hb.Partition) {
			t.Errorf("partition %d: b's claim was not deleted when it left", hb.Partition)
		}
		if h, _ := a.Hold(hb.Partition); !h.Clean {
			t.Errorf("partition %d left by b's Close is not clean for a", hb.Partition)
		}
	}
}

// TestAdoptOwnClaim: a member whose windows closed (as after a long pause)
// while the server still kept its claims takes them up again at once,
// fenced anew, rather than waiting out the lease.
func TestAdoptOwnClaim(t *testing.T) {
	const p = 4
	s := startServer(t, true)
	var ca changes
	// A lease long enough that the server lets the claims go only if
	// the member is stuck: its next turn, called at once, must find
	// them, even on a busy machine.
	cfg := testConfig(s.ClientURL(), "a", p)
	cfg.Lease = 30 * time.Second
	a := join(t, cfg, Options{OnChange: ca.add})
	a.wake() // the first turn now, not an eighth of a lease from now
	waitFor(t, "a to hold every partition", func() bool { return balanced(p, a) })
	before := a.Holds()
	dropped := time.Now()
	a.expire(dropped.Add(time.Hour))
	if len(a.Holds()) != 0 || len(ca.of(Lost)) != p {
		t.Fatalf("after expiry a holds %v, lost %v", a.Holds(), ca.of(Lost))
	}
	a.wake()
	waitFor(t, "a to hold every partition again", func() bool { return balanced(p, a) })
	if d := time.Since(dropped); d >= a.t.lease {
		t.Errorf("a took its partitions back after %v, as late as a stranger would", d)
	}
	for i, h := range a.Holds() {
		if h.Revision <= before[i].Revision {
			t.Errorf("partition %d: revision %d after %d", h.Partition, h.Revision, before[i].Revision)
		}
	}
}

// TestServerRestart: while the server is away no window is renewed, so
// the workers stop starting requests within a lease; when it is back they
// reconnect and hold every partition again, and the log written before is
// still there.
func TestServerRestart(t *testing.T) {
	t.Parallel() // it mostly waits for a lease to run out
	const p = 4
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	opts := func() *server.Options {
		return &server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true}
	}
	s := startServerWith(t, opts())
	a := join(t, testConfig(s.ClientURL(), "a", p), Options{})
	b := join(t, testConfig(s.ClientURL(), "b", p), Options{})
	waitFor(t, "a and b to split the partitions", func() bool { return balanced(p, a, b) })
	ha := a.Holds()[0]
	if _, err := a.Append(testContext(t), ha.Partition, Entry{Done: []Done{{Key: "http://kept.test/"}}}); err != nil {
		t.Fatal(err)
	}

	s.Shutdown()
	s.WaitForShutdown()
	waitFor(t, "every window to close", func() bool {
		now := time.Now()
		for i := range p {
			if a.MayStart(i, now) || b.MayStart(i, now) {
				return false
			}
		}
		return true
	})

	startServerWith(t, opts())
	waitFor(t, "a and b to start requests again", func() bool {
		now := time.Now()
		for i := range p {
			if a.MayStart(i, now) == b.MayStart(i, now) {
				return false
			}
		}
		return balanced(p, a, b)
	})
	var m *Member
	if _, ok := a.Hold(ha.Partition); ok {
		m = a
	} else {
		m = b
	}
	if got, _ := replayAll(t, m, ha.Partition, 0); len(got) != 1 || got[0].Done[0].Key != "http://kept.test/" {
		t.Fatalf("after the restart the log holds %+v", got)
	}
	// The restarted server's cleanup runs before the members': close them
	// while it is up.
	for _, m := range []*Member{a, b} {
		if err := m.Close(testContext(t)); err != nil {
			t.Error(err)
		}
	}
}

// TestRenewAfterLostReply: a claim whose revision moved under the member
// is kept when the newer write is its own (a renewal whose reply was lost)
// and lost when it is another's.
func TestRenewAfterLostReply(t *testing.T) {
	const p = 2
	s := startServer(t, true)
	ctx := testContext(t)
	var ca changes
	// A lease long enough that no window closes while the test runs,
	// however late a turn: partition 0 must be kept, and only for the
	// reason under test. The turns are called (wake), not waited for.
	cfg := testConfig(s.ClientURL(), "a", p)
	cfg.Lease = 30 * time.Second
	a := join(t, cfg, Options{OnChange: ca.add})
	a.wake()
	waitFor(t, "a to hold every partition", func() bool { return balanced(p, a) })
	rewrite := func(part int, value []byte) uint64 {
		e, err := a.leases.Get(ctx, leaseKey(part))
		if err != nil {
			t.Fatal(err)
		}
		rev, err := a.leases.Update(ctx, leaseKey(part), value, e.Revision())
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	own := rewrite(0, a.claimValue())
	other := rewrite(1, []byte(`{"worker":"a","nonce":"another process"}`))
	a.wake()
	waitFor(t, "a to lose partition 1", func() bool { return len(ca.of(Lost)) > 0 })
	waitFor(t, "a to renew partition 0", func() bool { h, _ := a.Hold(0); return h.Revision > own })
	if got := ca.of(Lost); len(got) != 1 || got[0] != 1 {
		t.Fatalf("a lost %v, want only partition 1", got)
	}
	if _, ok := a.Hold(1); ok {
		t.Fatal("a holds partition 1, claimed by another process")
	}
	if e, err := a.leases.Get(ctx, leaseKey(1)); err != nil || e.Revision() != other {
		t.Fatalf("the other process's claim was touched: %v, %v", e, err)
	}
}

// resume starts a stopped member's loop again: a worker back from a pause.
func (m *Member) resume() {
	loop, cancel := context.WithCancel(context.Background())
	m.done = make(chan struct{})
	m.cancel = cancel
	m.stopOnce = sync.Once{}
	go m.run(loop)
}

// TestPausedMemberComesBack: a worker back from a pause longer than its
// lease finds its partitions taken, reports them Lost, never starts a
// request for them meanwhile, and then gets its share back by handover.
func TestPausedMemberComesBack(t *testing.T) {
	t.Parallel() // it mostly waits for a lease to run out
	const p = 8
	s := startServer(t, true)
	var ca changes
	a := join(t, testConfig(s.ClientURL(), "a", p), Options{OnChange: ca.add})
	var bp atomic.Pointer[Member]
	b := join(t, testConfig(s.ClientURL(), "b", p), Options{OnChange: func(c Change) {
		if m := bp.Load(); m != nil && c.Kind == Handover {
			m.Release(c.Partition) // as an engine with nothing in flight
		}
	}})
	bp.Store(b)
	waitFor(t, "a and b to split the partitions", func() bool { return balanced(p, a, b) })
	before := a.Holds()
	a.stop()
	waitFor(t, "b to hold every partition", func() bool { return balanced(p, b) })
	a.resume()
	waitFor(t, "a to report its partitions lost", func() bool { return len(ca.of(Lost)) >= len(before) })
	for _, h := range before {
		if a.MayStart(h.Partition, time.Now()) {
			t.Errorf("a may start requests for partition %d that b holds", h.Partition)
		}
	}
	waitFor(t, "a and b to split the partitions again", func() bool { return balanced(p, a, b) })
	for _, h := range a.Holds() {
		if !h.Clean {
			t.Errorf("partition %d handed back to a is not clean", h.Partition)
		}
	}
}
