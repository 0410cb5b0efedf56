package cluster

import (
	"errors"
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
				if errors.Is(err, ErrPagesLent) {
					continue // the other member's stash: its takers spend it
				}
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

// TestTakeBatches: three workers taking a page at a time take the budget
// in batches, writing the count far less often than once a page; a worker
// that gives back (GiveBack, or Close) what it did not hand out lets the
// others take it, one that finds the budget spent while another holds
// some is told so (ErrPagesLent), and together they never take more than
// the budget.
func TestTakeBatches(t *testing.T) {
	const limit = 200
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", 2), Options{})
	b := join(t, testConfig(s.ClientURL(), "b", 2), Options{})
	c := join(t, testConfig(s.ClientURL(), "c", 2), Options{})
	// a takes one page and stashes a batch; c takes one and leaves.
	if got, err := a.Take(ctx, 1, limit); got != 1 || err != nil {
		t.Fatalf("Take = %d, %v", got, err)
	}
	if n := a.Stash(); n != pagesBatch-1 {
		t.Fatalf("a's stash is %d after taking a page, want %d", n, pagesBatch-1)
	}
	if got, err := c.Take(ctx, 1, limit); got != 1 || err != nil {
		t.Fatalf("Take = %d, %v", got, err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if used, _, err := a.pagesUsed(ctx); err != nil || used != pagesBatch+1 {
		t.Fatalf("budget used %d, %v after c left; want a's batch and c's page, %d", used, err, pagesBatch+1)
	}
	// b takes the rest a page at a time, and is told a holds some.
	handed := int64(2)
	for {
		got, err := b.Take(ctx, 1, limit)
		if errors.Is(err, ErrPagesLent) {
			break
		}
		if err != nil || got != 1 {
			t.Fatalf("Take = %d, %v; want a page until the budget is lent", got, err)
		}
		handed++
	}
	_, rev, err := b.pagesUsed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages handed to b, the budget written %d times in all", handed-2, rev)
	if handed != limit-(pagesBatch-1) || rev > limit/4 {
		t.Fatalf("b was handed %d pages with the budget written %d times; want %d with at most %d", handed-2, rev, limit-pagesBatch-1, limit/4)
	}
	// a has nothing left to fetch and gives its stash back.
	if err := a.GiveBack(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := b.Take(ctx, 1, limit)
		if errors.Is(err, ErrPagesLent) {
			continue // a's status has not said yet that it gave back
		}
		if err != nil {
			t.Fatal(err)
		}
		if got == 0 {
			break
		}
		handed += got
	}
	if handed != limit || b.Stash() != 0 {
		t.Fatalf("%d pages handed out (b's stash %d); want the budget, %d", handed, b.Stash(), limit)
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
