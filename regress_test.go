package crawler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/storage"
)

// runFor runs a crawl for at most d and returns its summary, its error and
// how long it ran.
func runFor(t *testing.T, cfg Config, d time.Duration) (Summary, error, time.Duration) {
	t.Helper()
	c, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	sum, err := c.Run(ctx)
	el := time.Since(start)
	t.Logf("frontier stats at end: %+v", c.front.Stats())
	c.Close()
	return sum, err, el
}

// robots.txt of A redirects to B; the hop holds B's slot when B's lease arrives.
func TestRobotsRedirectToAnotherHostLeavesItReady(t *testing.T) {
	a, b, cc := newSite(t), newSite(t), newSite(t)
	a.set("/robots.txt", page{status: 301, headers: map[string]string{"Location": b.URL + "/a-robots.txt"}})
	a.html("/")
	b.set("/a-robots.txt", page{ctype: "text/plain", body: "User-agent: *\nAllow: /\n"})
	b.set("/robots.txt", page{ctype: "text/plain", body: ""})
	b.html("/x", "/y")
	b.html("/y")
	cc.set("/robots.txt", page{ctype: "text/plain", body: ""})
	cc.html("/", b.URL+"/x")
	// A slow hop: B's slot is held when C's link to B/x is handed out.
	slow := b.Server.Config.Handler
	b.Server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a-robots.txt" {
			time.Sleep(1500 * time.Millisecond)
		}
		slow.ServeHTTP(w, r)
	})
	cfg := testConfig(t, a.URL+"/", cc.URL+"/")
	cfg.Scope.Hosts = []string{a.URL, b.URL, cc.URL}
	sum, err, el := runFor(t, cfg, patience)
	t.Logf("sum=%+v err=%v elapsed=%v", sum, err, el)
	t.Logf("A hits %v B hits %v C hits %v", a.hits(), b.hits(), cc.hits())
	if b.hits()["/x"] == 0 {
		t.Errorf("B/x never fetched (host stranded busy)")
	}
}

// gap between robots.txt and the first page with Crawl-delay and delay 0.
func TestCrawlDelayCountsFromRobotsTxt(t *testing.T) {
	worst := time.Hour
	for i := 0; i < 5; i++ {
		s := newSite(t)
		s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nCrawl-delay: 0.3\n"})
		s.html("/")
		cfg := testConfig(t, s.URL+"/")
		runFor(t, cfg, patience)
		if h := s.hits(); h["/robots.txt"] == 0 || h["/"] == 0 {
			// With fewer than two requests there is no gap to judge.
			t.Fatalf("run %d: requests %v; want robots.txt and /", i, h)
		}
		g := s.minGap()
		t.Logf("run %d: min gap %v (log %d)", i, g, len(s.requests()))
		worst = min(worst, g)
	}
	if worst < 300*time.Millisecond {
		t.Errorf("robots.txt and first page %v apart; Crawl-delay 0.3s", worst)
	}
}

// an unsolicited 304 for a URL never seen.
func TestUnsolicited304IsRecorded(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: ""})
	s.html("/", "/n")
	s.set("/n", page{status: 304})
	cfg := testConfig(t, s.URL+"/")
	sum, err, _ := runFor(t, cfg, patience)
	t.Logf("sum=%+v err=%v", sum, err)
	if sum.StateErrors > 0 || sum.Queued > 0 {
		t.Errorf("state errors: %d, left queued: %d", sum.StateErrors, sum.Queued)
	}
}

// a redirect chain longer than max_redirects.
func TestRedirectChainStopsAtMaxRedirects(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: ""})
	s.html("/", "/r/0")
	for i := 0; i < 30; i++ {
		s.set(fmt.Sprintf("/r/%d", i), page{status: 302, headers: map[string]string{"Location": fmt.Sprintf("/r/%d", i+1)}})
	}
	s.html("/r/30")
	cfg := testConfig(t, s.URL+"/")
	cfg.Fetch.MaxRedirects = 5
	runFor(t, cfg, patience)
	n := 0
	for p := range s.hits() {
		if len(p) > 3 && p[:3] == "/r/" {
			n++
		}
	}
	if n > 6 {
		t.Errorf("%d hops of a redirect chain fetched; max_redirects 5", n)
	}
}

// sitemaps at robots-disallowed paths.
func TestDisallowedSitemapIsNotFetched(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private/\nSitemap: {{base}}/private/sitemap.xml\n"})
	s.html("/")
	s.set("/private/sitemap.xml", page{ctype: "application/xml", body: `<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{{base}}/private/p</loc></url></urlset>`})
	cfg := testConfig(t, s.URL+"/")
	runFor(t, cfg, patience)
	if n := s.hits()["/private/sitemap.xml"]; n > 0 {
		t.Errorf("disallowed /private/sitemap.xml requested %d times", n)
	}
}

