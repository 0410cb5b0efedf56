package crawler

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage/links"
)

// A site whose sitemap lists every page, deepest first: the queue order a
// sitemap gives must not decide link_depth. /t is at the end of a chain of
// eight links from / and one link from /hub, which / links to as well,
// after twenty other pages the sitemap lists after the chain.
func TestLinkDepthOfASitemapListedSite(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nSitemap: {{base}}/sitemap.xml\n"})
	top := []string{"/l1"}
	var listed, others []string
	for i := 1; i <= 20; i++ {
		x := fmt.Sprintf("/x%d", i)
		s.html(x)
		others = append(others, x)
	}
	s.html("/", append(append(top, others...), "/hub", "/r")...)
	for i := 1; i <= 8; i++ {
		next := fmt.Sprintf("/l%d", i+1)
		if i == 8 {
			next = "/t"
		}
		s.html(fmt.Sprintf("/l%d", i), next)
		listed = append([]string{fmt.Sprintf("/l%d", i)}, listed...)
	}
	s.html("/hub", "/t", "/l5")
	s.html("/t", "/u")
	s.html("/u")
	s.set("/r", page{status: 301, headers: map[string]string{"Location": "/l7"}})
	listed = append([]string{"/u", "/t"}, append(append(listed, others...), "/hub", "/r", "/")...)
	s.set("/sitemap.xml", page{ctype: "application/xml", body: urlset(listed)})
	for _, perHost := range []int{1, 3} {
		cfg := testConfig(t, s.URL+"/")
		cfg.Politeness.MaxPerHost = perHost
		cfg.Output.Links = filepath.Join(t.TempDir(), "links.jsonl")
		runCrawl(t, cfg)
		if n := linkDepthDiffs(t, cfg, 12); n != 0 {
			t.Errorf("max_per_host %d: %d pages' link_depth is not the shortest chain of links", perHost, n)
		}
	}
}

// With two requests to the host at once, a page two hops deeper than one
// being visited waits for it: /slow, at link depth 1, links to /x, which a
// chain of fast pages reaches at depth 4. /slow answers once /x is asked
// for, or after a second (when the crawler waits, as it should).
func TestLinkDepthWaitsForAPageUnderWay(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.html("/", "/slow", "/a")
	s.html("/slow", "/x")
	s.html("/a", "/b")
	s.html("/b", "/c")
	s.html("/c", "/x")
	s.html("/x")
	asked := make(chan struct{})
	var once sync.Once
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/x":
			once.Do(func() { close(asked) })
		case "/slow":
			select {
			case <-asked:
			case <-time.After(time.Second):
			case <-r.Context().Done():
			}
		}
		s.serve(w, r)
	})
	cfg := testConfig(t, s.URL+"/")
	cfg.Politeness.MaxPerHost = 2
	cfg.Output.Links = filepath.Join(t.TempDir(), "links.jsonl")
	runCrawl(t, cfg)
	if n := linkDepthDiffs(t, cfg, 10); n != 0 {
		t.Errorf("%d pages' link_depth is not the shortest chain of links", n)
	}
}

// The same on a generated site of many pages with random links and
// redirects, a sitemap listing every page in a random order, several
// workers and several requests to the host at once.
func TestLinkDepthOfAGeneratedSite(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls 1,200 pages")
	}
	s := generatedSite(t, 1200)
	cfg := testConfig(t, s.URL+"/p/0")
	cfg.Fetch.Workers = 8
	cfg.Politeness.MaxPerHost = 4
	cfg.Output.Links = filepath.Join(t.TempDir(), "links.jsonl")
	runCrawl(t, cfg)
	if d := linkDepthDiffs(t, cfg, 10); d != 0 {
		t.Errorf("%d pages' link_depth is not the shortest chain of links", d)
	}
}

// A crawl stopped midway and run again on its state carries on in the
// same order: the queue's order by link depth is kept in the state.
func TestLinkDepthAcrossARestart(t *testing.T) {
	s := generatedSite(t, 400)
	// The first run is held after 150 answers, however fast the machine
	// runs it: it cannot end before it is stopped.
	var answers atomic.Int64
	held := make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(held) }) }) // before the site closes, which waits for its answers
	serve := s.Config.Handler
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answers.Add(1) > 150 {
			select {
			case <-held:
			case <-r.Context().Done():
				return
			}
		}
		serve.ServeHTTP(w, r)
	})
	cfg := testConfig(t, s.URL+"/p/0")
	cfg.Politeness.MaxPerHost = 2
	cfg.Output.Links = filepath.Join(t.TempDir(), "links.jsonl")
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(c)
	if !poll(func() bool { return answers.Load() > 150 }) {
		t.Fatal("150 pages were not fetched in time")
	}
	if err := errors.Join(stop(), c.Close()); err != nil {
		t.Fatal(err)
	}
	release.Do(func() { close(held) })
	if n := len(inventory(t, cfg.Output.URLs)); n >= 400 {
		t.Fatalf("the first run wrote %d URLs; want it stopped midway", n)
	}
	runCrawl(t, cfg)
	if d := linkDepthDiffs(t, cfg, 10); d != 0 {
		t.Errorf("%d pages' link_depth is not the shortest chain of links", d)
	}
}

