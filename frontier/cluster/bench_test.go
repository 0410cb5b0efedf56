package cluster

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/politecrawl/crawler/frontier"
)

// settled is what a settled request writes: the URL done and the links
// found on its page for hosts of its own partition.
func settled(origin string, i, links int) Entry {
	e := Entry{Done: []Done{{Key: fmt.Sprintf("%s/page/%d", origin, i)}}}
	for j := range links {
		u := fmt.Sprintf("%s/page/%d/link/%d", origin, i, j)
		e.Found = append(e.Found, frontier.Item{URL: frontier.URL{Request: u, Key: u, Origin: origin}, Depth: 3, Referrer: origin + "/"})
	}
	return e
}

// benchMember is a member holding all of p partitions on a server of its
// own.
func benchMember(b *testing.B, p int) *Member {
	s := startServer(b, true)
	m := join(b, testConfig(s.ClientURL(), "a", p), Options{})
	waitFor(b, "the member to hold every partition", func() bool { return balanced(p, m) })
	return m
}

// BenchmarkAppend: one partition's log, one settled request (a done URL
// and 20 links) at a time: bounded by a round trip, as every append to a
// partition waits for the one before.
func BenchmarkAppend(b *testing.B) {
	m := benchMember(b, 1)
	ctx := testContext(b)
	origin := "http://bench.test"
	b.ResetTimer()
	for i := range b.N {
		if _, err := m.Append(ctx, 0, settled(origin, i, 20)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendPartitions: appends to 64 partitions from as many
// goroutines as GOMAXPROCS × 8, as an engine's workers would.
func BenchmarkAppendPartitions(b *testing.B) {
	const p = 64
	m := benchMember(b, p)
	ctx := testContext(b)
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		part := int(next.Add(1)) % p
		i := 0
		for pb.Next() {
			i++
			if _, err := m.Append(ctx, part, settled("http://bench.test", i, 20)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRoute: a page's 50 links to hosts of other partitions.
func BenchmarkRoute(b *testing.B) {
	const p = 256
	s := startServer(b, true)
	m := join(b, testConfig(s.ClientURL(), "a", p), Options{})
	ctx := testContext(b)
	b.ResetTimer()
	for i := range b.N {
		items := make([]frontier.Item, 50)
		for j := range items {
			o := fmt.Sprintf("http://h%d.test", j)
			u := fmt.Sprintf("%s/from/%d", o, i)
			items[j] = frontier.Item{URL: frontier.URL{Request: u, Key: u, Origin: o}}
		}
		if _, err := m.Route(ctx, items); err != nil {
			b.Fatal(err)
		}
	}
}
