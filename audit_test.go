package crawler

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/politecrawl/crawler/storage"
)

// in_sitemap is true for every URL a sitemap lists, whenever it was
// fetched: the seed, whose visit reads the robots.txt naming the sitemap,
// and pages linked from it, with one request at a time or several.
func TestInSitemapWhateverTheOrder(t *testing.T) {
	for _, perHost := range []int{1, 3} {
		s := newSite(t)
		s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nSitemap: {{base}}/sitemap.xml\n"})
		s.html("/", "/a", "/b", "/c")
		s.html("/a")
		s.html("/b")
		s.html("/c")
		s.set("/sitemap.xml", page{ctype: "application/xml", body: `<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{{base}}/</loc></url><url><loc>{{base}}/a</loc></url><url><loc>{{base}}/c</loc></url>
</urlset>`})
		cfg := testConfig(t, s.URL+"/")
		cfg.Politeness.MaxPerHost = perHost
		runCrawl(t, cfg)
		inv := inventory(t, cfg.Output.URLs)
		for p, want := range map[string]bool{"/": true, "/a": true, "/b": false, "/c": true} {
			if r := inv[s.URL+p]; r.Status != 200 || r.InSitemap != want {
				t.Errorf("max_per_host %d: %s: status %d, in_sitemap %v; want 200, %v", perHost, p, r.Status, r.InSitemap, want)
			}
		}
		if h := s.hits(); h["/"] != 1 || h["/sitemap.xml"] != 1 {
			t.Errorf("max_per_host %d: / asked %d times, the sitemap %d; want once each", perHost, h["/"], h["/sitemap.xml"])
		}
	}
}

// link_depth is the shortest chain of links from a seed, whatever a
// sitemap lists first; redirects count none, and a page only a sitemap
// (or a page only a sitemap lists) leads to has none.
func TestLinkDepthIsTheShortestChainOfLinks(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nSitemap: {{base}}/sitemap.xml\n"})
	s.html("/", "/a", "/r")
	s.html("/a", "/b", "/deep/1")
	s.html("/b", "/c")
	s.html("/c", "/a")
	s.set("/r", page{status: 301, headers: map[string]string{"Location": "/d"}})
	s.html("/d")
	for i := 1; i < 6; i++ {
		s.html("/deep/"+strconv.Itoa(i), "/deep/"+strconv.Itoa(i+1))
	}
	s.html("/deep/6", "/")
	s.html("/orphan", "/o2")
	s.html("/o2", "/c")
	s.set("/sitemap.xml", page{ctype: "application/xml", body: `<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{{base}}/c</loc><priority>1.0</priority></url>
<url><loc>{{base}}/deep/6</loc><priority>0.9</priority></url>
<url><loc>{{base}}/orphan</loc><priority>1.0</priority></url>
<url><loc>{{base}}/b</loc></url>
</urlset>`})
	for _, perHost := range []int{1, 2} {
		cfg := testConfig(t, s.URL+"/")
		cfg.Politeness.MaxPerHost = perHost
		runCrawl(t, cfg)
		inv := inventory(t, cfg.Output.URLs)
		want := map[string]int{"/": 0, "/a": 1, "/r": 1, "/d": 1, "/b": 2, "/c": 3, "/deep/1": 2, "/deep/6": 7,
			"/orphan": -1, "/o2": -1}
		for p, ld := range want {
			r, ok := inv[s.URL+p]
			got := -1
			if r.LinkDepth != nil {
				got = *r.LinkDepth
			}
			if !ok || got != ld {
				t.Errorf("max_per_host %d: %s: link_depth %d (record %v); want %d (-1: none)", perHost, p, got, ok, ld)
			}
		}
	}
}