// a sitemap also linked as a page.
func TestSitemapLinkedAsPageIsFetchedOnce(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "Sitemap: {{base}}/sitemap.xml\n"})
	s.html("/", "/sitemap.xml")
	s.set("/sitemap.xml", page{ctype: "application/xml", body: `<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{{base}}/p</loc></url></urlset>`})
	s.html("/p")
	cfg := testConfig(t, s.URL+"/")
	runFor(t, cfg, patience)
	if n := s.hits()["/sitemap.xml"]; n > 1 {
		t.Errorf("/sitemap.xml requested %d times", n)
	}
}

// robots.txt 503 with a long Retry-After in an ad hoc crawl.
func TestAdHocGivesUpOnLongRobotsRetryAfter(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{status: 503, headers: map[string]string{"Retry-After": "7200"}})
	s.html("/")
	cfg := testConfig(t, s.URL+"/")
	sum, err, el := runFor(t, cfg, patience)
	t.Logf("sum=%+v err=%v elapsed=%v hits=%v", sum, err, el, s.hits())
	if sum.Stopped == "time" { // it must end by itself, not at the run's own limit
		t.Errorf("ad hoc crawl still running after %v", el)
	}
}

// resume with a narrower scope.
func TestResumeWithNarrowerScopeLeavesOldHosts(t *testing.T) {
	a, b := newSite(t), newSite(t)
	a.set("/robots.txt", page{ctype: "text/plain", body: ""})
	b.set("/robots.txt", page{ctype: "text/plain", body: ""})
	a.html("/", b.URL+"/1", b.URL+"/2", b.URL+"/3")
	b.html("/1")
	b.html("/2")
	b.html("/3")
	cfg := testConfig(t, a.URL+"/")
	cfg.Scope.Hosts = []string{a.URL, b.URL}
	cfg.Scope.MaxPages = 1
	runFor(t, cfg, patience)
	before := len(b.log)
	cfg.Scope.MaxPages = 0
	cfg.Scope.Hosts = []string{a.URL}
	runFor(t, cfg, patience)
	t.Logf("B requests first run %d, after %d: %v", before, len(b.log), b.hits())
	if len(b.log) > before {
		t.Errorf("out-of-scope host B contacted %d times after the scope was narrowed", len(b.log)-before)
	}
}

// A Crawl-delay longer than retry_after_max makes an ad hoc crawl give up
// on the host rather than wait for years.
func TestAdHocGivesUpOnHugeCrawlDelay(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nCrawl-delay: 99999999999\n"})
	s.html("/", "/a")
	s.html("/a")
	cfg := testConfig(t, s.URL+"/")
	sum, err, el := runFor(t, cfg, patience)
	if err != nil || sum.Stopped == "time" || len(sum.Parked) != 1 { // over by itself, not at the run's own limit
		t.Fatalf("err %v after %v, parked %+v; want the host parked and the crawl over", err, el, sum.Parked)
	}
	if n := len(s.hits()); n != 1 {
		t.Errorf("%d distinct requests; only robots.txt may be asked for", n)
	}
}

// URLs queued on a host the crawl gave up on still get an inventory record
// each, saying why they were not fetched, and a resume does not contact
// the host again.
func TestParkedHostsURLsAreRecorded(t *testing.T) {
	a, b := newSite(t), newSite(t)
	a.set("/robots.txt", page{ctype: "text/plain", body: ""})
	b.set("/robots.txt", page{status: 503, headers: map[string]string{"Retry-After": "7200"}})
	a.html("/", b.URL+"/1", b.URL+"/2")
	b.html("/1")
	b.html("/2")
	cfg := testConfig(t, a.URL+"/")
	cfg.Scope.Hosts = []string{a.URL, b.URL}
	sum, err, _ := runFor(t, cfg, patience)
	if err != nil || len(sum.Parked) != 1 || sum.Parked[0].Origin != b.URL {
		t.Fatalf("err %v, parked %+v; want %s parked", err, sum.Parked, b.URL)
	}
	inv := inventory(t, cfg.Output.URLs)
	for _, u := range []string{b.URL + "/1", b.URL + "/2"} {
		r, ok := inv[u]
		if !ok || r.Status != 0 || !strings.Contains(r.Error, "host parked") {
			t.Errorf("record of %s = %+v (found %v); want an error saying the host was parked", u, r, ok)
		}
	}
	before := len(b.log)
	sum, err, _ = runFor(t, cfg, patience)
	if err != nil || len(b.log) != before {
		t.Errorf("resume: err %v, %d new requests to the parked host", err, len(b.log)-before)
	}
	if len(sum.Parked) != 1 {
		t.Errorf("resume: parked %+v; want the host still parked", sum.Parked)
	}
}

