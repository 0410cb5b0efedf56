package crawler

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scriptSite serves pages /p/0 … /p/n-1, each linking to three others:
// built by a script from a JSON API (/api/N.json) when scripted, written
// in the HTML otherwise; and an empty robots.txt.
func scriptSite(b *testing.B, n int, scripted bool) *httptest.Server {
	filler := strings.Repeat("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n", 25)
	next := func(i int) []int { return []int{(i + 1) % n, (i*7 + 13) % n, (i*11 + 29) % n} }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		switch {
		case path == "/robots.txt":
			return
		case path == "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `const n = location.pathname.split('/').pop();
fetch('/api/' + n + '.json').then(r => r.json()).then(links => {
	const nav = document.getElementById('nav');
	for (const l of links) { const a = document.createElement('a'); a.href = l; a.textContent = l; nav.appendChild(a); }
});`)
			return
		case strings.HasPrefix(path, "/api/"):
			i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path, "/api/"), ".json"))
			if err != nil || i < 0 || i >= n {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			var ls []string
			for _, k := range next(i) {
				ls = append(ls, fmt.Sprintf(`"/p/%d"`, k))
			}
			fmt.Fprintf(w, "[%s]", strings.Join(ls, ","))
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(path, "/p/"))
		if err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><head><title>%d</title><script src="/app.js"></script></head><body>%s<nav id="nav">`, i, filler)
		if !scripted {
			for _, k := range next(i) {
				fmt.Fprintf(w, `<a href="/p/%d">/p/%d</a>`, k, k)
			}
		}
		fmt.Fprint(w, "</nav></body></html>")
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkRender crawls a site of 60 pages with no delay: built by
// scripts and rendered, and the same pages written in their HTML and not
// rendered. It reports pages/s and the peak memory of this process and
// its descendants (the browser's processes), the sum of their Pss sampled
// every 50ms from /proc.
func BenchmarkRender(b *testing.B) {
	const pages = 60
	for _, tc := range []struct {
		name   string
		render bool
	}{{"rendered", true}, {"static", false}} {
		b.Run(tc.name, func(b *testing.B) {
			var browser string
			if tc.render {
				browser = browserOrSkip(b)
			}
			srv := scriptSite(b, pages, tc.render)
			var fetched int64
			var elapsed time.Duration
			peak := watchRSS()
			for b.Loop() {
				cfg := DefaultConfig()
				cfg.Seeds, cfg.StateDir = []string{srv.URL + "/p/0"}, b.TempDir()
				cfg.Politeness.Delay = 0
				cfg.Fetch.Workers = 4
				cfg.Output.URLs = filepath.Join(b.TempDir(), "urls.jsonl")
				cfg.Render = RenderConfig{Enabled: tc.render, Browser: browser, Tabs: 2, Timeout: 20 * time.Second, Settle: 200 * time.Millisecond}
				c, err := New(cfg, Options{})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				sum, err := c.Run(context.Background())
				elapsed += time.Since(start)
				c.Close()
				if err != nil {
					b.Fatal(err)
				}
				if sum.Pages["2xx"] < pages {
					b.Fatalf("fetched %d pages, want %d", sum.Pages["2xx"], pages)
				}
				fetched += sum.Pages["2xx"]
			}
			rss := peak()
			b.ReportMetric(float64(fetched)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(rss)/(1<<20), "peak-PSS-MiB")
		})
	}
}

// watchRSS samples the memory (Pss) of this process and its
// descendants every 50ms until the returned function is called, which
// returns the largest sum seen, in bytes.
func watchRSS() (stop func() int64) {
	var peak atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if n := treeRSS(os.Getpid()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// treeRSS is the memory (Pss) of pid and its descendants, from /proc.
func treeRSS(pid int) int64 {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after the last ')'.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
				if pp, err := strconv.Atoi(f[1]); err == nil {
					children[pp] = append(children[pp], p)
				}
			}
		}
	}
	var total int64
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[0]
		todo = append(todo[1:], children[p]...)
		total += rssOf(p)
	}
	return total
}

// rssOf is the proportional set size of pid (Pss: its private memory
// and its share of what it shares with others, so that the browser's
// processes, which share much, are not counted many times) in bytes, 0
// when it cannot be read.
func rssOf(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
