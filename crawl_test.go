package crawler

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
	"github.com/politecrawl/crawler/storage/warc"
)

func TestCrawlFollowsLinksObeysRobotsAndReadsSitemaps(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private/\nSitemap: {{base}}/sitemap.xml\n"})
	s.html("/", "/a", "/b", "/private/x", "http://127.0.0.1:1/elsewhere", "mailto:x@example.com")
	s.html("/a", "/c", "/a", "/b#part", "/A/../a")
	s.set("/b", page{status: 301, headers: map[string]string{"Location": "/d"}})
	s.html("/d")
	s.set("/c", page{body: `<a href="/nf" rel="nofollow">x</a><a href="/e">e</a>`})
	s.set("/sitemap.xml", page{ctype: "application/xml", body: `<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{{base}}/e</loc><lastmod>2026-01-02</lastmod></url>
<url><loc>{{base}}/f</loc></url>
</urlset>`})
	s.html("/e")
	s.html("/f")

	cfg := testConfig(t, s.URL+"/")
	sum := runCrawl(t, cfg)

	hits := s.hits()
	for _, p := range []string{"/robots.txt", "/", "/a", "/b", "/c", "/d", "/e", "/f", "/sitemap.xml"} {
		if hits[p] != 1 {
			t.Errorf("%s fetched %d times, want once", p, hits[p])
		}
	}
	for _, p := range []string{"/private/x", "/nf"} {
		if hits[p] != 0 {
			t.Errorf("%s fetched %d times, want never", p, hits[p])
		}
	}
	if sum.Disallowed != 1 {
		t.Errorf("summary: %d disallowed, want 1", sum.Disallowed)
	}

	inv := inventory(t, cfg.Output.URLs)
	check := func(path string, want func(r storage.Record) bool, what string) {
		t.Helper()
		r, ok := inv[s.URL+path]
		if !ok {
			t.Errorf("no inventory record for %s", path)
			return
		}
		if !want(r) {
			t.Errorf("%s: %+v, want %s", path, r, what)
		}
	}
	check("/private/x", func(r storage.Record) bool { return r.Robots == storage.RobotsDisallowed && r.Status == 0 }, "disallowed, status 0")
	check("/b", func(r storage.Record) bool { return r.Status == 301 && r.FinalURL == s.URL+"/d" }, "301 to /d")
	check("/d", func(r storage.Record) bool { return r.FoundVia == storage.FoundRedirect && r.Depth == 1 }, "found via redirect at the depth of /b")
	check("/e", func(r storage.Record) bool {
		return r.InSitemap && r.Depth == 0 && r.Lastmod.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	}, "in the sitemap, depth 0, with its lastmod")
	check("/a", func(r storage.Record) bool {
		return r.Status == 200 && r.FoundVia == storage.FoundLink && r.Referrer == s.URL+"/" && r.Depth == 1 && r.ContentType != ""
	}, "200, a link of / at depth 1")
	if r, ok := inv["http://127.0.0.1:1/elsewhere"]; !ok || r.Error == "" {
		t.Errorf("the out-of-scope link has no inventory record saying why: %+v", r)
	}
}

func TestCrawlKeepsThePolitenessDelay(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nAllow: /\n"})
	s.html("/", "/1", "/2", "/3", "/4", "/5")
	for _, p := range []string{"/1", "/2", "/3", "/4", "/5"} {
		s.html(p)
	}
	cfg := testConfig(t, s.URL+"/")
	cfg.Politeness.Delay = 100 * time.Millisecond
	cfg.Fetch.Workers = 8
	runCrawl(t, cfg)
	if n := len(s.hits()); n != 7 {
		t.Fatalf("%d distinct requests, want 7", n)
	}
	// Arrival times are measured at the server, as a site owner sees them;
	// a few milliseconds of scheduling noise on a loaded machine are allowed.
	if gap := s.minGap(); gap < cfg.Politeness.Delay-5*time.Millisecond {
		t.Errorf("two requests arrived %v apart; the delay is %v", gap, cfg.Politeness.Delay)
	}
	if s.maxIn > 1 {
		t.Errorf("%d requests in flight at once; max_per_host is 1", s.maxIn)
	}
}

func TestCrawlHonoursCrawlDelay(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: politecrawl\nCrawl-delay: 0.3\n"})
	s.html("/", "/1", "/2")
	s.html("/1")
	s.html("/2")
	cfg := testConfig(t, s.URL+"/")
	runCrawl(t, cfg)
	if gap := s.minGap(); gap < 300*time.Millisecond-5*time.Millisecond {
		t.Errorf("two requests arrived %v apart; Crawl-delay is 0.3s", gap)
	}
}

