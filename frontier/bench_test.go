package frontier

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// The benchmark's sizes are flags so that a plain `go test -bench .` stays
// small: -frontier.n=1000000 or 10000000 for the figures.
var (
	benchN       = flag.Int("frontier.n", 100_000, "distinct URLs BenchmarkFrontier adds then drains")
	benchHosts   = flag.Int("frontier.hosts", 10_000, "hosts of BenchmarkFrontier")
	benchWorkers = flag.Int("frontier.workers", 16, "goroutines adding, and draining, in BenchmarkFrontier")
	benchBatch   = flag.Int("frontier.batch", 50, "links per Add in BenchmarkFrontier")
	benchAddOnly = flag.Bool("frontier.addonly", false, "BenchmarkFrontier only adds, and reports no drain")
	benchHeap    = flag.String("frontier.heapprofile", "", "write heap profiles to this path plus -add and -drain at the end of each phase")
)

// BenchmarkFrontier adds -frontier.n distinct URLs across -frontier.hosts
// hosts in batches of -frontier.batch links (a page's links: nine in ten to
// the page's host), from -frontier.workers goroutines as an engine's
// workers would, then drains them with the same number of goroutines doing
// Next, SetReady and Done. It reports both rates, the peak Go heap and the
// database size per URL, on a real, synced bbolt file.
func BenchmarkFrontier(b *testing.B) {
	n, workers, batch := *benchN, *benchWorkers, *benchBatch
	for range b.N {
		path := filepath.Join(b.TempDir(), "bench.db")
		f, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		peak := watchHeap()

		st0, tx0 := f.db.Stats(), lastTx(b, f)
		start := time.Now()
		var next atomic.Int64 // the next batch to add
		batches := int64((n + batch - 1) / batch)
		parallel(workers, func(int) {
			items := make([]Item, 0, batch)
			for i := next.Add(1) - 1; i < batches; i = next.Add(1) - 1 {
				items = benchBatchItems(b, items[:0], i, min(batch, n-int(i)*batch))
				if _, err := f.Add(items); err != nil {
					b.Error(err)
					return
				}
			}
		})
		addTime := time.Since(start)
		logWrites(b, "add", f, st0, tx0, n)
		if s := f.Stats(); s.Queued != int64(n) {
			b.Fatalf("after adding %d: %+v", n, s)
		}
		addedSize := fileSize(b, path)
		writeHeapProfile(b, "-add")
		addAll, addLive := peak()
		b.Logf("add: peak heap %.1f MiB, live %.1f MiB", float64(addAll)/(1<<20), float64(addLive)/(1<<20))
		if *benchAddOnly {
			all, live := addAll, addLive
			b.ReportMetric(float64(n)/addTime.Seconds(), "add-urls/s")
			b.ReportMetric(float64(all)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(live)/(1<<20), "peak-live-heap-MiB")
			b.ReportMetric(float64(addedSize)/float64(n), "db-B/url-queued")
			_ = f.Close()
			continue
		}

		st0, tx0 = f.db.Stats(), lastTx(b, f)
		peak = watchHeap()
		start = time.Now()
		var handed atomic.Int64
		parallel(workers, func(int) {
			for {
				now := time.Now()
				l, idle, err := f.Next(now)
				if err != nil {
					b.Error(err)
					return
				}
				if l == nil {
					if idle.Drained {
						return
					}
					select {
					case <-f.Wake():
					case <-time.After(time.Millisecond):
					}
					continue
				}
				f.SetReady(l.Origin, now)
				if _, err := f.Done(l, Outcome{}, nil); err != nil {
					b.Error(err)
					return
				}
				handed.Add(1)
			}
		})
		drainTime := time.Since(start)
		logWrites(b, "drain", f, st0, tx0, n)
		if s := f.Stats(); s.Done != int64(n) || handed.Load() != int64(n) {
			b.Fatalf("after draining: %+v, %d handed out", s, handed.Load())
		}
		writeHeapProfile(b, "-drain")
		heapAll, heapLive := peak()
		b.Logf("drain: peak heap %.1f MiB, live %.1f MiB", float64(heapAll)/(1<<20), float64(heapLive)/(1<<20))
		heapAll, heapLive = max(heapAll, addAll), max(heapLive, addLive)
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/addTime.Seconds(), "add-urls/s")
		b.ReportMetric(float64(n)/drainTime.Seconds(), "next+done/s")
		b.ReportMetric(float64(heapAll)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(heapLive)/(1<<20), "peak-live-heap-MiB")
		b.ReportMetric(float64(addedSize)/float64(n), "db-B/url-queued")
		b.ReportMetric(float64(fileSize(b, path))/float64(n), "db-B/url-done")
	}
}

