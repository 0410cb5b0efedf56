package crawler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
)

// crawlMirror crawls the site from / with a relinked mirror and returns the
// mirror's directory, after checking that it has no broken link.
func crawlMirror(t *testing.T, s *testSite) string {
	t.Helper()
	cfg := testConfig(t, s.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Output.MirrorLinks = MirrorLinksRelative
	if sum := runCrawl(t, cfg); sum.BrokenLinks != 0 {
		t.Errorf("%d broken links in the mirror", sum.BrokenLinks)
	}
	return cfg.Output.MirrorDir
}

// mirrorText reads the mirror file of the page at uri on the site.
func mirrorText(t *testing.T, dir string, s *testSite, uri string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(mirror.Path(frontier.MustParse(s.URL+uri), "text/html"))))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A page served at both /py/ and /py/index.html has one mirror file, which
// is rewritten once: a second rewrite read its relative links as the
// site's and made absolute the link to a stylesheet whose mirror name
// differs from its URL (/css/site is css/site.css).
func TestMirrorFileOfTwoURLsRelinkedOnce(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.html("/", "/py/", "/py/index.html")
	py := page{body: `<html><head><link rel="stylesheet" href="/css/site"></head><body><a href="/">home</a></body></html>`}
	s.set("/py/", py)
	s.set("/py/index.html", py)
	s.set("/css/site", page{ctype: "text/css", body: "body { color: black }"})
	dir := crawlMirror(t, s)
	body := mirrorText(t, dir, s, "/py/")
	if !strings.Contains(body, `href="../css/site.css"`) || strings.Contains(body, s.URL) {
		t.Errorf("py/index.html should link to ../css/site.css, and to nothing live:\n%s", body)
	}
}

// The same when the pass relinks pages at once (relinkAll): of many pages
// each served at two URLs, every file is rewritten once, whichever of its
// URLs comes first. Under -race, as the README's test command runs it, it
// also checks that the pages relinked at once share the pass safely.
func TestMirrorFilesOfTwoURLsRelinkedOnceAtOnce(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	py := page{body: `<html><head><link rel="stylesheet" href="/css/site"></head><body><a href="/">home</a></body></html>`}
	var links []string
	for i := range 60 {
		dir := fmt.Sprintf("/d%d/", i)
		links = append(links, dir, dir+"index.html")
		s.set(dir, py)
		s.set(dir+"index.html", py)
	}
	s.html("/", links...)
	s.set("/css/site", page{ctype: "text/css", body: "body { color: black }"})
	dir := crawlMirror(t, s)
	for i := range 60 {
		body := mirrorText(t, dir, s, fmt.Sprintf("/d%d/", i))
		if !strings.Contains(body, `href="../css/site.css"`) || strings.Contains(body, s.URL) {
			t.Fatalf("d%d/index.html should link to ../css/site.css, and to nothing live:\n%s", i, body)
		}
	}
}

// A link to a URL that redirected points at the mirror file of the end of
// the chain, as wget -k links it; the page records keep the redirects.
func TestMirrorLinkFollowsRedirects(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.html("/", "/old", "/docs/moved")
	s.set("/old", page{status: 301, headers: map[string]string{"Location": "/older"}})
	s.set("/older", page{status: 302, headers: map[string]string{"Location": "/new"}})
	s.html("/new", "/")
	s.set("/docs/moved", page{status: 308, headers: map[string]string{"Location": "/img/x"}})
	s.set("/img/x", page{ctype: "image/png", body: "PNG"})
	dir := crawlMirror(t, s)
	body := mirrorText(t, dir, s, "/")
	for _, want := range []string{`href="new.html"`, `href="img/x"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the home page lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, s.URL) {
		t.Errorf("the home page links to the live site:\n%s", body)
	}
}

// A form's relative action stays relative, or points at the mirror file
// when its target is mirrored; it used to become the live URL.
func TestMirrorKeepsFormActionsRelative(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.html("/", "/docs/page.html")
	s.set("/docs/page.html", page{body: `<html><body><a href="intro">intro</a>` +
		`<form action="../search.html"><input name=q></form><form action="intro"><button formaction="/docs/intro">go</button></form></body></html>`})
	s.html("/docs/intro", "/")
	dir := crawlMirror(t, s)
	body := mirrorText(t, dir, s, "/docs/page.html")
	for _, want := range []string{`action="../search.html"`, `action="intro.html"`, `formaction="intro.html"`} {
		if !strings.Contains(body, want) {
			t.Errorf("docs/page.html lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, s.URL) {
		t.Errorf("docs/page.html links to the live site:\n%s", body)
	}
}

// A file two URLs share is rewritten once even when the second URL's
// record is relinked a pass later: a worker was visiting it during the
// first pass, and its revisit found the body unchanged and kept the file.
func TestRelinkRewritesASharedFileOnceAcrossPasses(t *testing.T) {
	c, save := newRelinker(t)
	body := `<html><head><link rel="stylesheet" href="/css/site"></head></html>`
	var pages []storage.Page
	for _, raw := range []string{"http://example.test/py/", "http://example.test/py/index.html"} {
		p := save(raw, body)
		p.Hash = storage.ContentHash([]byte(body))
		if err := c.pages.Put(p); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	sheet := frontier.MustParse("http://example.test/css/site")
	rel, err := c.out.mirror.Write(sheet, "text/css", strings.NewReader("a{}"))
	if err != nil {
		t.Fatal(err)
	}
	canon, err := frontier.Canonicalize(sheet.String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.pages.Put(storage.Page{Key: canon.Key, URL: sheet.String(), Status: 200, ContentType: "text/css", MirrorPath: rel}); err != nil {
		t.Fatal(err)
	}

	c.visiting.hold(pages[1].Key) // being visited: left for the next pass
	if _, err := c.relink.relinkMirror(); err != nil {
		t.Fatal(err)
	}
	c.visiting.drop(pages[1].Key)
	if _, err := c.relink.relinkMirror(); err != nil {
		t.Fatal(err)
	}
	if got := mirrorFile(t, c, pages[0]); !strings.Contains(got, `href="../css/site.css"`) {
		t.Errorf("py/index.html after two passes:\n%s", got)
	}
	if p, _, _ := c.pages.Get(pages[1].Key); !p.Relinked {
		t.Errorf("the second URL's record is not marked relinked")
	}
}