// max_pages is a bound on the pages fetched, not on the visits started:
// requests in flight at once (several hosts, or max_per_host > 1) must not
// carry the crawl past it, and a visit that does not count (a 404) frees
// its place.
func TestMaxPagesWithRequestsInFlight(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: ""})
	var links []string
	for i := range 12 {
		links = append(links, fmt.Sprintf("/p%d", i))
		if i > 0 { // /p0 is missing: a 404, not a page fetched
			s.html(links[i])
		}
	}
	s.html("/", links...)
	s.hold = 30 * time.Millisecond // keep the requests in flight together
	cfg := testConfig(t, s.URL+"/")
	cfg.Politeness.MaxPerHost, cfg.Fetch.Workers = 6, 6
	cfg.Scope.MaxPages = 4
	runCrawl(t, cfg)
	pages := 0
	inv := inventory(t, cfg.Output.URLs)
	for _, r := range inv {
		if r.Status == 200 {
			pages++
		}
	}
	if pages != 4 {
		t.Errorf("%d pages fetched with max_pages 4 (requests %v)", pages, s.hits())
	}
	// Every URL found has a record, those left saying why.
	for _, l := range links {
		r, ok := inv[s.URL+l]
		if !ok {
			t.Errorf("no record of %s", l)
		} else if s.hits()[l] == 0 && (r.Status != 0 || r.Error != "not fetched: max_pages reached" || r.Depth != 1 || r.FoundVia != storage.FoundLink) {
			t.Errorf("record of %s, left: %+v", l, r)
		}
	}
	// A run with a larger limit fetches what was left.
	cfg.Scope.MaxPages = 0
	runCrawl(t, cfg)
	for _, l := range links[1:] {
		if r := inventory(t, cfg.Output.URLs)[s.URL+l]; r.Status != 200 {
			t.Errorf("after a resume without the limit, record of %s: %+v", l, r)
		}
	}
}

// sitemapLinkedFirstSite serves a site whose / links to /x and /a, and
// whose robots.txt names an index of one sitemap listing /a; /a links to
// /b, and /b to /c. At max_depth 1, /b is fetched (and /c is not) only if /a
// counts as depth 0.
func sitemapLinkedFirstSite(t *testing.T) *testSite {
	t.Helper()
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nSitemap: {{base}}/index.xml\n"})
	s.set("/index.xml", page{ctype: "application/xml", body: `<?xml version="1.0"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>{{base}}/pages.xml</loc></sitemap></sitemapindex>`})
	s.set("/pages.xml", page{ctype: "application/xml", body: `<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{{base}}/a</loc></url></urlset>`})
	s.html("/", "/x", "/a")
	s.html("/x")
	s.html("/a", "/b")
	s.html("/b", "/c")
	s.html("/c")
	return s
}

// checkLinkedFirstSite checks the crawl of sitemapLinkedFirstSite s by cfg
// at max_depth 1: /a recorded at depth 0, found via the sitemap, and /b
// fetched once, /c not.
func checkLinkedFirstSite(t *testing.T, s *testSite, cfg Config) {
	t.Helper()
	inv := inventory(t, cfg.Output.URLs)
	if r := inv[s.URL+"/a"]; r.Depth != 0 || r.FoundVia != storage.FoundSitemap || !r.InSitemap {
		t.Fatalf("record of /a = %+v; want depth 0, found via sitemap, in sitemap", r)
	}
	if h := s.hits(); h["/b"] != 1 || h["/c"] != 0 {
		t.Fatalf("requests %v; want /b (depth 1 from the sitemap's /a) and not /c", h)
	}
}

// A URL found by a link and also listed in a sitemap (read through an
// index) is at depth 0, as the README says, even with no delay between
// requests, when its link is queued long before the sitemap is read:
// max_depth then counts from it.
func TestSitemapURLLinkedFirstIsDepthZero(t *testing.T) {
	for range 3 { // the order was a race: try it a few times
		s := sitemapLinkedFirstSite(t)
		cfg := testConfig(t, s.URL+"/")
		cfg.Scope.MaxDepth = 1
		runCrawl(t, cfg)
		checkLinkedFirstSite(t, s, cfg)
	}
}

// robots.txt of A redirects to B's robots.txt: fetched once, it serves both
// hosts (whichever asks first), for a crawl fetches no URL twice; and it
// rules A, whose /private/ it disallows.
func TestRobotsRedirectTargetFetchedOnce(t *testing.T) {
	a, b := newSite(t), newSite(t)
	a.set("/robots.txt", page{status: 302, headers: map[string]string{"Location": b.URL + "/robots.txt"}})
	a.html("/", "/private/p", "/open")
	a.html("/open")
	a.html("/private/p")
	b.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private/\n"})
	b.html("/", "/private/q")
	b.html("/private/q")
	cfg := testConfig(t, a.URL+"/", b.URL+"/")
	if _, err, _ := runFor(t, cfg, patience); err != nil {
		t.Fatal(err)
	}
	if n := b.hits()["/robots.txt"]; n != 1 {
		t.Errorf("B's robots.txt fetched %d times, want once", n)
	}
	if a.hits()["/open"] != 1 || a.hits()["/private/p"] != 0 || b.hits()["/private/q"] != 0 {
		t.Errorf("A hits %v, B hits %v: want /open fetched and nothing under /private/", a.hits(), b.hits())
	}
}
