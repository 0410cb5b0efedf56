package crawler

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/lru"
	"github.com/politecrawl/crawler/storage/render"
)

// browserOrSkip returns the browser the rendering tests run, or skips:
// they need Debian's chromium (or any Chromium or Chrome in PATH).
func browserOrSkip(t testing.TB) string {
	t.Helper()
	path, err := render.FindBrowser("")
	if err != nil {
		t.Skipf("no browser (%v): install Debian's chromium to run the rendering tests", err)
	}
	return path
}

// spaSite is a single-page application on two hosts: a shell whose
// script builds the navigation from a JSON API, takes a pushState route,
// adds a link after a delay, asks the API host across origins, asks a
// path robots.txt refuses, and inserts an image; and among its routes a
// page whose script never ends and one that never finishes loading.
type spaSite struct{ www, api *testSite }

func newSPASite(t *testing.T) spaSite {
	s := spaSite{www: newSite(t), api: newSite(t)}
	api := s.api.URL
	s.www.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private/\n"})
	s.www.set("/", page{body: `<!doctype html><html><head><title>shell</title><script src="/app.js"></script></head>
<body><nav id="nav"></nav><p id="late"></p><p id="more"></p></body></html>`})
	s.www.set("/app.js", page{ctype: "text/javascript", body: `
document.title = 'Rendered home';
fetch('/api/menu.json').then(r => r.json()).then(menu => {
	const nav = document.getElementById('nav');
	for (const item of menu) {
		const a = document.createElement('a');
		a.href = item.href; a.textContent = item.title;
		nav.appendChild(a);
	}
	const h1 = document.createElement('h1'); h1.textContent = 'Home'; document.body.appendChild(h1);
	history.pushState({}, '', '/route/settings');
});
fetch('` + api + `/data.json').then(r => r.json()).then(d => {
	const a = document.createElement('a'); a.href = d.link;
	document.getElementById('more').appendChild(a);
});
fetch('/private/secret.json').catch(() => {});
setTimeout(() => {
	const a = document.createElement('a'); a.href = '/added-later';
	document.getElementById('late').appendChild(a);
	const img = document.createElement('img'); img.src = '/img/pic.png';
	document.body.appendChild(img);
}, 300);
`})
	s.www.set("/api/menu.json", page{ctype: "application/json",
		body: `[{"href": "/docs/", "title": "Docs"}, {"href": "/blog/post-1", "title": "Post"},
		{"href": "/endless", "title": "Endless"}, {"href": "/loading", "title": "Loading"}]`})
	s.www.set("/private/secret.json", page{ctype: "application/json", body: `{}`})
	s.www.set("/img/pic.png", page{ctype: "image/png", body: "PNG"})
	for _, p := range []string{"/docs/", "/blog/post-1", "/route/settings", "/added-later", "/from-api"} {
		s.www.set(p, page{body: `<html><head><title>` + p + `</title></head><body><p>` + p + `</p></body></html>`})
	}
	s.www.set("/endless", page{body: `<html><body><a href="/docs/">docs</a><script>while (true) {}</script></body></html>`})
	s.www.set("/loading", page{body: `<html><body><a href="/docs/">docs</a><img src="/img/hang.png"></body></html>`})
	s.www.set("/img/hang.png", page{hang: true})
	s.api.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private/\n"})
	s.api.set("/data.json", page{ctype: "application/json", body: `{"link": "` + s.www.URL + `/from-api"}`,
		headers: map[string]string{"Access-Control-Allow-Origin": "*"}})
	return s
}

// routes are the pages the script-built site links to, the shell aside.
var spaRoutes = []string{"/docs/", "/blog/post-1", "/route/settings", "/added-later", "/from-api", "/endless", "/loading"}

func spaConfig(t *testing.T, s spaSite) Config {
	cfg := testConfig(t, s.www.URL+"/")
	cfg.Politeness.Delay = 100 * time.Millisecond
	cfg.Scope.Requisites = Requisites{s.api.URL}
	cfg.Output.Links = filepath.Join(t.TempDir(), "links.jsonl")
	cfg.Output.WARC = t.TempDir()
	cfg.Fetch.Workers = 8
	cfg.Fetch.Retries = 0 // the crawl's own request for the image that never comes is not tried again
	cfg.Render = RenderConfig{Enabled: true, Browser: browserOrSkip(t), Tabs: 2, Timeout: 4 * time.Second, Settle: 300 * time.Millisecond}
	return cfg
}

