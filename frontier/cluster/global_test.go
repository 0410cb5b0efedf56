package cluster

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// TestTakeNeverExceeds: workers taking pages at once never take more than
// the budget together, and take all of it.
func TestTakeNeverExceeds(t *testing.T) {
	const limit = 60
	s := startServer(t, true)
	ctx := testContext(t)
	ms := []*Member{join(t, testConfig(s.ClientURL(), "a", 2), Options{}), join(t, testConfig(s.ClientURL(), "b", 2), Options{})}
	var total atomic.Int64
	var wg sync.WaitGroup
	for i := range 6 {
		m := ms[i%2]
		wg.Go(func() {
			for {
				got, err := m.Take(ctx, int64(1+i%3), limit)
				if err != nil {
					t.Error(err)
					return
				}
				if got == 0 {
					return
				}
				total.Add(got)
			}
		})
	}
	wg.Wait()
	if total.Load() != limit {
		t.Fatalf("took %d pages, want %d", total.Load(), limit)
	}
	if got, err := ms[0].Take(ctx, 1, limit); got != 0 || err != nil {
		t.Fatalf("Take after the budget = %d, %v", got, err)
	}
	if got, err := ms[0].Take(ctx, 5, 0); got != 5 || err != nil {
		t.Fatalf("Take with no limit = %d, %v", got, err)
	}
}

// catchUp replays every partition m holds and reports m idle and up to
// date.
func catchUp(t *testing.T, m *Member) {
	t.Helper()
	for _, h := range m.Holds() {
		_, through := replayAll(t, m, h.Partition, 0)
		m.Applied(h.Partition, h.Tenure, through)
	}
	m.Report(Load{})
}

func TestQuiescent(t *testing.T) {
	const n = 4
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", n), Options{})
	b := join(t, testConfig(s.ClientURL(), "b", n), Options{})
	waitFor(t, "a and b to split the partitions", func() bool { return balanced(n, a, b) })
	over := func() (bool, string) {
		ok, why, err := a.Quiescent(ctx, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		return ok, why
	}
	if ok, _ := over(); ok {
		t.Fatal("over before the workers read the stream")
	}
	catchUp(t, a)
	catchUp(t, b)
	waitFor(t, "the crawl to be over", func() bool { ok, _ := over(); return ok })

	b.Report(Load{Queued: 3})
	waitFor(t, "b to be seen busy", func() bool { _, why := over(); return why == "worker b is busy" })
	catchUp(t, b)
	waitFor(t, "the crawl to be over again", func() bool { ok, _ := over(); return ok })

	// A URL routed to a partition that nobody has read yet: not over.
	if _, err := a.Route(ctx, []frontier.Item{item(t, originIn(t, 1, n), "/late")}); err != nil {
		t.Fatal(err)
	}
	if ok, why := over(); ok {
		t.Fatal("over with a routed URL unread")
	} else {
		t.Log(why)
	}
	catchUp(t, a)
	catchUp(t, b)
	waitFor(t, "the crawl to be over at last", func() bool { ok, _ := over(); return ok })
}