func TestCrawlResumesWithoutFetchingTwice(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: ""})
	links := []string{}
	for i := range 12 {
		p := "/p" + string(rune('a'+i))
		links = append(links, p)
		s.html(p)
	}
	s.html("/", links...)
	cfg := testConfig(t, s.URL+"/")
	cfg.Scope.MaxPages = 4
	first := runCrawl(t, cfg)
	if first.Queued == 0 {
		t.Fatalf("the first run drained the frontier despite max_pages 4: %+v", first)
	}
	cfg.Scope.MaxPages = 0
	runCrawl(t, cfg)
	for path, n := range s.hits() {
		if n != 1 {
			t.Errorf("%s fetched %d times over two runs", path, n)
		}
	}
	if got := len(s.hits()); got != 14 {
		t.Errorf("%d distinct URLs fetched over two runs, want 14", got)
	}
}

func TestCrawlMirrorBrowsesOffline(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.set("/", page{body: `<html><head><link rel="stylesheet" href="/css/site.css"></head>
<body><a href="/docs/">docs</a> <a href="/page?id=2#top">q</a> <a href="/missing">404</a> <a href="http://127.0.0.1:1/x">out</a></body></html>`})
	s.set("/css/site.css", page{ctype: "text/css", body: `body { background: url("../img/bg.png") }`})
	s.set("/img/bg.png", page{ctype: "image/png", body: "PNG"})
	s.html("/docs/", "/")
	s.html("/page?id=2", "/docs/")
	cfg := testConfig(t, s.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Output.MirrorLinks = MirrorLinksRelative
	sum := runCrawl(t, cfg)
	if sum.BrokenLinks != 0 {
		t.Errorf("%d broken links in the mirror", sum.BrokenLinks)
	}
	report, err := mirror.Check(cfg.Output.MirrorDir)
	if err != nil || len(report.Broken) != 0 || report.Links < 5 {
		t.Fatalf("CheckMirror: %+v, %v; want 5 or more links, none broken", report, err)
	}
	home := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(s.URL+"/"), "text/html"))
	body, err := os.ReadFile(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="docs/index.html"`, `href="css/site.css"`, `#top"`, `href="` + s.URL + `/missing"`, `href="http://127.0.0.1:1/x"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the mirrored home page lacks %s:\n%s", want, body)
		}
	}
}

func TestCrawlWritesWARCAndRecordsCanonical(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.set("/", page{body: `<html><head><link rel="canonical" href="/home"><link rel="alternate" hreflang="fr" href="/fr/"></head><a href="/a">a</a></html>`})
	s.html("/a")
	s.html("/home")
	s.html("/fr/")
	cfg := testConfig(t, s.URL+"/")
	cfg.Output.WARC = t.TempDir()
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	key, _ := frontier.Canonicalize(s.URL+"/", 0)
	p, ok, err := c.pages.Get(key.Key)
	if err != nil || !ok || p.Canonical != s.URL+"/home" || p.Hreflang["fr"] != s.URL+"/fr/" {
		t.Errorf("page record of /: %+v, %v, %v; want its canonical and hreflang", p, ok, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	files, _ := filepath.Glob(filepath.Join(cfg.Output.WARC, "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("WARC files: %v", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := warc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("WARC record: %v", err)
		}
		if _, err := io.Copy(io.Discard, rec.Block); err != nil { // checks the digests
			t.Fatalf("WARC block: %v", err)
		}
		types[rec.Header.Get("WARC-Type")]++
	}
	// robots.txt and four pages (/, /a, /home, /fr/): a request and a
	// response each, or a revisit where a body is one already archived (the
	// two 404s: which of them is archived first, and whether the second is
	// seen as a copy while the first is being written, depends on the order
	// of the answers).
	if types["warcinfo"] != 1 || types["request"] != 5 || types["response"]+types["revisit"] != 5 || types["response"] < 3 {
		t.Errorf("WARC records by type: %v", types)
	}
}

// TestMirrorRequisitesAtPageDepth checks that with a mirror and max_depth,
// the pages at max_depth come with their images and stylesheets (and what
// a stylesheet uses), recorded at the page's depth, so that nothing fetched
// is deeper than max_depth, and that links one hop further are not fetched.
func TestMirrorRequisitesAtPageDepth(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.html("/", "/edge")
	s.set("/edge", page{body: `<html><head><link rel="stylesheet" href="/site.css"></head>
<body><img src="/pic.png"> <a href="/beyond">beyond</a></body></html>`})
	s.set("/site.css", page{ctype: "text/css", body: `body { background: url("/bg.png") }`})
	s.set("/pic.png", page{ctype: "image/png", body: "PNG"})
	s.set("/bg.png", page{ctype: "image/png", body: "PNG"})
	s.html("/beyond")
	cfg := testConfig(t, s.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Scope.MaxDepth = 1
	runCrawl(t, cfg)
	inv := inventory(t, cfg.Output.URLs)
	for _, p := range []string{"/site.css", "/pic.png", "/bg.png"} {
		if r := inv[s.URL+p]; r.Status != 200 || r.Depth != 1 {
			t.Errorf("record of %s: status %d, depth %d; want 200 at depth 1, that of /edge", p, r.Status, r.Depth)
		}
	}
	if n := s.hits()["/beyond"]; n != 0 {
		t.Errorf("/beyond, at depth 2, fetched %d times with max_depth 1", n)
	}
}
