package sitemap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// site is an httptest server of scripted files, counting requests.
type site struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	files map[string]file
	hits  map[string]int
}

// file is one scripted response.
type file struct {
	body     []byte
	status   int    // 200 when 0
	encoding string // Content-Encoding, if any
	redirect string // a path to redirect to, if any
}

func newSite(t *testing.T) *site {
	s := &site{t: t, files: map[string]file{}, hits: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.URL.Path]
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	switch {
	case !ok:
		http.NotFound(w, r)
	case f.redirect != "":
		http.Redirect(w, r, f.redirect, http.StatusFound)
	default:
		if f.encoding != "" {
			w.Header().Set("Content-Encoding", f.encoding)
		}
		if f.status != 0 {
			w.WriteHeader(f.status)
		}
		w.Write(f.body)
	}
}

func (s *site) url(path string) string { return s.srv.URL + path }

func (s *site) add(path string, f file) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = f
}

func (s *site) hitsOf(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// fetch is a FetchFunc over the site's client, without Go's transparent
// gzip, as the command's is.
func (s *site) fetch(ctx context.Context, u string) (io.ReadCloser, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, "", fmt.Errorf("HTTP status %s", resp.Status)
	}
	return resp.Body, resp.Request.URL.String(), nil
}

// urlset returns a urlset listing locs.
func urlset(locs ...string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, l := range locs {
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>\n", l)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// index returns a sitemap index listing locs.
func index(locs ...string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, l := range locs {
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>\n", l)
	}
	b.WriteString("</sitemapindex>\n")
	return b.Bytes()
}

// walkResult is what a walk produced.
type walkResult struct {
	pages    []string
	warnings []Warning
	stats    WalkStats
	err      error
}

func (r walkResult) rules() []Rule {
	var out []Rule
	for _, w := range r.warnings {
		out = append(out, w.Rule)
	}
	return out
}

func runWalk(t *testing.T, s *site, lim Limits, roots ...string) walkResult {
	t.Helper()
	var r walkResult
	w := Walker{Fetch: s.fetch, Limits: lim, Warn: func(w Warning) { r.warnings = append(r.warnings, w) }}
	r.stats, r.err = w.Walk(context.Background(), roots, func(e Entry) error {
		r.pages = append(r.pages, e.Loc)
		return nil
	})
	if r.stats.Warnings != len(r.warnings) {
		t.Errorf("stats count %d warnings, %d reported", r.stats.Warnings, len(r.warnings))
	}
	return r
}

func TestWalkGzipVariants(t *testing.T) {
	s := newSite(t)
	xml := func(name string) []byte { return urlset(s.url("/" + name)) }
	s.add("/plain.xml", file{body: xml("plain")})
	s.add("/file.xml.gz", file{body: gzipN(t, xml("file-gz"), 1)})                                   // a .gz file, no Content-Encoding
	s.add("/served.xml", file{body: gzipN(t, xml("served-gzip"), 1), encoding: "gzip"})              // compressed on the fly
	s.add("/both.xml.gz", file{body: gzipN(t, xml("gz-and-content-encoding"), 2), encoding: "gzip"}) // a .gz, compressed again on the fly
	s.add("/claimed.xml.gz", file{body: gzipN(t, xml("gz-claimed-twice"), 1), encoding: "gzip"})     // a .gz whose Content-Encoding describes the file itself
	s.add("/index.xml", file{body: index(s.url("/plain.xml"), s.url("/file.xml.gz"), s.url("/served.xml"), s.url("/both.xml.gz"), s.url("/claimed.xml.gz"))})
	r := runWalk(t, s, Limits{}, s.url("/index.xml"))
	want := []string{s.url("/plain"), s.url("/file-gz"), s.url("/served-gzip"), s.url("/gz-and-content-encoding"), s.url("/gz-claimed-twice")}
	if r.err != nil || !slices.Equal(r.pages, want) || len(r.warnings) > 0 {
		t.Errorf("got pages %q, warnings %v, error %v; want %q and no warnings", r.pages, r.warnings, r.err, want)
	}
	if r.stats != (WalkStats{Roots: 1, RootsRead: 1, Files: 6, Pages: 5}) {
		t.Errorf("stats %+v", r.stats)
	}
}

func TestWalkLoopsAndDuplicates(t *testing.T) {
	s := newSite(t)
	s.add("/index.xml", file{body: index(s.url("/index.xml"), s.url("/a.xml"), s.url("/other-index.xml"), s.url("/a.xml"), s.url("/b.xml"))})
	s.add("/other-index.xml", file{body: index(s.url("/index.xml"), s.url("/c.xml"))})
	s.add("/a.xml", file{body: urlset(s.url("/1"), s.url("/2"))})
	s.add("/b.xml", file{body: urlset(s.url("/2"), strings.Replace(s.url("/3"), "http://", "HTTP://", 1), s.url("/3#fragment"), s.url("/1"))})
	s.add("/c.xml", file{body: urlset(s.url("/never"))})
	r := runWalk(t, s, Limits{}, s.url("/index.xml"), s.url("/index.xml"))
	want := []string{s.url("/1"), s.url("/2"), strings.Replace(s.url("/3"), "http://", "HTTP://", 1)}
	if r.err != nil || !slices.Equal(r.pages, want) {
		t.Errorf("got pages %q, error %v; want %q", r.pages, r.err, want)
	}
	wantRules := []Rule{RuleDuplicate, RuleDuplicate, RuleNestedIndex, RuleDuplicate}
	if !slices.Equal(r.rules(), wantRules) {
		t.Errorf("got warnings %v, want rules %v", r.warnings, wantRules)
	}
	for path, n := range map[string]int{"/index.xml": 1, "/a.xml": 1, "/other-index.xml": 1, "/b.xml": 1, "/c.xml": 0} {
		if got := s.hitsOf(path); got != n {
			t.Errorf("%s fetched %d times, want %d", path, got, n)
		}
	}
}

func TestWalkFailingChildren(t *testing.T) {
	s := newSite(t)
	s.add("/index.xml", file{body: index(s.url("/503.xml"), s.url("/missing.xml"), s.url("/ok.xml"), "http://127.0.0.1:1/unreachable.xml", s.url("/truncated.xml"), s.url("/html.xml"))})
	s.add("/503.xml", file{status: http.StatusServiceUnavailable, body: []byte("busy")})
	s.add("/ok.xml", file{body: urlset(s.url("/ok"))})
	s.add("/truncated.xml", file{body: urlset(s.url("/t1"), s.url("/t2"))[:150]})
	s.add("/html.xml", file{body: []byte("<html><body>not found</body></html>")})
	r := runWalk(t, s, Limits{}, s.url("/index.xml"))
	want := []string{s.url("/ok"), s.url("/t1")}
	if r.err != nil || !slices.Equal(r.pages, want) {
		t.Errorf("got pages %q, error %v; want %q", r.pages, r.err, want)
	}
	// The unreachable child is on another port: out of the index's scope.
	wantRules := []Rule{RuleScope, RuleFetch, RuleFetch, RuleMalformed, RuleFormat}
	if !slices.Equal(r.rules(), wantRules) {
		t.Errorf("got warnings %v, want rules %v", r.warnings, wantRules)
	}
	if r.stats.RootsRead != 1 {
		t.Errorf("stats %+v", r.stats)
	}
}

func TestWalkRoots(t *testing.T) {
	s := newSite(t)
	s.add("/a.xml", file{body: urlset(s.url("/a"))})
	s.add("/moved.xml", file{redirect: "/new/sitemap.xml"})
	s.add("/new/sitemap.xml", file{body: urlset(s.url("/new/page"), s.url("/old/page"))})
	r := runWalk(t, s, Limits{}, s.url("/missing.xml"), s.url("/a.xml"), s.url("/moved.xml"))
	// The scope of a redirected sitemap is where it was found.
	want := []string{s.url("/a"), s.url("/new/page")}
	if r.err != nil || !slices.Equal(r.pages, want) {
		t.Errorf("got pages %q, error %v; want %q", r.pages, r.err, want)
	}
	if !slices.Equal(r.rules(), []Rule{RuleFetch, RuleScope}) {
		t.Errorf("got warnings %v", r.warnings)
	}
	if r.stats != (WalkStats{Roots: 3, RootsRead: 2, Files: 2, Pages: 2, Warnings: 2}) {
		t.Errorf("stats %+v", r.stats)
	}
	if r := runWalk(t, s, Limits{}, s.url("/missing.xml")); r.stats.RootsRead != 0 || r.err != nil {
		t.Errorf("a root that cannot be fetched: stats %+v, error %v", r.stats, r.err)
	}
}

func TestWalkManyChildren(t *testing.T) {
	s := newSite(t)
	var children []string
	for i := range DefaultMaxChildren + 1 {
		p := fmt.Sprintf("/s/%d.xml", i)
		s.add(p, file{body: urlset(s.url(fmt.Sprintf("/s/page-%d", i)))})
		children = append(children, s.url(p))
	}
	s.add("/index.xml", file{body: index(children...)})
	r := runWalk(t, s, Limits{}, s.url("/index.xml"))
	if r.err != nil || len(r.pages) != DefaultMaxChildren || r.pages[DefaultMaxChildren-1] != s.url("/s/page-999") {
		t.Errorf("got %d pages (error %v), want the %d of the first children", len(r.pages), r.err, DefaultMaxChildren)
	}
	if len(r.warnings) != 1 || r.warnings[0].Rule != RuleMaxChildren || r.warnings[0].URL != children[DefaultMaxChildren] || r.warnings[0].Limit != DefaultMaxChildren {
		t.Errorf("got warnings %v", r.warnings)
	}
	if s.hitsOf("/s/1000.xml") != 0 {
		t.Error("the child past the cap was fetched")
	}
}

func TestWalkURLCap(t *testing.T) {
	s := newSite(t)
	var locs []string
	for i := range DefaultMaxURLs + 1 {
		locs = append(locs, s.url(fmt.Sprintf("/p/%d", i)))
	}
	s.add("/big.xml.gz", file{body: gzipN(t, urlset(locs...), 1)})
	r := runWalk(t, s, Limits{}, s.url("/big.xml.gz"))
	if r.err != nil || !slices.Equal(r.pages, locs[:DefaultMaxURLs]) {
		t.Errorf("got %d pages (error %v), want the first %d", len(r.pages), r.err, DefaultMaxURLs)
	}
	if len(r.warnings) != 1 || r.warnings[0].Rule != RuleMaxURLs || r.warnings[0].URL != locs[DefaultMaxURLs] {
		t.Errorf("got warnings %v", r.warnings)
	}
}

func TestWalkByteCap(t *testing.T) {
	s := newSite(t)
	// Entries of 256 bytes until the file is just over 10 MiB.
	var b bytes.Buffer
	b.WriteString("<urlset>\n")
	var want []string
	for i := 0; b.Len() <= DefaultMaxBytes; i++ {
		loc := s.url(fmt.Sprintf("/p/%d/", i))
		entry := "<url><loc>" + loc + strings.Repeat("x", 256-len(loc)-23) + "</loc></url>\n"
		if b.Len()+len(entry)-1 <= DefaultMaxBytes { // "</url>" ends within the cap
			want = append(want, loc+strings.Repeat("x", 256-len(loc)-23))
		}
		b.WriteString(entry)
	}
	b.WriteString("</urlset>\n")
	s.add("/over.xml", file{body: b.Bytes()})
	r := runWalk(t, s, Limits{}, s.url("/over.xml"))
	if r.err != nil || !slices.Equal(r.pages, want) {
		t.Errorf("got %d pages (error %v), want %d", len(r.pages), r.err, len(want))
	}
	if len(r.warnings) != 1 || r.warnings[0].Rule != RuleMaxBytes || r.warnings[0].Limit != DefaultMaxBytes {
		t.Errorf("got warnings %v", r.warnings)
	}
}

func TestWalkStops(t *testing.T) {
	s := newSite(t)
	s.add("/a.xml", file{body: urlset(s.url("/1"), s.url("/2"), s.url("/3"))})
	s.add("/b.xml", file{body: urlset(s.url("/4"))})
	stop := errors.New("enough")
	var got []string
	w := Walker{Fetch: s.fetch}
	_, err := w.Walk(context.Background(), []string{s.url("/a.xml"), s.url("/b.xml")}, func(e Entry) error {
		got = append(got, e.Loc)
		if len(got) == 2 {
			return stop
		}
		return nil
	})
	if err != stop || len(got) != 2 || s.hitsOf("/b.xml") != 0 {
		t.Errorf("yield's error: got %v after %q, /b.xml fetched %d times", err, got, s.hitsOf("/b.xml"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Walk(ctx, []string{s.url("/a.xml")}, func(Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled walk: got %v", err)
	}
}
