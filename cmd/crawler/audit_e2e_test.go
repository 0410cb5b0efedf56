package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/report"
)

// auditSites serves the site under audit (main) and an "external" host
// (ext), both on 127.0.0.1 with their own ports, so two origins, and
// returns with them the URL of a third origin that refuses connections
// (dead). The site has every defect the audit reports; the expected
// values in TestAuditEndToEnd are worked out from the contract, page by
// page, from this handler.
func auditSites(t *testing.T) (main, ext *httptest.Server, dead string, bodies map[string]string) {
	t.Helper()
	closed := httptest.NewServer(http.NotFoundHandler())
	dead = closed.URL
	closed.Close()

	ext = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok", "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>External</title></head><a href="/never">never followed</a></html>`)
		default: // robots.txt too: a 404 robots.txt allows everything
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ext.Close)

	var u string
	pages := map[string]string{}
	page := func(path, head, body string) {
		pages[path] = `<!DOCTYPE html><html><head>` + head + `</head><body>` + body + `</body></html>`
	}
	page("/", `<title>  Home
	  Page </title><meta name="description" content="The home page">
		<link rel="alternate" hreflang="en" href="/"><link rel="alternate" hreflang="es" href="/es">`,
		`<h1> Welcome   home </h1>
		<a href="/p1">P1</a> <a href="/p2">P2</a> <a href="/p3">P3</a>
		<a href="/broken">broken from home</a>
		<a href="/chain1">chain</a> <a href="/loop1">loop</a>
		<a href="/noindex-page">noindex</a> <a href="/private/x">private</a>
		<a href="/canon-other">c1</a> <a href="/canon-host">c2</a> <a href="/canon-file">c3</a>
		<a href="/canon-404">c4</a> <a href="/canon-self">c5</a> <a href="/canon-chain">c6</a>
		<a href="/deep1">deep</a> <a href="/nofollow-src">nf</a> <a href="/xrobots">xr</a>
		<a href="/xbot">xb</a> <a href="/none-page">none</a> <a href="/no-title">nt</a>
		<a href="/blank-title">bt</a> <a href="/hdr-canon">hc</a>
		<a href="`+ext.URL+`/missing">external missing</a> <a href="`+ext.URL+`/ok">external ok</a>`)
	page("/es", `<title>Inicio</title><meta name="description" content="La portada"><link rel="canonical" href="/es#top">
		<link rel="alternate" hreflang="es" href="/es"><link rel="alternate" hreflang="x-default" href="/"><link rel="alternate" hreflang="en" href="/">`,
		`<h1>Bienvenido</h1><a href="/">home</a>`)
	page("/p1", `<title>Page one</title><meta name="description" content="Shared description"><link rel="canonical" href="/p1">`,
		`<h1>One</h1><a href="/broken"></a> <a href="/broken">broken from p1</a> <a href="/">home</a>
		<a href="`+ext.URL+`/missing">missing again</a>`)
	page("/p2", `<title>Dup Title</title><meta name="description" content="Shared description">`,
		`<a href="/broken">broken from p2</a> <a rel="nofollow" href="/nf-target">nofollow link</a> <a rel="nofollow" href="/nf-sitemap">nofollow to a sitemap page</a>
		<a href="`+ext.URL+`/ok">ok again</a> <a href="/doc.pdf">a PDF</a> <a href="/partial">partial</a> <a href="/slow">slow</a>`)
	page("/p3", `<title>Dup Title</title><meta name="description" content="shared description">`,
		`<a href="/redir-broken">redirect to broken</a> <a href="/err500">server error</a>
		<a href="`+dead+`/down">dead host</a> <img src="/broken" alt="broken image">`)
	page("/noindex-page", `<title>Dup Title</title><meta name="robots" content="NoIndex, Follow">`, `<a href="/p1">P1</a>`)
	page("/xrobots", `<title>X robots</title><meta name="robots" content="noindex">`, `<a href="/p1">P1</a>`)
	page("/xbot", `<title>X bot</title><meta name="googlebot" content="noindex"><meta name="politecrawl" content="noarchive">`,
		`<a href="/nf-target">not followed</a>`)
	page("/nofollow-src", `<title>Nofollow page</title><meta name="robots" content="nofollow">`,
		`<a href="/nf-target">not followed either</a>`)
	page("/none-page", `<title>None page</title><meta name="robots" content="none">`, ``)
	page("/no-title", `<meta name="description" content="No title here">`, `<h1>Untitled</h1>`)
	page("/canon-other", `<title>Canon other</title><link rel="canonical" href="/p1">`, ``)
	page("/canon-host", `<title>Canon host</title><link rel="canonical" href="`+ext.URL+`/page">`, ``)
	page("/canon-file", `<title>Canon file</title><link rel="canonical" href="file:///etc/passwd">`, ``)
	page("/canon-404", `<title>Canon 404</title><link rel="canonical" href="/gone-canon">`, ``)
	page("/canon-self", `<title>Canon self</title><link rel="canonical" href="/%63anon-self">`, ``)
	page("/canon-chain", `<title>Canon chain</title><link rel="canonical" href="/chain1">`, ``)
	page("/chain-end", `<title>Chain end</title>`, ``)
	page("/slow", `<title>Slow</title>`, ``)
	page("/p1-target", `<title>Redirect target</title>`, ``)
	page("/only-sitemap", `<title>Only sitemap</title>`, `<a href="/sm-child">child</a> <a href="/only-sitemap#top">top</a> <a href="/%6Fnly-sitemap">itself again</a>`)
	page("/nf-sitemap", `<title>Nofollowed sitemap page</title>`, ``)
	page("/blank-title", `<title>   </title><meta name="description" content="   ">`, ``)
	page("/hdr-canon", `<title>Header canonical</title>`, ``)
	page("/sm-child", `<title>Sitemap child</title>`, ``)
	for i := 1; i <= 5; i++ {
		next := ""
		if i < 5 {
			next = fmt.Sprintf(`<a href="/deep%d">deeper</a>`, i+1)
		}
		if i == 1 {
			next += `<a href="/broken#frag">broken with a fragment</a>`
		}
		page(fmt.Sprintf("/deep%d", i), fmt.Sprintf("<title>Deep %d</title>", i), next)
	}
	redirects := map[string]string{
		"/chain1": "/chain2", "/chain2": "/chain3", "/chain3": "/chain-end",
		"/loop1": "/loop2", "/loop2": "/loop1",
		"/redir-broken":  "/broken2",
		"/sm-redirect":   "/p1-target",
		"/self-redirect": "/self-redirect",
	}
	main = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case p == "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nDisallow: /private\n\nSitemap: %s/sitemap.xml\n", u)
			return
		case p == "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for _, s := range []string{"/", "/p1", "/only-sitemap", "/sm-redirect", "/sm-404", "/noindex-page", "/private/x", "/canon-other", "/p1-target", "/nf-sitemap", "/%64eep4", "/self-redirect"} {
				fmt.Fprintf(w, "<url><loc>%s%s</loc></url>", u, s)
			}
			fmt.Fprint(w, `</urlset>`)
			return
		case p == "/broken2": // an HTML 404 with a title: no page facts
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `<html><head><title>Dup Title</title><meta name="description" content="Shared description"></head></html>`)
			return
		case p == "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			fmt.Fprint(w, "%PDF-1.4 not really")
			return
		case p == "/partial": // a 2xx HTML page that is not a 200
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
			fmt.Fprint(w, `<html><head><title>Dup Title</title></head><h1>Partial</h1></html>`)
			return
		case p == "/slow": // the slowest page by far
			time.Sleep(150 * time.Millisecond)
		case p == "/err500":
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		case p == "/xrobots":
			w.Header().Add("X-Robots-Tag", "noindex, NOFOLLOW")
		case p == "/hdr-canon":
			w.Header().Set("Link", `</p1>; rel="canonical"`)
		case p == "/xbot":
			w.Header().Add("X-Robots-Tag", "otherbot: noindex")
			w.Header().Add("X-Robots-Tag", "politecrawl: nofollow")
		}
		if to, ok := redirects[p]; ok {
			http.Redirect(w, r, to, http.StatusMovedPermanently)
			return
		}
		body, ok := pages[p]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	u = main.URL
	t.Cleanup(main.Close)
	return main, ext, dead, pages
}

// want is what the inventory must say of one URL: the audit's fields
// (and status), worked out from the contract. linkDepth -1 is "left out".
type want struct {
	status    int
	final     string // "" for the URL itself when it was answered
	chain     []string
	inSitemap bool
	linkDepth int
	external  bool
	title     string
	descr     string
	h1        string
	canonical string
	robots    []string // meta_robots, as a set
	hreflang  []storage.Hreflang
	linksOut  int
	err       string // a prefix of error
}

// TestAuditEndToEnd crawls auditSites with `crawler discover
// --check-external`, then checks the inventory's audit fields URL by URL
// and every member of `crawler report --format json` against values
// reasoned from the contract (CONTRACT.md, "The audit"), and the CSV,
// HTML and text formats of the same report.
func TestAuditEndToEnd(t *testing.T) {
	srv, ext, dead, bodies := auditSites(t)
	dir := t.TempDir()
	urls, links := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "links.jsonl")
	if _, stderr, code := runCmd(t, "", "discover", "--delay", "0", "--retries", "0", "--out", urls, "--links", links,
		"--check-external", srv.URL+"/"); code != 0 {
		t.Fatalf("discover: exit %d:\n%s", code, stderr)
	}
	U := func(p string) string { return srv.URL + p }
	E := func(p string) string { return ext.URL + p }
	us := func(ps ...string) []string { // URLs of the site, sorted as the report sorts
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = U(p)
		}
		sort.Strings(out)
		return out
	}

	// The inventory: the last record of each URL.
	data, err := os.ReadFile(urls)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]storage.Record{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r storage.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("inventory line %q: %v", line, err)
		}
		recs[r.URL] = r
	}
	page := func(title string, linksOut int) want {
		return want{status: 200, linkDepth: 1, title: title, linksOut: linksOut}
	}
	with := func(w want, f func(*want)) want { f(&w); return w }
	hl := func(pairs ...string) []storage.Hreflang {
		var h []storage.Hreflang
		for i := 0; i < len(pairs); i += 2 {
			h = append(h, storage.Hreflang{Lang: pairs[i], URL: U(pairs[i+1])})
		}
		return h
	}
	wants := map[string]want{
		U("/sitemap.xml"): {status: 200, linkDepth: -1},
		U("/"): {status: 200, inSitemap: true, linkDepth: 0, title: "Home Page", descr: "The home page", h1: "Welcome home",
			hreflang: hl("en", "/", "es", "/es"), linksOut: 26}, // 24 <a> and 2 hreflang alternates
		U("/es"): with(page("Inicio", 5), func(w *want) { // a canonical, 3 alternates, an <a>
			w.descr, w.h1, w.canonical, w.hreflang = "La portada", "Bienvenido", U("/es#top"), hl("es", "/es", "x-default", "/", "en", "/")
		}),
		U("/p1"): with(page("Page one", 5), func(w *want) {
			w.inSitemap, w.descr, w.h1, w.canonical = true, "Shared description", "One", U("/p1")
		}),
		U("/p2"):           with(page("Dup Title", 7), func(w *want) { w.descr = "Shared description" }),
		U("/p3"):           with(page("Dup Title", 4), func(w *want) { w.descr = "shared description" }),
		U("/broken"):       {status: 404, linkDepth: 1},
		U("/broken2"):      {status: 404, linkDepth: 2}, // an HTML 404: no title, no description
		U("/redir-broken"): {status: 301, final: U("/broken2"), chain: []string{U("/broken2")}, linkDepth: 2},
		U("/err500"):       {status: 500, linkDepth: 2},
		U("/doc.pdf"):      {status: 200, linkDepth: 2},
		U("/partial"):      {status: 203, linkDepth: 2, title: "Dup Title", h1: "Partial"},
		U("/slow"):         {status: 200, linkDepth: 2, title: "Slow"},
		U("/chain1"):       {status: 301, final: U("/chain-end"), chain: []string{U("/chain2"), U("/chain3"), U("/chain-end")}, linkDepth: 1},
		U("/chain2"):       {status: 301, final: U("/chain-end"), chain: []string{U("/chain3"), U("/chain-end")}, linkDepth: 1},
		U("/chain3"):       {status: 301, final: U("/chain-end"), chain: []string{U("/chain-end")}, linkDepth: 1},
		U("/chain-end"):    page("Chain end", 0), // redirects count 0
		U("/loop1"):        {status: 301, final: U("/loop1"), chain: []string{U("/loop2"), U("/loop1")}, linkDepth: 1, err: "redirect loop"},
		U("/loop2"):        {status: 301, final: U("/loop2"), chain: []string{U("/loop1"), U("/loop2")}, linkDepth: 1, err: "redirect loop"},
		U("/noindex-page"): with(page("Dup Title", 1), func(w *want) { w.inSitemap, w.robots = true, []string{"noindex", "follow"} }),
		U("/private/x"):    {status: 0, inSitemap: true, linkDepth: 1, err: "disallowed by robots.txt"},
		U("/canon-other"):  with(page("Canon other", 1), func(w *want) { w.inSitemap, w.canonical = true, U("/p1") }),
		U("/canon-host"):   with(page("Canon host", 1), func(w *want) { w.canonical = E("/page") }),
		// Its canonical to file:///etc/passwd is a link found on the
		// page, as the link graph has it.
		U("/canon-file"):  with(page("Canon file", 1), func(w *want) { w.canonical = "file:///etc/passwd" }),
		U("/canon-404"):   with(page("Canon 404", 1), func(w *want) { w.canonical = U("/gone-canon") }),
		U("/canon-self"):  with(page("Canon self", 1), func(w *want) { w.canonical = U("/%63anon-self") }), // as written
		U("/canon-chain"): with(page("Canon chain", 1), func(w *want) { w.canonical = U("/chain1") }),
		// A Link: <…>; rel="canonical" header is the record's canonical,
		// but no link found on the page: no line of the link graph, not
		// in links_out (README, "Outputs").
		U("/hdr-canon"):    with(page("Header canonical", 0), func(w *want) { w.canonical = U("/p1") }),
		U("/gone-canon"):   {status: 404, linkDepth: 2},
		U("/deep1"):        page("Deep 1", 2),
		U("/deep2"):        with(page("Deep 2", 1), func(w *want) { w.linkDepth = 2 }),
		U("/deep3"):        with(page("Deep 3", 1), func(w *want) { w.linkDepth = 3 }),
		U("/%64eep4"):      with(page("Deep 4", 1), func(w *want) { w.linkDepth, w.inSitemap = 4, true }), // as the sitemap wrote it
		U("/deep5"):        with(page("Deep 5", 0), func(w *want) { w.linkDepth = 5 }),
		U("/nofollow-src"): with(page("Nofollow page", 1), func(w *want) { w.robots = []string{"nofollow"} }),
		U("/xrobots"):      with(page("X robots", 1), func(w *want) { w.robots = []string{"noindex", "nofollow"} }),
		U("/xbot"):         with(page("X bot", 1), func(w *want) { w.robots = []string{"noarchive", "nofollow"} }),
		U("/none-page"):    with(page("None page", 0), func(w *want) { w.robots = []string{"none"} }),
		U("/no-title"):     with(page("", 0), func(w *want) { w.descr, w.h1 = "No title here", "Untitled" }),
		U("/blank-title"):  page("", 0),
		U("/only-sitemap"): {status: 200, inSitemap: true, linkDepth: -1, title: "Only sitemap", linksOut: 3},
		U("/sm-child"):     {status: 200, linkDepth: -1, title: "Sitemap child"}, // no chain of links from a seed
		U("/nf-sitemap"):   {status: 200, inSitemap: true, linkDepth: -1, title: "Nofollowed sitemap page"},
		U("/sm-redirect"):  {status: 301, final: U("/p1-target"), chain: []string{U("/p1-target")}, inSitemap: true, linkDepth: -1},
		U("/p1-target"):    {status: 200, inSitemap: true, linkDepth: -1, title: "Redirect target"},
		U("/sm-404"):       {status: 404, inSitemap: true, linkDepth: -1},
		U("/self-redirect"): {status: 301, final: U("/self-redirect"), chain: []string{U("/self-redirect")}, inSitemap: true,
			linkDepth: -1, err: "redirect loop"},
		E("/missing"):  {status: 404, linkDepth: 1, external: true},
		E("/ok"):       {status: 200, linkDepth: 1, external: true},
		E("/page"):     {status: 200, linkDepth: 2, external: true}, // reached by /canon-host's canonical
		dead + "/down": {status: 0, linkDepth: 2, external: true, err: "robots.txt unavailable"},
	}
	for u := range recs {
		if _, ok := wants[u]; !ok {
			t.Errorf("inventory: unexpected record of %s: %+v", u, recs[u]) // /nf-target is only linked with nofollow
		}
	}
	for u, w := range wants {
		r, ok := recs[u]
		if !ok {
			t.Errorf("inventory: no record of %s", u)
			continue
		}
		final := w.final
		if final == "" && w.status != 0 {
			final = u
		}
		ld := -1
		if r.LinkDepth != nil {
			ld = *r.LinkDepth
		}
		got := want{status: r.Status, final: r.FinalURL, chain: r.RedirectChain, inSitemap: r.InSitemap, linkDepth: ld,
			external: r.External, title: r.Title, descr: r.Description, h1: r.H1, canonical: r.Canonical,
			robots: slices.Sorted(slices.Values(r.MetaRobots)), hreflang: r.Hreflang, linksOut: r.LinksOut}
		exp := w
		exp.final, exp.robots, exp.err = final, slices.Sorted(slices.Values(w.robots)), ""
		if len(exp.robots) == 0 {
			exp.robots = nil
		}
		if len(got.robots) == 0 {
			got.robots = nil
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("inventory of %s:\n got %+v\nwant %+v", u, got, exp)
		}
		if !strings.HasPrefix(r.Error, w.err) || (w.err == "" && r.Error != "") {
			t.Errorf("inventory of %s: error %q, want %q", u, r.Error, w.err)
		}
		// bytes is the body's length.
		if body, ok := bodies[strings.TrimPrefix(u, srv.URL)]; ok && r.Bytes != int64(len(body)) {
			t.Errorf("inventory of %s: bytes %d, want %d", u, r.Bytes, len(body))
		}
	}

	// The report, as JSON.
	out, stderr, code := runCmd(t, "", "report", "--urls", urls, "--links", links, "--format", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("report: exit %d:\n%s", code, stderr)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &members); err != nil {
		t.Fatalf("report: %v:\n%s", err, out)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range members {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"broken", "canonicals", "depth", "descriptions", "extracted", "findings", "largest", "nofollow", "noindex", "not_in_sitemap",
		"orphans", "overview", "pages", "redirects", "rules", "sitemap_issues", "slowest", "titles"}; !slices.Equal(names, want) {
		t.Errorf("report members %q, want %q", names, want)
	}
	var got report.Report
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	in := func(from, anchor string) report.Inlink { return report.Inlink{From: U(from), Anchor: anchor} }
	broken := []report.Broken{
		// Linked from 5 pages: an empty anchor gives way to the page's
		// next; a link with a fragment and an <img> are links to it.
		{URL: U("/broken"), Status: 404, Inlinks: []report.Inlink{in("/", "broken from home"), in("/deep1", "broken with a fragment"),
			in("/p1", "broken from p1"), in("/p2", "broken from p2"), in("/p3", "broken image")}},
		{URL: U("/broken2"), Status: 404, Inlinks: []report.Inlink{in("/redir-broken", "")}}, // the redirect line of the graph
		{URL: U("/err500"), Status: 500, Inlinks: []report.Inlink{in("/p3", "server error")}},
		{URL: U("/gone-canon"), Status: 404, Inlinks: []report.Inlink{in("/canon-404", "")}}, // a canonical is a link
		// Judged by the end of its chain.
		{URL: U("/redir-broken"), Status: 404, Inlinks: []report.Inlink{in("/p3", "redirect to broken")}},
		{URL: U("/sm-404"), Status: 404, Inlinks: []report.Inlink{}}, // a sitemap is no page
		{URL: E("/missing"), Status: 404, Inlinks: []report.Inlink{in("/", "external missing"), in("/p1", "missing again")}},
		// Its host refused the connection, robots.txt's too: the link
		// is broken, with the network error that stopped it.
		{URL: dead + "/down", Error: recs[dead+"/down"].Error, Inlinks: []report.Inlink{in("/p3", "dead host")}},
	}
	slices.SortFunc(broken, func(a, b report.Broken) int { return strings.Compare(a.URL, b.URL) })
	redirect := func(from, to string, status, hops int, loop bool) report.Redirect {
		return report.Redirect{URL: U(from), FinalURL: U(to), FinalStatus: status, Hops: hops, Loop: loop}
	}
	// own lists the site's answered URLs, for slowest and largest.
	type entry struct {
		url string
		v   int64
	}
	var bySize, byTime []entry
	for u, r := range recs {
		if !r.External && r.Status != 0 {
			bySize = append(bySize, entry{u, r.Bytes})
			byTime = append(byTime, entry{u, r.DurationMS})
		}
	}
	top := func(es []entry) []entry {
		slices.SortFunc(es, func(a, b entry) int {
			if a.v != b.v {
				return int(b.v - a.v)
			}
			return strings.Compare(a.url, b.url)
		})
		es = es[:report.TopN]
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.url, b.url) })
		return es
	}
	var largest []report.Large
	for _, e := range top(bySize) {
		largest = append(largest, report.Large{URL: e.url, Bytes: e.v})
	}
	var slowest []report.Slow
	for _, e := range top(byTime) {
		slowest = append(slowest, report.Slow{URL: e.url, DurationMS: e.v})
	}
	exp := report.Report{
		Overview: report.Overview{
			// 47 URLs of the site (its sitemap too) and 4 external,
			// all answered but /private/x (robots) and dead+"/down"
			// (its host's robots.txt never answered: never asked, so
			// not fetched, though broken).
			URLs: 51, Fetched: 49,
			ByStatus:   report.ByStatus{S2xx: 35, S3xx: 8, S4xx: 5, S5xx: 1},
			Disallowed: 1,
			// The site's 2xx HTML pages, /partial's 203 too (not the
			// sitemap, not /doc.pdf): the external /ok and /page are
			// asked with a HEAD and are no audited pages.
			PagesHTML: 31,
		},
		Broken: broken,
		Redirects: []report.Redirect{
			redirect("/chain1", "/chain-end", 200, 3, false), redirect("/chain2", "/chain-end", 200, 2, false),
			redirect("/chain3", "/chain-end", 200, 1, false),
			redirect("/loop1", "/loop1", 301, 2, true), redirect("/loop2", "/loop2", 301, 2, true),
			redirect("/redir-broken", "/broken2", 404, 1, false), redirect("/self-redirect", "/self-redirect", 301, 1, true),
			redirect("/sm-redirect", "/p1-target", 200, 1, false),
		},
		// /p1-target is reached by a redirect, /nf-sitemap by a nofollow
		// link, /%64eep4 by a link to /deep4; /only-sitemap's links to
		// itself (#top, /%6Fnly-sitemap) and /self-redirect's redirect
		// to itself are no ways in.
		Orphans: us("/only-sitemap", "/self-redirect", "/sm-404", "/sm-redirect"),
		NotInSitemap: us("/blank-title", "/canon-self", "/chain-end", "/deep1", "/deep2", "/deep3", "/deep5", "/es",
			"/no-title", "/nofollow-src", "/p2", "/p3", "/slow", "/sm-child", "/xbot"),
		SitemapIssues: []report.SitemapIssue{
			{URL: U("/canon-other"), Issue: "canonicalised"}, {URL: U("/noindex-page"), Issue: "noindex"},
			{URL: U("/private/x"), Issue: "disallowed"}, {URL: U("/self-redirect"), Issue: "redirect"},
			{URL: U("/sm-404"), Issue: "not-200"}, {URL: U("/sm-redirect"), Issue: "redirect"},
		},
		Noindex:  us("/noindex-page", "/none-page", "/xrobots"),
		Nofollow: us("/nofollow-src", "/none-page", "/xbot", "/xrobots"),
		Canonicals: []report.CanonicalIssue{
			{URL: U("/canon-404"), Canonical: U("/gone-canon"), Issue: "not-200"},
			{URL: U("/canon-chain"), Canonical: U("/chain1"), Issue: "elsewhere"}, // its chain ends in a 200
			{URL: U("/canon-file"), Canonical: "file:///etc/passwd", Issue: "not-http"},
			{URL: U("/canon-host"), Canonical: E("/page"), Issue: "other-host"},
			{URL: U("/canon-other"), Canonical: U("/p1"), Issue: "elsewhere"},
			{URL: U("/hdr-canon"), Canonical: U("/p1"), Issue: "elsewhere"},
		},
		// /partial (203) and /broken2 (404) say Dup Title too, but are
		// no 200 pages.
		Titles: report.TextCheck{Missing: us("/blank-title", "/no-title"),
			Duplicates: []report.Duplicate{{Title: "Dup Title", URLs: us("/noindex-page", "/p2", "/p3")}}},
		Descriptions: report.TextCheck{
			Missing: us("/%64eep4", "/blank-title", "/canon-404", "/canon-chain", "/canon-file", "/canon-host", "/canon-other",
				"/canon-self", "/chain-end", "/deep1", "/deep2", "/deep3", "/deep5", "/hdr-canon", "/nf-sitemap", "/nofollow-src",
				"/noindex-page", "/none-page", "/only-sitemap", "/p1-target", "/slow", "/sm-child", "/xbot", "/xrobots"),
			Duplicates: []report.Duplicate{{Description: "Shared description", URLs: us("/p1", "/p2")}}, // not /p3's lower case
		},
		// 200 HTML pages with a link_depth: / at 0; 20 at 1; /deep2 and
		// /slow at 2; /deep3, /%64eep4, /deep5.
		Depth:   report.DepthCounts{1, 20, 2, 1, 1, 1},
		Slowest: slowest,
		Largest: largest,
	}
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("report %s:\n got %s\nwant %s", name, g, w)
		}
	}
	check("overview", got.Overview, exp.Overview)
	check("broken", got.Broken, exp.Broken)
	check("redirects", got.Redirects, exp.Redirects)
	check("orphans", got.Orphans, exp.Orphans)
	check("not_in_sitemap", got.NotInSitemap, exp.NotInSitemap)
	check("sitemap_issues", got.SitemapIssues, exp.SitemapIssues)
	check("noindex", got.Noindex, exp.Noindex)
	check("nofollow", got.Nofollow, exp.Nofollow)
	check("canonicals", got.Canonicals, exp.Canonicals)
	check("titles", got.Titles, exp.Titles)
	check("descriptions", got.Descriptions, exp.Descriptions)
	check("depth", got.Depth, exp.Depth)
	check("slowest", got.Slowest, exp.Slowest)
	check("largest", got.Largest, exp.Largest)
	if !slices.ContainsFunc(got.Slowest, func(s report.Slow) bool { return s.URL == U("/slow") && s.DurationMS >= 150 }) {
		t.Errorf("slowest %+v lacks /slow at 150 ms or more", got.Slowest)
	}
	if !strings.Contains(string(members["depth"]), `"0":1,"1":20,"2":2`) {
		t.Errorf("depth %s, want an object by depth", members["depth"])
	}

	// CSV: one file per table, named after the member, column names on
	// line 1; broken.csv a row per page linking to a broken URL.
	csvDir := filepath.Join(dir, "csv")
	if _, stderr, code := runCmd(t, "", "report", "--urls", urls, "--links", links, "--format", "csv", "--out", csvDir); code != 0 {
		t.Fatalf("csv: exit %d: %s", code, stderr)
	}
	readCSV := func(name string) [][]string {
		f, err := os.Open(filepath.Join(csvDir, name+".csv"))
		if err != nil {
			t.Error(err)
			return nil
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Errorf("%s.csv: %v", name, err)
		}
		return rows
	}
	for _, name := range names {
		if rows := readCSV(name); len(rows) == 0 {
			t.Errorf("%s.csv: no header", name)
		}
	}
	brokenRows := readCSV("broken")
	if len(brokenRows) > 0 && !slices.Equal(brokenRows[0], []string{"url", "status", "error", "from", "anchor"}) {
		t.Errorf("broken.csv header %q", brokenRows[0])
	}
	nRows := 0
	for _, b := range exp.Broken {
		nRows += max(1, len(b.Inlinks))
	}
	if len(brokenRows) != 1+nRows || !slices.ContainsFunc(brokenRows, func(r []string) bool {
		return slices.Equal(r, []string{U("/broken"), "404", "", U("/deep1"), "broken with a fragment"})
	}) {
		t.Errorf("broken.csv, want %d rows with /broken from /deep1:\n%q", 1+nRows, brokenRows)
	}
	if rows := readCSV("orphans"); len(rows) != 1+len(exp.Orphans) || rows[0][0] != "url" {
		t.Errorf("orphans.csv %q", rows)
	}

	// HTML: one file, no request of any kind, every broken URL with the
	// pages linking to it.
	htmlFile := filepath.Join(dir, "audit.html")
	if _, stderr, code := runCmd(t, "", "report", "--urls", urls, "--links", links, "--format", "html", "--out", htmlFile); code != 0 {
		t.Fatalf("html: exit %d: %s", code, stderr)
	}
	h, err := os.ReadFile(htmlFile)
	if err != nil {
		t.Fatal(err)
	}
	asset := regexp.MustCompile(`(?i)<(script|img|link|iframe|source|embed|object)\b[^>]*\b(src|href|data)\s*=\s*["']?[a-z]*:?//|url\(\s*["']?[a-z]*:?//|@import`)
	if m := asset.Find(h); m != nil {
		t.Errorf("audit.html loads an asset: %s", m)
	}
	for _, b := range exp.Broken {
		if !strings.Contains(string(h), b.URL) {
			t.Errorf("audit.html lacks broken %s", b.URL)
		}
		for _, l := range b.Inlinks {
			if !strings.Contains(string(h), l.From) || !strings.Contains(string(h), l.Anchor) {
				t.Errorf("audit.html lacks %s's inlink %+v", b.URL, l)
			}
		}
	}

	// Text: to a file, every row of every table.
	txt, _, code := runCmd(t, "", "report", "--urls", urls, "--links", links)
	if code != 0 {
		t.Fatalf("text: exit %d", code)
	}
	for _, s := range append(append(slices.Clone(exp.Orphans), exp.NotInSitemap...), exp.Descriptions.Missing...) {
		if !strings.Contains(txt, s) {
			t.Errorf("text report lacks %s", s)
		}
	}
	for _, s := range []string{"Broken", "Redirects", "Orphans", "broken from p2", "Dup Title", "Shared description", "not-http", "canonicalised"} {
		if !strings.Contains(txt, s) {
			t.Errorf("text report lacks %q", s)
		}
	}
}