// With scope.check_external, each link to a host out of scope is asked
// once, with HEAD (GET when HEAD is refused), after that host's
// robots.txt, and nothing there is followed.
func TestCheckExternalAsksEachLinkOnce(t *testing.T) {
	ext := newSite(t)
	ext.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private\nSitemap: {{base}}/sitemap.xml\n"})
	ext.html("/ok", "/ok/more")
	ext.set("/moved", page{status: 301, headers: map[string]string{"Location": "/there"}})
	var methods []string
	ext.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ext.mu.Lock()
		methods = append(methods, r.Method+" "+r.URL.Path)
		ext.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/no-head") && r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/no-head") {
			w.Write([]byte("fine"))
			return
		}
		ext.serve(w, r)
	})
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	e := ext.URL
	s.html("/", e+"/ok", e+"/gone", e+"/no-head", e+"/moved", e+"/private/x", "/a", e+"/logout", e+"/no-head-2")
	s.html("/a", e+"/ok", e+"/gone", "/nf")
	s.set("/nf", page{body: `<a rel="nofollow" href="` + e + `/nofollow">x</a>`})

	cfg := testConfig(t, s.URL+"/")
	cfg.Scope.CheckExternal = true
	cfg.Scope.Exclude = []string{"/logout"}
	runCrawl(t, cfg)
	inv := inventory(t, cfg.Output.URLs)
	for p, want := range map[string]struct {
		status int
		final  string
		robots storage.RobotsVerdict
	}{
		"/ok": {200, e + "/ok", storage.RobotsAllowed}, "/gone": {404, e + "/gone", storage.RobotsAllowed},
		"/no-head": {200, e + "/no-head", storage.RobotsAllowed}, "/moved": {301, e + "/there", storage.RobotsAllowed},
		"/private/x": {0, "", storage.RobotsDisallowed},
	} {
		r := inv[e+p]
		if !r.External || r.Status != want.status || r.FinalURL != want.final || r.Robots != want.robots {
			t.Errorf("%s: external %v, status %d, final_url %q, robots %q; want true, %d, %q, %q",
				p, r.External, r.Status, r.FinalURL, r.Robots, want.status, want.final, want.robots)
		}
	}
	if r := inv[s.URL+"/a"]; r.External || r.Status != 200 {
		t.Errorf("/a of the crawl's own host: external %v, status %d", r.External, r.Status)
	}
	got := map[string]int{}
	for _, m := range methods {
		got[m]++
	}
	// Once the host refused HEAD, its other links are asked with GET at
	// once: which come after the refusal depends on the order. Each link
	// is asked once, and an excluded one never.
	if got["GET /robots.txt"] != 1 || got["HEAD /no-head"]+got["HEAD /no-head-2"] != 1 {
		t.Errorf("requests %v: robots.txt once, and one HEAD refused in all", got)
	}
	for _, p := range []string{"/ok", "/gone", "/moved"} {
		if n := got["HEAD "+p] + got["GET "+p]; n != 1 {
			t.Errorf("%s asked %d times; want once", p, n)
		}
	}
	for _, p := range []string{"/no-head", "/no-head-2"} {
		if got["GET "+p] != 1 {
			t.Errorf("%s asked with GET %d times; want once", p, got["GET "+p])
		}
	}
	if n := got["HEAD /logout"] + got["GET /logout"]; n != 0 {
		t.Errorf("the excluded /logout asked %d times", n)
	}
}

// A refresh makes one more pass over every URL done: a conditional GET
// where validators are known, new links followed, and records that say
// what changed.
func TestRefreshMakesOneMorePass(t *testing.T) {
	s := newSite(t)
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		s.serve(w, r)
	})
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.set("/", page{body: `<a href="/a">a</a><a href="/b">b</a>`, headers: map[string]string{"ETag": `"v1"`}})
	s.html("/a")
	s.html("/b")
	cfg := testConfig(t, s.URL+"/")
	runCrawl(t, cfg)

	s.html("/a", "/c")
	s.set("/b", page{status: 404})
	s.html("/c")
	runCrawl(t, cfg) // resumes: nothing is due
	if h := s.hits(); h["/a"] != 1 || h["/c"] != 0 {
		t.Fatalf("a second run without --refresh asked /a %d times and /c %d; want 1 and 0", h["/a"], h["/c"])
	}
	c, err := New(cfg, Options{Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	inv := inventory(t, cfg.Output.URLs)
	if r := inv[s.URL+"/"]; r.Status != 304 || !r.NotModified {
		t.Errorf("/: status %d, not_modified %v; want 304, true", r.Status, r.NotModified)
	}
	if r := inv[s.URL+"/b"]; r.Status != 404 || !r.Gone {
		t.Errorf("/b: status %d, gone %v; want 404, true", r.Status, r.Gone)
	}
	if r := inv[s.URL+"/c"]; r.Status != 200 {
		t.Errorf("/c, linked since: status %d; want 200", r.Status)
	}
	if h := s.hits(); h["/a"] != 2 || h["/c"] != 1 { // (the 304 for / is not in the log)
		t.Errorf("requests %v; want /a twice, /c once", h)
	}
}
