package cluster

import (
	"fmt"
	"testing"
	"time"
)

// TestShareRobots: what one worker shares of a robots.txt URL another
// reads, the last write winning; a URL never shared reads as absent.
func TestShareRobots(t *testing.T) {
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", 2), Options{})
	b := join(t, testConfig(s.ClientURL(), "b", 2), Options{})
	waitFor(t, "both to hold partitions", func() bool { return balanced(2, a, b) })
	const key = "http://x.test:8080/robots.txt"
	if _, ok, err := b.SharedRobots(ctx, key); ok || err != nil {
		t.Fatalf("SharedRobots before any share = %v, %v; want absent", ok, err)
	}
	for _, v := range []string{"first", "second"} {
		if err := a.ShareRobots(ctx, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if data, ok, err := b.SharedRobots(ctx, key); !ok || err != nil || string(data) != "second" {
		t.Fatalf("SharedRobots = %q, %v, %v; want the last share", data, ok, err)
	}
}

// TestShareRobotsOwnBucket: shared answers go to the crawl's robots
// bucket, whose server forgets a key RobotsKeep after its last write, and
// the state bucket, which keeps what it holds for ever, does not grow
// with them.
func TestShareRobotsOwnBucket(t *testing.T) {
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", 2), Options{})
	stateBefore, err := a.state.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		key := fmt.Sprintf("http://h%d.test/robots.txt", i)
		if err := a.ShareRobots(ctx, key, []byte("answer")); err != nil {
			t.Fatal(err)
		}
	}
	st, err := a.robots.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bucket() != "crawl-"+a.cfg.Name+"-robots" || st.TTL() != RobotsKeep || st.Values() != n {
		t.Fatalf("robots bucket %s: TTL %v, %d values; want crawl-%s-robots, %v, %d", st.Bucket(), st.TTL(), st.Values(), a.cfg.Name, RobotsKeep, n)
	}
	stateAfter, err := a.state.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stateAfter.Values() != stateBefore.Values() {
		t.Fatalf("state bucket went from %d to %d values as answers were shared", stateBefore.Values(), stateAfter.Values())
	}
}

// TestWantRobots: a want for an origin reaches the member holding its
// partition, and only it.
func TestWantRobots(t *testing.T) {
	s := startServer(t, true)
	got := make(chan string, 8)
	var members []*Member
	for _, w := range []string{"a", "b"} {
		members = append(members, join(t, testConfig(s.ClientURL(), w, 2), Options{OnRobotsWanted: func(origin string) { got <- w + " " + origin }}))
	}
	waitFor(t, "both to hold partitions", func() bool { return balanced(2, members...) })
	const origin = "http://x.test:8080"
	holder := "a"
	if _, ok := members[0].Hold(Partition(origin, 2)); !ok {
		holder = "b"
	}
	if err := members[1].WantRobots(origin); err != nil {
		t.Fatal(err)
	}
	if g := next(t, got); g != holder+" "+origin {
		t.Fatalf("want delivered as %q; want %q", g, holder+" "+origin)
	}
	// A second want reaches the holder alone: the other never saw one.
	if err := members[0].WantRobots(origin); err != nil {
		t.Fatal(err)
	}
	if g := next(t, got); g != holder+" "+origin {
		t.Fatalf("want delivered as %q; want %q", g, holder+" "+origin)
	}
	select {
	case g := <-got:
		t.Fatalf("want delivered again, as %q", g)
	default:
	}
}

// next is the next value of ch, waited for up to patience.
func next(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatal("nothing came")
		return ""
	}
}
