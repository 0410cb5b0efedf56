package cluster

import (
	"testing"
	"time"
)

// one is the only move moves picks, or -1.
func one(self string, live []string, statuses []memberStatus) (int, string) {
	for p, to := range moves(self, live, statuses, 1) {
		return p, to
	}
	return -1, ""
}

// TestMove: only the busiest worker moves, and only when the idlest is
// more than balanceGap of the mean behind; it moves its heaviest partition
// that is at most half the gap, to the idlest, and goes on while it stays
// the busiest by far.
func TestMove(t *testing.T) {
	move := one
	live := []string{"a", "b", "c"}
	st := func(w string, weights map[int]int64) memberStatus { return memberStatus{Worker: w, Weights: weights} }
	statuses := []memberStatus{
		st("a", map[int]int64{1: 500, 2: 300, 3: 100}), // 900
		st("b", map[int]int64{4: 400}),                 // 400
		st("c", map[int]int64{5: 100}),                 // 100
	}
	if p, to := move("a", live, statuses); p != 2 || to != "c" {
		t.Fatalf("a moves %d to %q; want 2 (300, at most half the gap of 800) to c", p, to)
	}
	for _, w := range []string{"b", "c"} {
		if p, _ := move(w, live, statuses); p >= 0 {
			t.Fatalf("%s, not the busiest, moves %d", w, p)
		}
	}
	even := []memberStatus{st("a", map[int]int64{1: 110}), st("b", map[int]int64{2: 100}), st("c", map[int]int64{3: 95})}
	if p, _ := move("a", live, even); p >= 0 {
		t.Fatalf("a moves %d though the workers are within %v of the mean", p, balanceGap)
	}
	// A worker with no status yet counts as idle; one partition too
	// heavy to move without overshooting stays.
	if p, to := move("a", []string{"a", "b", "d"}, []memberStatus{st("a", map[int]int64{1: 50, 2: 10}), st("b", map[int]int64{3: 40})}); p != 2 || to != "d" {
		t.Fatalf("a moves %d to %q; want 2 to d, the newcomer", p, to)
	}
	if p, _ := move("a", live, []memberStatus{st("a", map[int]int64{1: 900}), st("b", nil), st("c", nil)}); p >= 0 {
		t.Fatalf("a moves its only partition %d, which would make the receiver the busiest", p)
	}
	// Ten even partitions on one worker of three: it keeps four (of 10
	// units of load, 4 against 3 and 3), moving three to each other.
	heavy := map[int]int64{}
	for p := range 10 {
		heavy[p] = 10
	}
	got := moves("a", live, []memberStatus{st("a", heavy)}, movesAtOnce)
	to := map[string]int{}
	for _, w := range got {
		to[w]++
	}
	if len(got) != 6 || to["b"] != 3 || to["c"] != 3 {
		t.Fatalf("a moves %v; want three partitions to each of b and c", got)
	}
}

// TestOwners: a partition moved for balance belongs to its receiver while
// it is live, and to the rendezvous owner otherwise.
func TestOwners(t *testing.T) {
	live := []string{"a", "b", "c"}
	var p int
	for p = 0; owner(live, p) == "b"; p++ {
	}
	own := owners(live, map[int]string{p: "b"}, p+1)
	if own[p] != "b" {
		t.Fatalf("partition %d moved to b belongs to %q", p, own[p])
	}
	for q := range p {
		if own[q] != owner(live, q) {
			t.Fatalf("partition %d, never moved, belongs to %q; want its rendezvous owner %q", q, own[q], owner(live, q))
		}
	}
	if own := owners([]string{"a", "c"}, map[int]string{p: "b"}, p+1); own[p] != owner([]string{"a", "c"}, p) {
		t.Fatalf("partition %d moved to b, which left, belongs to %q", p, own[p])
	}
}

// TestBalanceMovesLoad: of two workers holding half the partitions each,
// the one reporting all the work moves partitions to the other until
// their weights are even, records the moves in the plan bucket, and no
// partition is held twice or lost; the moved partitions stay with their
// receiver.
func TestBalanceMovesLoad(t *testing.T) {
	const parts = 8
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", parts), Options{})
	b := join(t, testConfig(s.ClientURL(), "b", parts), Options{})
	waitFor(t, "both to hold partitions", func() bool { return balanced(parts, a, b) })
	before := len(a.Holds())
	// The work is all in a's partitions: each worker reports the same
	// weights, each publishing those of the partitions it holds.
	heavy := map[int]int64{}
	for _, h := range a.Holds() {
		heavy[h.Partition] = 100
	}
	a.ReportWeights(heavy)
	b.ReportWeights(heavy)
	waitFor(t, "a to move half its load to b", func() bool {
		return len(a.Holds()) == before/2+before%2 && len(b.Holds()) == parts-len(a.Holds())
	})
	plan, err := a.readPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != before/2 {
		t.Fatalf("plan %v; want the %d partitions moved", plan, before/2)
	}
	for p, w := range plan {
		if _, ok := b.Hold(p); w != "b" || !ok {
			t.Fatalf("partition %d moved to %q; b holds it: %v", p, w, ok)
		}
	}
	// With the weights even, nothing more moves (for a lease: a few
	// turns, or none on a machine too busy, when this proves nothing).
	n := len(a.Holds())
	for end := time.Now().Add(a.cfg.Lease); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if len(a.Holds()) != n || len(a.Holds())+len(b.Holds()) != parts {
			t.Fatalf("a holds %d, b %d after the balance settled; want %d and %d", len(a.Holds()), len(b.Holds()), n, parts-n)
		}
	}
}
