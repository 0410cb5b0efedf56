package crawler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A robots.txt that answers 503 for good does not hold an ad hoc crawl
// past its other hosts: once nothing else is left it is asked once more,
// then the host's URLs are recorded as not fetched with the reason, and no
// page of it is ever requested. The old policy asked again a minute later
// (robots.RetryMin): the run's 20s limit would end it first.
func TestUnavailableRobotsGetsALastCall(t *testing.T) {
	a, b := newSite(t), newSite(t)
	a.html("/", "/1", b.URL+"/x", b.URL+"/y")
	a.html("/1")
	b.set("/robots.txt", page{status: 503})
	b.html("/x")
	cfg := testConfig(t, a.URL+"/")
	cfg.Scope.Hosts = []string{a.URL, b.URL}
	cfg.Politeness.Delay = 20 * time.Millisecond
	sum, err, _ := runFor(t, cfg, patience)
	if err != nil {
		t.Fatal(err)
	}
	if hits := b.hits(); hits["/robots.txt"] != 2 || len(hits) != 1 {
		t.Errorf("B saw %v, want robots.txt twice (the first try and the last call) and nothing else", hits)
	}
	inv := inventory(t, cfg.Output.URLs)
	for _, p := range []string{"/x", "/y"} {
		if r := inv[b.URL+p]; r.Status != 0 || r.Error != "robots.txt unavailable: 503" {
			t.Errorf("%s recorded %+v, want status 0 and the reason", p, r)
		}
	}
	if len(sum.Parked) != 1 || a.hits()["/1"] != 1 {
		t.Errorf("parked %+v, A's /1 asked %d times", sum.Parked, a.hits()["/1"])
	}
}

// The last call waits for a Retry-After that is within
// politeness.robots_last_wait, and a robots.txt that answers then lets the
// host be crawled.
func TestLastCallHonoursRetryAfter(t *testing.T) {
	var tries atomic.Int32
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt" && tries.Add(1) == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
		case r.URL.Path == "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		default:
			w.Write([]byte("<html>page</html>"))
		}
	}))
	defer b.Close()
	cfg := testConfig(t, b.URL+"/")
	cfg.Politeness.RobotsLastWait = 10 * time.Second
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	sum, err := c.Run(ctx)
	if err != nil || len(sum.Parked) != 0 || tries.Load() != 2 {
		t.Fatalf("err %v, parked %+v, robots.txt asked %d times; want it asked again after its Retry-After and the host crawled",
			err, sum.Parked, tries.Load())
	}
	if r := inventory(t, cfg.Output.URLs)[b.URL+"/"]; r.Status != 200 {
		t.Errorf("/ recorded %+v, want 200", r)
	}
}

// A robots.txt that redirects to a host the crawl gave up on is not
// fetched there (the hop would wait for ever for a slot of a parked host):
// it counts as unavailable, and the crawl ends by itself.
func TestRobotsRedirectToParkedHost(t *testing.T) {
	a, b := newSite(t), newSite(t)
	b.set("/robots.txt", page{status: 503, headers: map[string]string{"Retry-After": "7200"}})
	b.html("/")
	a.set("/robots.txt", page{status: 301, headers: map[string]string{"Location": b.URL + "/robots.txt"}})
	a.html("/")
	cfg := testConfig(t, b.URL+"/", a.URL+"/")
	cfg.Fetch.Workers = 1 // B first: parked before A's robots.txt redirects there
	sum, err, el := runFor(t, cfg, patience)
	if err != nil || sum.Stopped == "time" { // it must end by itself, not at the run's own limit
		t.Fatalf("err %v after %v; want the crawl over by itself", err, el)
	}
	if n := b.hits()["/robots.txt"]; n != 1 {
		t.Errorf("B's robots.txt asked %d times, want once", n)
	}
}

// A robots.txt Sitemap: line is read whatever scope.include says, and
// include judges the pages it lists (an include for /docs/ once dropped
// the sitemap at /sitemap.xml, and every page only it named).
func TestRobotsSitemapReadWhateverInclude(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nSitemap: {{base}}/sitemap.xml\n"})
	s.set("/sitemap.xml", page{ctype: "application/xml", body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
		`<url><loc>{{base}}/docs/a</loc></url><url><loc>{{base}}/blog/b</loc></url></urlset>`})
	s.html("/docs/")
	s.html("/docs/a")
	s.html("/blog/b")
	cfg := testConfig(t, s.URL+"/docs/")
	cfg.Scope.Include = []string{"/docs/"}
	runCrawl(t, cfg)
	hits := s.hits()
	if hits["/sitemap.xml"] != 1 || hits["/docs/a"] != 1 || hits["/blog/b"] != 0 {
		t.Errorf("server saw %v; want the sitemap read, /docs/a fetched and /blog/b kept out", hits)
	}
}

// A host whose robots.txt gets no answer at all (its port is closed) is
// given up on in the same way, and its URLs count among the broken, with
// the network error; one whose robots.txt answered 503 asked not to be
// crawled, and its URLs are not broken.
func TestUnreachableHostsURLsAreBroken(t *testing.T) {
	a, b, c := newSite(t), newSite(t), newSite(t)
	dead := c.URL
	c.Close() // nothing listens there any more
	b.set("/robots.txt", page{status: 503})
	a.html("/", dead+"/x", b.URL+"/y")
	cfg := testConfig(t, a.URL+"/")
	cfg.Scope.Hosts = []string{a.URL, b.URL, dead}
	cfg.Fetch.Retries = 0
	sum, err, _ := runFor(t, cfg, patience)
	if err != nil {
		t.Fatal(err)
	}
	if sum.BrokenURLs != 1 || len(sum.Broken) != 1 || sum.Broken[0].URL != dead+"/x" ||
		!strings.HasPrefix(sum.Broken[0].Error, "robots.txt unavailable: ") || sum.Broken[0].Error == "robots.txt unavailable: 503" {
		t.Errorf("broken %d: %+v; want %s/x alone, with its network error", sum.BrokenURLs, sum.Broken, dead)
	}
}
