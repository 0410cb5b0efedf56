package crawler

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// densePage is n links written as densely as HTML allows: <a href=0>…
func densePage(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<html><body>")
	for i := range n {
		fmt.Fprintf(&b, "<a href=%d>", i)
	}
	return b.Bytes()
}

// A page with more links than scope.max_links_per_page gives the frontier
// and the link graph the first of them only, and its record counts the
// rest (issue 23: one dense page cost gigabytes).
func TestMaxLinksPerPage(t *testing.T) {
	s := newSite(t)
	s.set("/", page{body: string(densePage(2500))})
	cfg := testConfig(t, s.URL+"/")
	cfg.Scope.MaxPages = 1
	cfg.Scope.MaxLinksPerPage = 1000
	cfg.Output.Links = filepath.Join(t.TempDir(), "links.jsonl")
	runCrawl(t, cfg)
	r := inventory(t, cfg.Output.URLs)[s.URL+"/"]
	if r.Status != 200 || r.LinksOut != 1000 || r.LinksCut != 1500 {
		t.Errorf("record: status %d, links_out %d, links_cut %d; want 200, 1000, 1500", r.Status, r.LinksOut, r.LinksCut)
	}
	b, err := os.ReadFile(cfg.Output.Links)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 1000 {
		t.Errorf("link graph has %d lines, want 1000", n)
	}
	if !bytes.Contains(b, []byte(`"to":"`+s.URL+`/999"`)) || bytes.Contains(b, []byte(`"to":"`+s.URL+`/1000"`)) {
		t.Errorf("link graph does not hold the first 1000 links exactly")
	}
	// The rest are not queued either: each the page's own record, or one
	// saying max_pages left it.
	if n := len(inventory(t, cfg.Output.URLs)); n != 1001 {
		t.Errorf("inventory names %d URLs, want the page and its first 1000 links", n)
	}
}

// Reading a dense page within the limit allocates in proportion to the
// limit and the body, not to the links the page holds: 700,000 links read
// whole allocated 822 MiB here, 38 MiB with the limit (16.5 since an ASCII
// page is no longer copied); 10 MiB of <link hreflang> built a head
// document of 218,000 elements (256 MiB).
func TestDensePageAllocationsBounded(t *testing.T) {
	base, _ := url.Parse("http://example.com/")
	for _, tc := range []struct {
		name, tag string
		links     int
	}{
		{"anchors", "<a href=%d>", 10_000},
		{"hreflang", "<link rel=alternate hreflang=x%d href=%[1]d>", 10_000},
		{"meta", "<meta name=x%d content=y>", 0},
		{"stylesheets", "<link rel=stylesheet href=%d.css>", 10_000},
	} {
		var b bytes.Buffer
		for i := 0; b.Len() < 10<<20; i++ {
			fmt.Fprintf(&b, tc.tag, i)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		e := extractHTML(b.Bytes(), "text/html", base, "", 10_000)
		runtime.ReadMemStats(&after)
		if len(e.links) != tc.links {
			t.Errorf("%s: %d links, want %d", tc.name, len(e.links), tc.links)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
			t.Errorf("%s: reading 10 MiB allocated %d MiB; want less than 64", tc.name, got>>20)
		}
	}
}

// A stylesheet's references are cut at the limit too.
func TestExtractCSSLimit(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "a%d{background:url(/%d.png)}", i, i)
	}
	base, _ := url.Parse("http://example.com/s.css")
	found, cut := extractCSS([]byte(b.String()), base, 20)
	if len(found) != 20 || cut != 30 || found[19].url.Path != "/19.png" {
		t.Errorf("%d found, %d cut; want 20, 30", len(found), cut)
	}
	if found, cut := extractCSS([]byte(b.String()), base, 0); len(found) != 50 || cut != 0 {
		t.Errorf("no limit: %d found, %d cut; want 50, 0", len(found), cut)
	}
}
