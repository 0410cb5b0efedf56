package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage/mirror"
)

// changingSite is a site whose pages change between rounds, with ETags and
// Last-Modified, answering conditional requests with 304.
type changingSite struct {
	*httptest.Server
	mu      sync.Mutex
	round   int
	log     []string // "METHOD path status"
	lastmod string
}

func (s *changingSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	round := s.round
	s.mu.Unlock()
	status := s.answer(w, r, round)
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("%s %d", r.URL.Path, status))
	s.mu.Unlock()
}

func (s *changingSite) answer(w http.ResponseWriter, r *http.Request, round int) int {
	page := func(etag, body string) int {
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(304)
			return 304
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, body)
		return 200
	}
	switch r.URL.Path {
	case "/robots.txt":
		fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", s.URL)
		return 200
	case "/sitemap.xml":
		etag := fmt.Sprintf(`"sitemap-%d"`, min(round, 1))
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(304)
			return 304
		}
		w.Header().Set("ETag", etag)
		fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/news</loc><lastmod>%s</lastmod></url></urlset>`,
			s.URL, map[bool]string{true: "2026-01-01", false: "2026-02-01"}[round == 0])
		return 200
	case "/":
		return page(`"home"`, `<a href="/a">a</a> <a href="/b">b</a> <a href="/d/">d/</a> <a href="/d">d</a>`)
	case "/d/":
		return page(`"d"`, `a directory index`)
	case "/a":
		if round == 0 {
			return page(`"a1"`, `first version`)
		}
		return page(`"a2"`, `second version <a href="/new">new</a>`)
	case "/b":
		if round > 0 {
			http.NotFound(w, r)
			return 404
		}
		return page(`"b"`, `to be deleted`)
	case "/news":
		return page(`"news-`+fmt.Sprint(min(round, 1))+`"`, `news`)
	case "/new":
		return page(`"new"`, `a new page`)
	}
	http.NotFound(w, r)
	return 404
}

func (s *changingSite) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func TestDaemonRevisits(t *testing.T) {
	s := &changingSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	defer s.Close()

	cfg := testConfig(t, s.URL+"/")
	cfg.Daemon.Enabled = true
	cfg.Daemon.Recrawl = 300 * time.Millisecond
	cfg.Output.MirrorDir = t.TempDir()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(c)
	count := func(want string) int {
		n := 0
		for _, r := range s.requests() {
			if r == want {
				n++
			}
		}
		return n
	}
	has := func(want string) bool { return count(want) > 0 }
	wait := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(patience); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("timed out waiting for %s; requests: %v", what, s.requests())
			}
		}
	}
	wait("the first pass", func() bool { return has("/b 200") && has("/news 200") })
	bPath := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(s.URL+"/b"), "text/html"))
	// The server answered /b before the crawler saved it: wait for the file.
	wait("/b in the mirror after the first pass", func() bool { _, err := os.Stat(bPath); return err == nil })
	s.mu.Lock()
	s.round = 1
	s.mu.Unlock()
	wait("the changes to be seen", func() bool {
		// A sitemap revisit is conditional too, and a page still missing
		// at its next revisit is still gone.
		return has("/ 304") && has("/a 200") && has("/new 200") && count("/b 404") >= 2 &&
			has("/sitemap.xml 304") && count("/d 404") >= 2
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	if _, err := os.Stat(bPath); !os.IsNotExist(err) {
		t.Errorf("/b is still in the mirror after answering 404: %v", err)
	}
	inv := inventory(t, cfg.Output.URLs)
	if r := inv[s.URL+"/b"]; !r.Gone || r.Status != 404 {
		t.Errorf("/b's last record: %+v, want 404 and gone", r)
	}
	// /d was missing from the start: its revisits find it gone all the
	// same, and removing it from the mirror leaves /d/'s index alone.
	if r := inv[s.URL+"/d"]; !r.Gone || r.Status != 404 {
		t.Errorf("/d's last record: %+v, want 404 and gone", r)
	}
	dPath := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(s.URL+"/d/"), "text/html"))
	if _, err := os.Stat(dPath); err != nil {
		t.Errorf("/d/ is not in the mirror: %v", err)
	}
	if r := inv[s.URL+"/"]; !r.NotModified {
		t.Errorf("/'s last record: %+v, want not_modified", r)
	}
	newsFetches := 0
	for _, r := range s.requests() {
		if strings.HasPrefix(r, "/news ") {
			newsFetches++
		}
	}
	if newsFetches < 2 {
		t.Errorf("/news fetched %d times; its sitemap lastmod moved, so it is due again", newsFetches)
	}
}

// A daemon fetches robots.txt again when its max-age runs out and, from the
// moment it has the tightened file, requests nothing it forbids.
func TestDaemonObeysTightenedRobots(t *testing.T) {
	var mu sync.Mutex
	tightened, served := false, false // served: the tightened file went out
	var after []string                // requests after it went out
	var private int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if served {
			after = append(after, r.URL.Path)
		}
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Cache-Control", "max-age=1")
			if tightened {
				fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
				served = true
			}
		case "/":
			fmt.Fprint(w, `<a href="/private/p">p</a> <a href="/open">o</a>`)
		case "/private/p":
			private++
			fmt.Fprint(w, "private")
		case "/open":
			fmt.Fprint(w, "open")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	cfg := testConfig(t, srv.URL+"/")
	cfg.Daemon.Enabled = true
	cfg.Daemon.Recrawl = time.Hour // only max-age brings robots.txt back
	cfg.Daemon.MaxInterval = time.Hour
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(c)
	deadline := time.Now().Add(patience)
	for {
		mu.Lock()
		p := private
		mu.Unlock()
		if p > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/private/p never fetched under the first robots.txt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	tightened = true
	mu.Unlock()
	// Once the first copy's max-age has run out, /private/p is made due
	// again, as a moved sitemap lastmod would: robots.txt must be fetched
	// again before it, and forbid it.
	// The sleep makes the max-age run out (it only makes it surer the
	// longer it lasts); then the test waits for /private/p's turn to be
	// over (no URL queued, leased nor in flight), however long a busy
	// machine takes to come to it.
	time.Sleep(1200 * time.Millisecond)
	if _, err := c.front.Reschedule(srv.URL+"/private/p", frontier.KindPage, time.Now()); err != nil {
		t.Fatal(err)
	}
	settled := poll(func() bool {
		mu.Lock()
		s := served
		mu.Unlock()
		st := c.stats()
		return s && c.working.Load() == 0 && st.Queued == 0 && st.Leased == 0
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if !served {
		t.Fatalf("robots.txt was not fetched again in %v after its max-age of 1 s", patience)
	}
	if !settled {
		t.Errorf("/private/p, due again, not settled in %v", patience)
	}
	for _, p := range after {
		if strings.HasPrefix(p, "/private/") {
			t.Errorf("%s requested after the tightened robots.txt went out (requests since: %v)", p, after)
		}
	}
}

// robots.txt's max-age counts from when it was asked for, as RFC 9111
// counts a response's age, not from when its slow answer arrived: asked for
// at t0 and answered "max-age=1" at t0+0.4s, the copy rules at t0+0.9s and
// is fetched again at t0+1.1s (counted from the answer, it would last until
// t0+1.4s). The crawl's clock is the test's.
func TestDaemonRobotsAgeFromRequest(t *testing.T) {
	clock := newTestClock()
	t0 := clock.now()
	srv, hits := robotsSite(t, clock, 400*time.Millisecond, "max-age=1", "User-agent: *\nDisallow: /private/\n")
	cfg := testConfig(t, srv.URL+"/")
	cfg.Daemon.Enabled = true
	cfg.Daemon.Recrawl = time.Hour // only max-age brings robots.txt back
	cfg.Daemon.MaxInterval = time.Hour
	c := newClockedCrawler(t, cfg, clock)
	ctx := context.Background()

	if _, ok := robotsOf(c, ctx, leaseOf(t, c, srv.URL+"/", t0), t0); ok {
		t.Fatal("robots.txt taken as known before it was fetched")
	}
	if n, took := hits.Load(), clock.now().Sub(t0); n != 1 || took != 400*time.Millisecond {
		t.Fatalf("robots.txt fetched %d times, answered after %v; want once, after 400ms", n, took)
	}
	clock.advance(500 * time.Millisecond) // t0+0.9s
	checkRobotsExpiry(t, c, clock, srv.URL, hits, 2)
}

// In a daemon whose host cannot keep up with its revisits, a link found
// new on a changed page takes its turn by the time it was found: it does
// not wait until no revisit is due.
func TestDaemonNewLinksNotStarvedByRevisits(t *testing.T) {
	var mu sync.Mutex
	var log []string
	changed := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, r.URL.Path)
		etag := fmt.Sprintf(`"%s-%v"`, r.URL.Path, changed && r.URL.Path == "/")
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(304)
			return
		}
		w.Header().Set("ETag", etag)
		switch r.URL.Path {
		case "/":
			for i := range 6 {
				fmt.Fprintf(w, `<a href="/a%d">a</a>`, i)
			}
			if changed {
				fmt.Fprint(w, `<a href="/new">new</a>`)
				log = append(log, "changed")
			}
		case "/robots.txt":
			http.NotFound(w, r)
		default:
			fmt.Fprint(w, "page")
		}
	}))
	defer srv.Close()
	cfg := testConfig(t, srv.URL+"/")
	cfg.Daemon.Enabled = true
	cfg.Daemon.Recrawl = 100 * time.Millisecond // a pass takes 7 × 40ms
	cfg.Politeness.Delay = 40 * time.Millisecond
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(c)
	count := func(p string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, q := range log {
			if q == p {
				n++
			}
		}
		return n
	}
	poll(func() bool { return count("/a5") >= 2 })
	mu.Lock()
	changed = true
	mu.Unlock()
	poll(func() bool { return count("/new") > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	after, found := 0, false
	for _, p := range log {
		switch {
		case p == "changed":
			found = true
		case p == "/new":
			if after > 10 {
				t.Errorf("/new was requested %d requests after the page that links to it", after)
			}
			return
		case found:
			after++
		}
	}
	t.Errorf("/new never requested (%d requests after the page that links to it)", after)
}

// In a daemon too, sitemaps go first in their host's queue: a URL found
// by a link and also listed in a sitemap read through an index is at depth
// 0, and max_depth counts from it.
func TestDaemonSitemapURLLinkedFirstIsDepthZero(t *testing.T) {
	for range 3 { // the order was a race: try it a few times
		s := sitemapLinkedFirstSite(t)
		cfg := testConfig(t, s.URL+"/")
		cfg.Scope.MaxDepth = 1
		cfg.Daemon.Enabled = true
		cfg.Daemon.Recrawl = time.Hour
		c, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		stop := runInBackground(c)
		// The pass is over once /b is settled and nothing more is
		// queued: /c, were it wrongly queued, has been asked for then.
		over := poll(func() bool { return s.hits()["/b"] > 0 }) && poll(func() bool { return c.crawlIdle(c.now()) })
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if !over {
			t.Fatalf("the pass did not fetch /b and end in %v; requests: %v", patience, s.hits())
		}
		checkLinkedFirstSite(t, s, cfg)
	}
}
