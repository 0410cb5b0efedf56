package frontier

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDone takes a URL with Next and gives it back with Done, one
// lease at a time per host, on a real, synced bbolt file: what a crawl of
// a few hosts at one connection each asks of the frontier per page. With
// links=0 each Done is a lone request of its own (a slow or Crawl-delayed
// host); with links=200 each page links, as a documentation page does, to
// 40 navigation pages, 159 neighbours already seen and one new page. With
// hosts=2 two goroutines crawl a host each, as the docs mirror does. It
// reports the CPU time per Next+Done (the process's, the writer's
// included), and the commits and pages written per Done.
func BenchmarkDone(b *testing.B) {
	for _, tc := range []struct{ links, hosts int }{{0, 1}, {200, 1}, {200, 2}} {
		b.Run(fmt.Sprintf("links=%d/hosts=%d", tc.links, tc.hosts), func(b *testing.B) {
			benchDone(b, tc.links, tc.hosts)
		})
	}
}

func benchDone(b *testing.B, links, hosts int) {
	f, err := Open(b.TempDir()+"/bench.db", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sites := make([]*docsSite, hosts)
	for i := range sites {
		sites[i] = &docsSite{origin: fmt.Sprintf("https://docs%d.example", i), links: links}
		// Without links, the queue is filled beforehand, b.N URLs in all.
		n := 1
		if links == 0 {
			n = b.N/hosts + 1
		}
		for start := 0; start < n; start += DefaultMaxBatch {
			var items []Item
			for j := start; j < min(n, start+DefaultMaxBatch); j++ {
				items = append(items, sites[i].item(j, 0))
			}
			if _, err := f.Add(items); err != nil {
				b.Fatal(err)
			}
		}
	}
	byOrigin := map[string]*docsSite{}
	for _, s := range sites {
		byOrigin[s.origin] = s
	}
	tx0, st0 := lastTx(b, f), f.db.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := benchCPU()
	var wg sync.WaitGroup
	for i := range sites {
		ops := b.N / hosts
		if i < b.N%hosts {
			ops++
		}
		wg.Go(func() {
			var buf []Item
			for range ops {
				l, _, err := f.Next(time.Now())
				if err != nil || l == nil {
					b.Errorf("next: %v %v", l, err)
					return
				}
				f.SetReady(l.Origin, time.Time{})
				buf = byOrigin[l.Origin].pageLinks(buf[:0], l)
				if _, err := f.Done(l, Outcome{}, buf); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	cpu := benchCPU() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	st := f.db.Stats()
	d := st.Sub(&st0)
	b.ReportMetric(float64(lastTx(b, f)-tx0)/float64(b.N), "commits/op")
	b.ReportMetric(float64(d.TxStats.GetWrite())/float64(b.N), "pages/op")
}

// docsSite is a documentation site of pages /library/mod<i>.html.
type docsSite struct {
	origin string
	links  int
	mu     sync.Mutex
	items  []Item // made once each
}

func (s *docsSite) item(i, linkDepth int) Item {
	for len(s.items) <= i {
		key := s.origin + "/library/mod" + strconv.Itoa(len(s.items)) + ".html"
		s.items = append(s.items, Item{URL: URL{Key: key, Request: key, Origin: s.origin}, Depth: 1})
	}
	it := s.items[i]
	it.LinkDepth = linkDepth
	return it
}

// pageLinks appends the links of the page of lease l: 40 navigation pages,
// then its neighbours after it, the last of which is new.
func (s *docsSite) pageLinks(links []Item, l *Lease) []Item {
	if s.links == 0 {
		return links
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(l.Key, s.origin+"/library/mod"), ".html"))
	if err != nil {
		panic(l.Key)
	}
	ld := max(l.LinkDepth, 0) + 1
	for k := range 40 {
		links = append(links, s.item(k, ld))
	}
	for k := 1; k <= s.links-40; k++ {
		links = append(links, s.item(i+k, ld))
	}
	return links
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