// generatedSite is a site of n pages, /p/0 to /p/n-1, each linking to a
// few pages just after it (long chains) and now and then to any (short
// cuts), one in twenty a redirect to any page, and a sitemap listing them
// all in a random order.
func generatedSite(t *testing.T, n int) *testSite {
	rnd := rand.New(rand.NewPCG(22, uint64(n)))
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nSitemap: {{base}}/sitemap.xml\n"})
	var listed []string
	for i := range n {
		p := fmt.Sprintf("/p/%d", i)
		listed = append(listed, p)
		if i > 0 && rnd.IntN(20) == 0 {
			s.set(p, page{status: 301, headers: map[string]string{"Location": fmt.Sprintf("/p/%d", rnd.IntN(n))}})
			continue
		}
		var links []string
		for range 1 + rnd.IntN(4) {
			links = append(links, fmt.Sprintf("/p/%d", (i+1+rnd.IntN(5))%n))
		}
		if rnd.IntN(8) == 0 {
			links = append(links, fmt.Sprintf("/p/%d", rnd.IntN(n)))
		}
		s.html(p, links...)
	}
	rnd.Shuffle(len(listed), func(i, j int) { listed[i], listed[j] = listed[j], listed[i] })
	s.set("/sitemap.xml", page{ctype: "application/xml", body: urlset(listed)})
	return s
}

// urlset is a sitemap listing paths, in order.
func urlset(paths []string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "<url><loc>{{base}}%s</loc></url>\n", p)
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

// linkDepthDiffs compares the link_depth of the last inventory record of
// each URL with a breadth-first walk of the link graph the crawl wrote,
// from its seeds, over the links the README says are followed (a redirect
// counting none), logs up to show of the differences and returns how
// many there are.
func linkDepthDiffs(t *testing.T, cfg Config, show int) int {
	t.Helper()
	truth := bfsLinkDepths(t, cfg.Output.Links, cfg.Seeds)
	inv := inventory(t, cfg.Output.URLs)
	var diffs []string
	for raw, r := range inv {
		u, err := frontier.Canonicalize(raw, 0)
		if err != nil {
			continue
		}
		want, reached := truth[u.Key]
		got := -1
		if r.LinkDepth != nil {
			got = *r.LinkDepth
		}
		if !reached {
			want = -1
		}
		if got != want {
			diffs = append(diffs, fmt.Sprintf("%s: link_depth %d, shortest chain %d", raw, got, want))
		}
	}
	if len(truth) < 2 {
		t.Fatalf("the link graph reaches %d URLs", len(truth))
	}
	sort.Strings(diffs)
	for i, d := range diffs {
		if i == show {
			t.Logf("… and %d more", len(diffs)-show)
			break
		}
		t.Log(d)
	}
	return len(diffs)
}

// bfsLinkDepths walks the link graph file from seeds, breadth first, over
// the links the README says are followed or checked (a, area, frames, a
// <link> whose rel names a page or a requisite, canonical, meta refresh,
// hreflang alternates, and page requisites; not nofollow) at one hop each
// and redirects at none, and returns each canonical URL key reached with
// its depth.
func bfsLinkDepths(t *testing.T, path string, seeds []string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	key := func(raw string) string {
		u, err := frontier.Canonicalize(raw, 0)
		if err != nil {
			return ""
		}
		return u.Key
	}
	type edge struct {
		to     string
		weight int
	}
	out := map[string][]edge{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			From, To, Kind, Rel string
			Nofollow            bool
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("link graph: %v", err)
		}
		w := 1
		switch l.Kind {
		case "redirect":
			w = 0
		case "a", "area", "frame", "iframe", "canonical", "meta-refresh", "hreflang", "img", "script", "css":
		case "link":
			if links.LinkKind(l.Rel) == links.Other {
				continue // preconnect, dns-prefetch, author…: not followed
			}
		default:
			continue
		}
		if l.Nofollow {
			continue
		}
		from, to := key(l.From), key(l.To)
		if from != "" && to != "" {
			out[from] = append(out[from], edge{to, w})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// 0-1 breadth-first walk: a redirect's target goes to the front.
	depth := map[string]int{}
	var deque []string
	for _, s := range seeds {
		if k := key(s); k != "" {
			depth[k] = 0
			deque = append(deque, k)
		}
	}
	for len(deque) > 0 {
		u := deque[0]
		deque = deque[1:]
		for _, e := range out[u] {
			d := depth[u] + e.weight
			if old, ok := depth[e.to]; ok && old <= d {
				continue
			}
			depth[e.to] = d
			if e.weight == 0 {
				deque = append([]string{e.to}, deque...)
			} else {
				deque = append(deque, e.to)
			}
		}
	}
	return depth
}
