package crawler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/frontier/cluster"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
)

// requisiteSite is a site whose pages keep their requisites on other
// hosts: a CDN with its own robots.txt and Crawl-delay, and a third host
// whose robots.txt refuses one image.
type requisiteSite struct {
	www, cdn, third *testSite
}

func newRequisiteSite(t *testing.T) requisiteSite {
	s := requisiteSite{www: newSite(t), cdn: newSite(t), third: newSite(t)}
	cdn, third := s.cdn.URL, s.third.URL
	s.www.set("/robots.txt", page{ctype: "text/plain"})
	s.www.set("/", page{body: `<html><head>
<link rel="stylesheet" href="` + cdn + `/css/site.css">
<link rel="icon" href="/favicon.ico">
<script src="` + cdn + `/js/app.js"></script>
<style>.hero { background: url(` + cdn + `/img/hero.jpg) }</style>
</head><body>
<img src="` + cdn + `/img/logo.png" srcset="` + cdn + `/img/logo-2x.png 2x">
<img src="` + third + `/pub.png"> <img src="` + third + `/private/secret.png">
<object data="` + cdn + `/widget.html"></object>
<a href="/a">a</a> <a href="` + cdn + `/linked.html">a link to the CDN</a>
</body></html>`})
	s.www.set("/a", page{body: `<html><head><link rel="stylesheet" href="` + cdn + `/css/site.css"></head>
<body><picture><source srcset="` + cdn + `/img/a.webp"><img src="` + cdn + `/img/a.jpg"></picture>
<p style="background-image: url('` + cdn + `/img/tile.gif')">x</p><a href="/">home</a></body></html>`})
	s.www.set("/favicon.ico", page{ctype: "image/x-icon", body: "ICO"})

	s.cdn.set("/robots.txt", page{ctype: "text/plain",
		body: "User-agent: *\nCrawl-delay: 0.2\nDisallow: /nothing-here\nSitemap: {{base}}/sitemap.xml\n"})
	s.cdn.set("/sitemap.xml", page{ctype: "application/xml",
		body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{{base}}/in-sitemap.html</loc></url></urlset>`})
	s.cdn.set("/css/site.css", page{ctype: "text/css", body: `@import "base.css";
@font-face { font-family: F; src: url("../fonts/f.woff2") format("woff2") }
body { background: url(/img/bg.png) }`})
	s.cdn.set("/css/base.css", page{ctype: "text/css", body: `h1 { color: red }`})
	s.cdn.set("/fonts/f.woff2", page{ctype: "font/woff2", body: "WOFF2"})
	for _, p := range []string{"/img/bg.png", "/img/hero.jpg", "/img/logo.png", "/img/logo-2x.png", "/img/a.webp", "/img/a.jpg", "/img/tile.gif", "/img/w.png"} {
		s.cdn.set(p, page{ctype: "image/png", body: "PNG"})
	}
	s.cdn.set("/js/app.js", page{ctype: "text/javascript", body: `fetch("/api/never")`})
	s.cdn.set("/widget.html", page{body: `<html><body><img src="/img/w.png"><a href="/never.html">never</a></body></html>`})
	s.cdn.html("/linked.html", "/never.html")
	s.cdn.html("/in-sitemap.html")
	s.cdn.html("/never.html")

	s.third.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private/\n"})
	s.third.set("/pub.png", page{ctype: "image/png", body: "PNG"})
	s.third.set("/private/secret.png", page{ctype: "image/png", body: "PNG"})
	return s
}

// TestRequisitesOnOtherHosts: with a mirror, a page's requisites on other
// hosts are fetched (a CDN's stylesheets, fonts through its CSS, scripts,
// images) as politely as any host, never crawled from, refused where
// their robots.txt says so, and the relinked mirror resolves them.
func TestRequisitesOnOtherHosts(t *testing.T) {
	s := newRequisiteSite(t)
	cfg := testConfig(t, s.www.URL+"/")
	cfg.Politeness.Delay = 50 * time.Millisecond
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Output.MirrorLinks = MirrorLinksRelative
	cfg.Scope.MaxPages = 2 // the two pages: their requisites count toward none
	cfg.Fetch.Workers = 8
	sum := runCrawl(t, cfg)
	if sum.BrokenLinks != 0 {
		t.Errorf("%d broken links in the mirror", sum.BrokenLinks)
	}

	www, cdn, third := s.www.hits(), s.cdn.hits(), s.third.hits()
	for _, p := range []string{"/", "/a", "/favicon.ico"} {
		if www[p] != 1 {
			t.Errorf("%s of the site asked %d times; want once", p, www[p])
		}
	}
	for _, p := range []string{"/robots.txt", "/css/site.css", "/css/base.css", "/fonts/f.woff2", "/img/bg.png", "/img/hero.jpg",
		"/img/logo.png", "/img/logo-2x.png", "/img/a.webp", "/img/a.jpg", "/img/tile.gif", "/js/app.js", "/widget.html", "/img/w.png"} {
		if cdn[p] != 1 {
			t.Errorf("%s of the CDN asked %d times; want once", p, cdn[p])
		}
	}
	for _, p := range []string{"/sitemap.xml", "/in-sitemap.html", "/never.html", "/linked.html", "/api/never"} {
		if cdn[p] != 0 {
			t.Errorf("%s of the CDN asked %d times: the CDN is not crawled", p, cdn[p])
		}
	}
	if third["/robots.txt"] != 1 || third["/pub.png"] != 1 || third["/private/secret.png"] != 0 {
		t.Errorf("third host asked %v; want robots.txt and /pub.png once, /private/secret.png never", third)
	}

	// Politeness on every host, from each server's own log.
	if gap := s.www.minGap(); gap < cfg.Politeness.Delay-5*time.Millisecond {
		t.Errorf("two requests reached the site %v apart; the delay is %v", gap, cfg.Politeness.Delay)
	}
	if gap := s.cdn.minGap(); gap < 200*time.Millisecond-5*time.Millisecond {
		t.Errorf("two requests reached the CDN %v apart; its Crawl-delay is 0.2s", gap)
	}
	if gap := s.third.minGap(); gap < cfg.Politeness.Delay-5*time.Millisecond {
		t.Errorf("two requests reached the third host %v apart; the delay is %v", gap, cfg.Politeness.Delay)
	}
	for _, site := range []*testSite{s.www, s.cdn, s.third} {
		if n := site.maxInFlight(); n > 1 {
			t.Errorf("%s: %d requests in flight at once; max_per_host is 1", site.URL, n)
		}
	}

	inv := inventory(t, cfg.Output.URLs)
	if r := inv[s.third.URL+"/private/secret.png"]; r.Robots != storage.RobotsDisallowed || r.Status != 0 {
		t.Errorf("the refused image's record: robots %q, status %d; want disallowed, 0", r.Robots, r.Status)
	}
	if r := inv[s.cdn.URL+"/fonts/f.woff2"]; r.Status != 200 || r.Depth != 0 || !r.External {
		t.Errorf("the font's record: status %d, depth %d, external %v; want 200 at the home page's depth 0, external",
			r.Status, r.Depth, r.External)
	}
	if r := inv[s.cdn.URL+"/img/a.jpg"]; r.Status != 200 || r.Depth != 1 {
		t.Errorf("/a's image: status %d, depth %d; want 200 at /a's depth 1", r.Status, r.Depth)
	}

	// The mirror: each host's files under its own directory, and the
	// pages' links to them relative and resolving.
	report, err := mirror.Check(cfg.Output.MirrorDir)
	if err != nil || len(report.Broken) != 0 {
		t.Fatalf("mirror.Check: %+v, %v; want no broken link", report, err)
	}
	for _, raw := range []string{s.cdn.URL + "/fonts/f.woff2", s.cdn.URL + "/img/logo-2x.png", s.third.URL + "/pub.png"} {
		u := frontier.MustParse(raw)
		p := mirror.Path(u, "")
		if !strings.HasPrefix(p, u.Host+"/") {
			t.Errorf("%s is kept at %s, not under its host's directory", raw, p)
		}
		if _, err := os.Stat(filepath.Join(cfg.Output.MirrorDir, filepath.FromSlash(p))); err != nil {
			t.Errorf("%s is not in the mirror: %v", raw, err)
		}
	}
	home := mirrorFileText(t, cfg.Output.MirrorDir, s.www.URL+"/", "text/html")
	cdnHost := frontier.MustParse(s.cdn.URL).Host
	for _, want := range []string{`href="../` + cdnHost + `/css/site.css"`, `src="../` + cdnHost + `/js/app.js"`,
		`url(../` + cdnHost + `/img/hero.jpg)`, `../` + cdnHost + `/img/logo-2x.png 2x`} {
		if !strings.Contains(home, want) {
			t.Errorf("the mirrored home page lacks %s:\n%s", want, home)
		}
	}
	if strings.Contains(home, s.cdn.URL+"/css") || strings.Contains(home, s.third.URL+"/pub.png") {
		t.Errorf("the mirrored home page still loads a requisite live:\n%s", home)
	}
	// What the pages link to on the CDN (not a requisite) stays live.
	if !strings.Contains(home, `href="`+s.cdn.URL+`/linked.html"`) {
		t.Errorf("the link to the CDN's page should stay absolute:\n%s", home)
	}
}

// mirrorFileText reads the mirror file of raw fetched as ctype.
func mirrorFileText(t *testing.T, dir, raw, ctype string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(mirror.Path(frontier.MustParse(raw), ctype))))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRequisitesSameOrPatterns: scope.requisites same keeps requisites to
// the hosts in scope; a list allows the hosts it names.
func TestRequisitesSameOrPatterns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		allow     func(s requisiteSite) Requisites
		cdn, thrd bool
		warc      bool // a WARC kept, and no mirror
	}{
		{"any, WARC only", func(requisiteSite) Requisites { return Requisites{RequisitesAny} }, true, true, true},
		{"same", func(requisiteSite) Requisites { return Requisites{RequisitesSame} }, false, false, false},
		{"origin", func(s requisiteSite) Requisites { return Requisites{s.cdn.URL} }, true, false, false},
		{"host:port", func(s requisiteSite) Requisites { return Requisites{frontier.MustParse(s.third.URL).Host} }, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRequisiteSite(t)
			cfg := testConfig(t, s.www.URL+"/")
			if tc.warc {
				cfg.Output.WARC = t.TempDir()
			} else {
				cfg.Output.MirrorDir = t.TempDir()
			}
			cfg.Scope.Requisites = tc.allow(s)
			runCrawl(t, cfg)
			if got := s.cdn.hits()["/img/logo.png"] == 1; got != tc.cdn {
				t.Errorf("CDN image fetched: %v; want %v (CDN asked %v)", got, tc.cdn, s.cdn.hits())
			}
			if got := s.third.hits()["/pub.png"] == 1; got != tc.thrd {
				t.Errorf("third host's image fetched: %v; want %v", got, tc.thrd)
			}
			if !tc.cdn && len(s.cdn.hits()) != 0 {
				t.Errorf("the CDN, not allowed, was asked %v", s.cdn.hits())
			}
			inv := inventory(t, cfg.Output.URLs)
			if r, ok := inv[s.cdn.URL+"/img/logo.png"]; !tc.cdn && (!ok || !strings.HasPrefix(r.Error, "out of scope")) {
				t.Errorf("the refused CDN image's record: %+v; want out of scope", r)
			}
		})
	}
}

// TestHostPattern checks the host and origin patterns of scope.requisites.
func TestHostPattern(t *testing.T) {
	for _, tc := range []struct {
		pat    string
		origin string
		want   bool
	}{
		{"cdn.example.net", "https://cdn.example.net", true},
		{"cdn.example.net", "http://cdn.example.net", true},
		{"cdn.example.net", "http://cdn.example.net:8080", false},
		{"cdn.example.net:8080", "http://cdn.example.net:8080", true},
		{"cdn.example.net:443", "https://cdn.example.net", true},
		{"cdn.example.net:443", "http://cdn.example.net", false},
		{"*.example-cdn.net", "https://a.b.example-cdn.net", true},
		{"*.example-cdn.net", "https://example-cdn.net", false},
		{"*.example-cdn.net", "https://evilexample-cdn.net", false},
		{"https://fonts.example.org", "https://fonts.example.org", true},
		{"https://fonts.example.org/", "http://fonts.example.org", false},
		{"https://FONTS.example.org:443", "https://fonts.example.org", true},
		{"http://127.0.0.1:8001", "http://127.0.0.1:8001", true},
		{"http://127.0.0.1:8001", "http://127.0.0.2:8001", false},
		{"bücher.example", "https://xn--bcher-kva.example", true},
	} {
		h, err := newRequisiteHosts(Requisites{tc.pat})
		if err != nil {
			t.Errorf("%q: %v", tc.pat, err)
			continue
		}
		if got := h.allows(tc.origin); got != tc.want {
			t.Errorf("%q allows %s: %v; want %v", tc.pat, tc.origin, got, tc.want)
		}
	}
	for _, bad := range []string{"anyy", "ftp://x.example", "x.example/path", "*", "a.*.example", "http://", "x.example:99999"} {
		if _, err := parseHostPattern(bad); err == nil {
			t.Errorf("%q accepted as a pattern", bad)
		}
	}
}

// TestSharedCrawlFetchesRequisites: in a crawl shared by two workers, the
// requisite hosts are routed to their partitions' workers like any host:
// each requisite is asked once in all, politely across workers, and
// nothing on the CDN is crawled.
func TestSharedCrawlFetchesRequisites(t *testing.T) {
	ns := startNATS(t)
	s := newRequisiteSite(t)
	var cfgs []Config
	for i := range 2 {
		cfg := testConfig(t, s.www.URL+"/")
		cfg.Politeness.Delay = 30 * time.Millisecond
		cfg.Fetch.Workers = 2
		cfg.Output.MirrorDir = t.TempDir()
		cfg.Cluster = cluster.Config{NATS: ns.ClientURL(), Name: "requisites", Worker: fmt.Sprintf("w%d", i),
			Partitions: 16, Lease: cluster.MinLease}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	runs := startShared(t, ctx, cfgs, nil)()
	wantStopped(t, runs, "drained")
	cdn := s.cdn.hits()
	// Each once, but for requests whose outcome a worker could not write
	// (a partition lost to a late turn on a busy machine) or that were
	// retried, as the other shared crawls' pages (runsAgain).
	again := 0
	for _, p := range []string{"/css/site.css", "/css/base.css", "/fonts/f.woff2", "/img/logo.png", "/img/a.jpg", "/js/app.js", "/img/w.png"} {
		if cdn[p] == 0 {
			t.Errorf("%s of the CDN never asked by the workers; want once", p)
		}
		again += max(cdn[p]-1, 0)
	}
	if n := runsAgain(runs); again > n {
		t.Errorf("the CDN's requisites asked %d times more than once (%v); want at most the %d requests not written or retried", again, cdn, n)
	}
	for _, p := range []string{"/sitemap.xml", "/in-sitemap.html", "/never.html", "/linked.html"} {
		if cdn[p] != 0 {
			t.Errorf("%s of the CDN asked %d times: the CDN is not crawled", p, cdn[p])
		}
	}
	if n := s.third.hits()["/private/secret.png"]; n != 0 {
		t.Errorf("the image robots.txt refuses asked %d times", n)
	}
	if gap := s.cdn.minGap(); gap < 200*time.Millisecond-5*time.Millisecond {
		t.Errorf("two requests reached the CDN %v apart across workers; its Crawl-delay is 0.2s", gap)
	}
	if n := s.cdn.maxInFlight(); n > 1 {
		t.Errorf("%d requests in flight at once to the CDN; max_per_host is 1", n)
	}
}

// TestRequisiteGrammar checks that each page requisite the README lists is
// found as one: what a browser loads to show the page.
func TestRequisiteGrammar(t *testing.T) {
	body := []byte(`<html><head>
<link rel="stylesheet" href="/r/sheet.css"><link rel="icon" href="/r/icon.ico">
<link rel="preload" href="/r/pre.woff2" as="font"><link rel="modulepreload" href="/r/mod.js">
<link rel="manifest" href="/r/app.webmanifest"><script src="/r/script.js"></script>
<style>@import "/r/imported.css"; body { background: url(/r/style-bg.png) }</style>
</head><body style="background: url('/r/attr-bg.png')">
<img src="/r/img.png" srcset="/r/img-1x.png 1x, /r/img-2x.png 2x">
<picture><source srcset="/r/pic.avif" type="image/avif"><img src="/r/pic.jpg"></picture>
<video src="/r/movie.mp4" poster="/r/poster.jpg"><source src="/r/movie.webm"><track src="/r/subs.vtt"></video>
<audio src="/r/sound.mp3"></audio><embed src="/r/embed.swf"><object data="/r/object.svg"></object>
<input type="image" src="/r/button.png"><input type="text" src="/not/a/requisite">
<a href="/not/a/requisite-either">a</a>
</body></html>`)
	base := frontier.MustParse("https://example.com/page")
	got := map[string]bool{}
	for _, ln := range extractHTML(body, "text/html", base, "ExampleBot", 0).links {
		if ln.kind == linkRequisite {
			got[ln.url.Path] = true
		} else if strings.HasPrefix(ln.url.Path, "/r/") {
			t.Errorf("%s found, not as a requisite", ln.url)
		}
	}
	for _, p := range []string{"sheet.css", "icon.ico", "pre.woff2", "mod.js", "app.webmanifest", "script.js", "imported.css",
		"style-bg.png", "attr-bg.png", "img.png", "img-1x.png", "img-2x.png", "pic.avif", "pic.jpg", "movie.mp4",
		"poster.jpg", "movie.webm", "subs.vtt", "sound.mp3", "embed.swf", "object.svg", "button.png"} {
		if !got["/r/"+p] {
			t.Errorf("/r/%s is not found as a requisite", p)
		}
	}
	for p := range got {
		if !strings.HasPrefix(p, "/r/") {
			t.Errorf("%s found as a requisite", p)
		}
	}
	css, _ := extractCSS([]byte(`@import url("fonts.css"); @font-face { src: url(../f/a.woff2) format("woff2"), url('../f/a.woff') }`),
		frontier.MustParse("https://cdn.example/css/site.css"), 0)
	var paths []string
	for _, ln := range css {
		if ln.kind != linkRequisite {
			t.Errorf("%s of a stylesheet is not a requisite", ln.url)
		}
		paths = append(paths, ln.url.Path)
	}
	if strings.Join(paths, " ") != "/css/fonts.css /f/a.woff2 /f/a.woff" {
		t.Errorf("stylesheet's requisites: %v", paths)
	}
}

// TestRequisiteRobotsRedirect: a requisite host's robots.txt that
// redirects to another host scope.requisites allows is followed there,
// and what it says is obeyed.
func TestRequisiteRobotsRedirect(t *testing.T) {
	www, cdn, other := newSite(t), newSite(t), newSite(t)
	www.set("/robots.txt", page{ctype: "text/plain"})
	www.set("/", page{body: `<img src="` + cdn.URL + `/ok.png"><img src="` + cdn.URL + `/no.png">`})
	cdn.set("/robots.txt", page{status: 301, headers: map[string]string{"Location": other.URL + "/cdn-robots.txt"}})
	cdn.set("/ok.png", page{ctype: "image/png", body: "PNG"})
	cdn.set("/no.png", page{ctype: "image/png", body: "PNG"})
	other.set("/cdn-robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /no.png\n"})
	cfg := testConfig(t, www.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	runCrawl(t, cfg)
	if got := cdn.hits(); got["/ok.png"] != 1 || got["/no.png"] != 0 {
		t.Errorf("CDN asked %v; want /ok.png once and /no.png, which its robots.txt refuses, never", got)
	}
	if got := other.hits(); got["/cdn-robots.txt"] != 1 {
		t.Errorf("the robots.txt the CDN's redirects to asked %d times; want once", got["/cdn-robots.txt"])
	}
}

// TestRequisitesAnyIsPublic: scope.requisites any takes no host of this
// machine or of a private network unless the crawl's own hosts are such
// (an intranet crawl, these tests): a public page's
// <img src="http://169.254.169.254/latest/meta-data/..."> would otherwise be
// fetched and its answer, a cloud's credentials, kept in the mirror.
func TestRequisitesAnyIsPublic(t *testing.T) {
	public := testConfig(t, "https://www.example.org/")
	s, err := newScope(public, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for origin, want := range map[string]bool{
		"https://cdn.example.net":    true,
		"http://93.184.216.34":       true,
		"http://169.254.169.254":     false,
		"http://127.0.0.1:8080":      false,
		"http://10.1.2.3":            false,
		"http://192.168.0.1":         false,
		"http://[::1]:8080":          false,
		"http://[fd00::1]":           false,
		"http://[::ffff:127.0.0.1]":  false,
		"http://localhost:9090":      false,
		"http://admin.localhost":     false,
		"http://0.0.0.0":             false,
		"https://[2001:db8::1]:8443": true,
	} {
		if got := s.requisites.allows(origin); got != want {
			t.Errorf("a crawl of www.example.org: any allows %s: %v, want %v", origin, got, want)
		}
	}
	local, err := newScope(testConfig(t, "http://127.0.0.1:8000/"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if !local.requisites.allows("http://127.0.0.1:8001") || !local.requisites.allows("http://10.1.2.3") {
		t.Error("a crawl of 127.0.0.1 refuses requisites on private hosts")
	}
	named := public
	named.Scope.Requisites = Requisites{"http://127.0.0.1:8001"}
	if s, err := newScope(named, time.Now); err != nil || !s.requisites.allows("http://127.0.0.1:8001") {
		t.Errorf("a requisite host named in scope.requisites is refused (%v)", err)
	}
}