// benchBatchItems appends the links of page i: distinct URLs, nine in ten
// on the page's host, with the page as referrer.
func benchBatchItems(b *testing.B, items []Item, i int64, size int) []Item {
	rng := rand.New(rand.NewPCG(uint64(i), 1))
	hosts := *benchHosts
	page := fmt.Sprintf("https://www.host%d.example/section-%d/", rng.IntN(hosts), rng.IntN(100))
	pageHost := page[:len(page)-len("/section-00/")]
	for j := range size {
		origin := pageHost
		if rng.IntN(10) == 0 {
			origin = fmt.Sprintf("https://www.host%d.example", rng.IntN(hosts))
		}
		u, err := Canonicalize(fmt.Sprintf("%s/section-%d/item-%d.html?ref=%d", origin, rng.IntN(100), i*int64(*benchBatch)+int64(j), rng.IntN(10)), 0)
		if err != nil {
			b.Fatal(err)
		}
		items = append(items, Item{URL: u, Depth: 1 + rng.IntN(5), Referrer: page})
	}
	return items
}

// writeHeapProfile writes the live heap to -frontier.heapprofile plus
// suffix, when the flag is set: at the end of each phase after a GC, and
// as the live heap peaks ("-peak", with b nil).
func writeHeapProfile(b *testing.B, suffix string) {
	if *benchHeap == "" {
		return
	}
	out, err := os.Create(*benchHeap + suffix)
	if err == nil {
		if suffix != "-peak" {
			runtime.GC()
		}
		err = errors.Join(pprof.WriteHeapProfile(out), out.Close())
	}
	if err != nil && b != nil {
		b.Fatal(err)
	}
}

// lastTx returns the id of the last transaction committed.
func lastTx(b *testing.B, f *Frontier) int {
	var id int
	if err := f.db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		b.Fatal(err)
	}
	return id
}

// logWrites logs what a phase of n URLs wrote since the database's stats
// were st0 and its last transaction tx0.
func logWrites(b *testing.B, phase string, f *Frontier, st0 bbolt.Stats, tx0, n int) {
	st := f.db.Stats()
	d := st.Sub(&st0)
	commits := lastTx(b, f) - tx0
	b.Logf("%s: %d commits (%.0f URLs each), pages written %d (%.2f/url), write time %v, spill %v, rebalance %v, free pages %d",
		phase, commits, float64(n)/float64(max(commits, 1)), d.TxStats.GetWrite(), float64(d.TxStats.GetWrite())/float64(n),
		d.TxStats.GetWriteTime(), d.TxStats.GetSpillTime(), d.TxStats.GetRebalanceTime(), st.FreePageN)
}

func parallel(n int, fn func(int)) {
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() { fn(w) })
	}
	wg.Wait()
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// watchHeap samples the Go heap until the returned function is called,
// which returns the peaks of all heap objects (garbage not yet swept
// included) and of the live heap (as marked by the last GC).
func watchHeap() func() (all, live uint64) {
	stop, done := make(chan struct{}), make(chan struct{})
	var peakAll, peakLive, profiled uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	read := func() {
		metrics.Read(sample)
		peakAll = max(peakAll, sample[0].Value.Uint64())
		if live := sample[1].Value.Uint64(); live > peakLive {
			if *benchHeap != "" && live > profiled+1<<20 {
				writeHeapProfile(nil, "-peak")
				profiled = live
			}
			peakLive = live
		}
	}
	runtime.GC()
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() (uint64, uint64) {
		close(stop)
		<-done
		read()
		return peakAll, peakLive
	}
}