// TestRenderSPA: with render.enabled, every route of a script-built site
// is found; every request of the browser and of the crawler together
// keeps each host's delay and max_per_host, carries our User-Agent, and
// obeys robots.txt (the refused path never reaches the server); what only
// rendering found is marked; the hung and endless pages get render_error
// and the crawl ends well.
func TestRenderSPA(t *testing.T) {
	s := newSPASite(t)
	cfg := spaConfig(t, s)
	sum := runCrawl(t, cfg)
	inv := inventory(t, cfg.Output.URLs)
	for _, p := range spaRoutes {
		if rec, ok := inv[s.www.URL+p]; !ok || rec.Status != 200 {
			t.Errorf("route %s: %+v, want fetched", p, rec)
		}
	}
	home := inv[s.www.URL+"/"]
	if !home.Rendered || home.Title != "Rendered home" || home.H1 != "Home" || home.RenderError != "" {
		t.Errorf("home record %+v: want rendered, its facts the rendered page's", home)
	}
	for _, p := range []string{"/endless", "/loading"} {
		if rec := inv[s.www.URL+p]; rec.RenderError == "" || rec.Rendered {
			t.Errorf("%s: %+v, want a render_error", p, rec)
		}
	}
	www, api := s.www.hits(), s.api.hits()
	if www["/private/secret.json"] != 0 {
		t.Errorf("the path robots.txt refuses reached the server %d times", www["/private/secret.json"])
	}
	for _, p := range []string{"/app.js", "/api/menu.json", "/img/pic.png", "/docs/", "/robots.txt"} {
		if www[p] != 1 {
			t.Errorf("%s asked %d times, want once: %v", p, www[p], www)
		}
	}
	if api["/data.json"] != 1 || api["/robots.txt"] != 1 {
		t.Errorf("the API host was asked %v; want robots.txt and /data.json once", api)
	}
	for _, site := range []*testSite{s.www, s.api} {
		t.Logf("%s: %d requests, smallest gap %v, at most %d in flight", site.URL, len(site.hits()), site.minGap(), site.maxInFlight())
		if gap := site.minGap(); gap < cfg.Politeness.Delay-5*time.Millisecond {
			t.Errorf("%s: two requests %v apart; the delay is %v", site.URL, gap, cfg.Politeness.Delay)
		}
		if n := site.maxInFlight(); n > 1 {
			t.Errorf("%s: %d requests in flight at once; max_per_host is 1", site.URL, n)
		}
		site.mu.Lock()
		for _, h := range site.log {
			if h.path == "/api/menu.json" && h.hdr.Get("Accept") != "*/*" {
				t.Errorf("the script's fetch() went with Accept %q, not its own */*", h.hdr.Get("Accept"))
			}
			if ua := h.hdr.Get("User-Agent"); ua != cfg.UserAgent {
				t.Errorf("%s %s: User-Agent %q", site.URL, h.path, ua)
			}
		}
		site.mu.Unlock()
	}
	rendered, served := linkGraph(t, cfg.Output.Links, s.www.URL)
	for _, want := range []string{"/→/docs/", "/→/route/settings", "/→/added-later", "/→/from-api", "/→/img/pic.png"} {
		if !rendered[want] {
			t.Errorf("link %s not marked rendered: %v", want, rendered)
		}
	}
	if !served["/endless→/docs/"] || rendered["/endless→/docs/"] {
		t.Errorf("the links of a page not rendered are its served HTML's: served %v", served)
	}
	warcText := warcTargets(t, cfg.Output.WARC)
	for _, p := range []string{"/api/menu.json", "/app.js", "/img/pic.png"} {
		if n := strings.Count(warcText, "WARC-Target-URI: "+s.www.URL+p+"\r\n"); n != 2 {
			t.Errorf("%s: %d WARC records, want 2 (its request and response)", p, n)
		}
	}
	if !strings.Contains(warcText, "WARC-Target-URI: "+s.api.URL+"/data.json") {
		t.Errorf("the cross-host request is not in the WARC")
	}
	if sum.Stopped != "drained" {
		t.Errorf("stopped: %s", sum.Stopped)
	}
}

// TestRenderOffFindsShellOnly: the same site without rendering is its
// shell alone.
func TestRenderOffFindsShellOnly(t *testing.T) {
	s := newSPASite(t)
	cfg := spaConfig(t, s)
	cfg.Render.Enabled = false
	runCrawl(t, cfg)
	inv := inventory(t, cfg.Output.URLs)
	for _, p := range spaRoutes {
		if _, ok := inv[s.www.URL+p]; ok {
			t.Errorf("route %s found without rendering", p)
		}
	}
	if rec := inv[s.www.URL+"/"]; rec.Rendered || rec.Title != "shell" {
		t.Errorf("home %+v", rec)
	}
	if n := len(s.api.hits()); n != 0 {
		t.Errorf("the API host was asked %v", s.api.hits())
	}
}

