package cluster

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// TestRouteDedup: a batch routed twice (here in another order, with an
// item repeated) is stored once, and each partition's owner reads each of
// its URLs once.
func TestRouteDedup(t *testing.T) {
	const n = 4
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", n), Options{})
	waitFor(t, "a to hold every partition", func() bool { return balanced(n, a) })
	var items []frontier.Item
	for p := range 2 {
		o := originIn(t, p, n)
		items = append(items, item(t, o, "/1"), item(t, o, "/2"))
	}
	stored, err := a.Route(ctx, items)
	if err != nil || stored != 2 {
		t.Fatalf("Route = %d, %v; want 2 messages, one per partition", stored, err)
	}
	again := append(slices.Clone(items), items[0])
	slices.Reverse(again)
	stored, err = a.Route(ctx, again)
	if err != nil || stored != 0 {
		t.Fatalf("Route again = %d, %v; want 0 stored", stored, err)
	}
	// What the owner wrote to its log itself is not routed.
	if _, err := a.Append(ctx, 0, Entry{Done: []Done{{Key: items[0].Key}}}); err != nil {
		t.Fatal(err)
	}
	var routed []Entry
	if _, err := a.ReplayRouted(ctx, 0, 0, func(_ uint64, e Entry) error { routed = append(routed, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(routed) != 1 || len(routed[0].Found) != 2 || len(routed[0].Done) != 0 {
		t.Errorf("ReplayRouted(0) = %+v; want the one batch routed to partition 0", routed)
	}
	last, counts, err := a.Inbound(ctx)
	if err != nil || last == 0 || !maps.Equal(counts, map[int]uint64{0: 1, 1: 1}) {
		t.Errorf("Inbound = %d, %v, %v; want a sequence and one message in each of partitions 0 and 1", last, counts, err)
	}
	for p := range n {
		got, through := replayAll(t, a, p, 0)
		if again, through2 := replayAll(t, a, p, through); len(again) != 0 || through2 < through {
			t.Errorf("partition %d: replay from %d gives %d entries and %d", p, through, len(again), through2)
		}
		var keys []string
		for _, e := range got {
			for _, it := range e.Found {
				keys = append(keys, it.Key)
			}
		}
		var want []string
		for _, it := range items {
			if Partition(it.Origin, n) == p {
				want = append(want, it.Key)
			}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("partition %d reads %q, want %q", p, keys, want)
		}
	}
}

func TestFitEntrySplits(t *testing.T) {
	var items []frontier.Item
	for i := range 200 {
		items = append(items, item(t, "http://h.test", "/page/"+string(rune('a'+i%26))+"/"+time.Duration(i).String()))
	}
	const limit = 2000
	total := 0
	for rest := items; len(rest) > 0; {
		data, k, err := fitEntry(rest, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > limit || k < 1 {
			t.Fatalf("fitEntry gave %d items in %d bytes, limit %d", k, len(data), limit)
		}
		e, err := decodeEntry(data)
		if err != nil || len(e.Found) != k {
			t.Fatalf("decode: %d items, %v; want %d", len(e.Found), err, k)
		}
		total += k
		rest = rest[k:]
	}
	if total != len(items) {
		t.Fatalf("split %d items into %d", len(items), total)
	}
}