// A request of the browser that scope.exclude refuses never reaches the
// server, as a requisite it refuses does not; include, which says which
// pages are crawled, does not refuse what a page loads.
func TestRenderObeysExclude(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.set("/", page{body: `<!doctype html><html><head><title>shell</title></head><body><script>
fetch('/track?event=view').catch(() => {});
fetch('/static/data.json').then(r => r.json()).then(d => {
	const a = document.createElement('a'); a.href = d.link; document.body.appendChild(a);
});
</script></body></html>`})
	s.set("/track", page{ctype: "application/json", body: `{}`})
	s.set("/static/data.json", page{ctype: "application/json", body: `{"link": "/found"}`})
	s.set("/found", page{body: `<html><body>found</body></html>`})
	cfg := testConfig(t, s.URL+"/")
	cfg.Scope.Exclude = []string{`/track\b`}
	cfg.Scope.Include = []string{`/$`, `/found$`}
	cfg.Render = RenderConfig{Enabled: true, Browser: browserOrSkip(t), Tabs: 1, Timeout: 10 * time.Second, Settle: 300 * time.Millisecond}
	runCrawl(t, cfg)
	hits := s.hits()
	if n := hits["/track?event=view"]; n != 0 {
		t.Errorf("the excluded URL reached the server %d times", n)
	}
	if hits["/static/data.json"] != 1 {
		t.Errorf("the script's data, which include does not name, asked %d times; want once", hits["/static/data.json"])
	}
	if rec := inventory(t, cfg.Output.URLs)[s.URL+"/found"]; rec.Status != 200 {
		t.Errorf("the link the script built: %+v, want fetched", rec)
	}
}

// linkGraph reads a link graph: the lines "from→to" (paths of base)
// marked rendered, and those not.
func linkGraph(t *testing.T, path, base string) (rendered, served map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rendered, served = map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l storage.Link
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		k := strings.TrimPrefix(l.From, base) + "→" + strings.TrimPrefix(l.To, base)
		if l.Rendered {
			rendered[k] = true
		} else {
			served[k] = true
		}
	}
	return rendered, served
}

// warcTargets is the text of the WARC files in dir, decompressed.
func warcTargets(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	var all strings.Builder
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(fh)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

// The cache of answers for the browser counts both bodies an answer holds,
// decoded and as received, so that it keeps at most its size in bytes.
func TestKeptAnswersCostBothBodies(t *testing.T) {
	kept := lru.New(2000, keptCost)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		kept.Put(k, &response{status: 200, body: make([]byte, 200), raw: make([]byte, 200)})
	}
	if used := kept.Used(); used != 4*401 {
		t.Errorf("used %d, want 4 answers of 200 + 200 bytes and a 1-byte key (%d): the rest over 2000 dropped", used, 4*401)
	}
	if _, ok := kept.Get("a"); ok {
		t.Error("the least recently used answer was kept past the size")
	}
}

// With rendering on, a host has at most render.tabs of its pages visited
// at once: its next page waits (its requisites do not), and the host is
// handed out again when one of them is settled.
func TestRenderTabsPerHost(t *testing.T) {
	cfg := testConfig(t, "http://a.test/")
	cfg.Render = RenderConfig{Enabled: true, Browser: "/bin/sh", Tabs: 2, Timeout: time.Second, Settle: time.Second}
	c, err := New(cfg, Options{}) // the browser starts on the first render only
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const origin = "http://a.test"
	lease := func(requisite bool) *frontier.Lease {
		return &frontier.Lease{Item: frontier.Item{URL: frontier.URL{Origin: origin}, Kind: frontier.KindPage, Requisite: requisite}}
	}
	out := leaseOut{origin: origin, kind: frontier.KindPage, linkDepth: frontier.NoLinkDepth, budgeted: true}
	for i := range 2 {
		if c.hosts.mustWait(lease(false)) {
			t.Fatalf("page %d waits; render.tabs is 2", i+1)
		}
		c.hosts.out(out)
	}
	if !c.hosts.mustWait(lease(false)) {
		t.Error("a third page of the host does not wait")
	}
	if c.hosts.mustWait(lease(true)) {
		t.Error("a requisite waits for the pages being rendered")
	}
	c.hosts.back(out)
	c.hosts.mu.Lock()
	held := c.hosts.heldBack[origin]
	c.hosts.mu.Unlock()
	if held || c.hosts.mustWait(lease(false)) {
		t.Error("the host is still held back once a page is settled")
	}
}
