package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/politecrawl/crawler"
)

// runSitemapCmd runs `crawler sitemap args...` and returns stdout, stderr
// and the exit code.
func runSitemapCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"sitemap"}, args...), strings.NewReader(""), &out, &errOut)
	code := exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sitemapSite serves scripted sitemaps and records each request's
// User-Agent.
type sitemapSite struct {
	srv    *httptest.Server
	mu     sync.Mutex
	agents []string
	routes map[string]func(w http.ResponseWriter, r *http.Request)
}

func newSitemapSite(t *testing.T) *sitemapSite {
	s := &sitemapSite{routes: map[string]func(http.ResponseWriter, *http.Request){}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.agents = append(s.agents, r.Header.Get("User-Agent"))
		h := s.routes[r.URL.Path]
		s.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// file serves body with the given Content-Encoding ("" for none).
func (s *sitemapSite) file(path string, body []byte, encoding string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[path] = func(w http.ResponseWriter, r *http.Request) {
		if encoding != "" {
			w.Header().Set("Content-Encoding", encoding)
		}
		w.Write(body)
	}
}

func (s *sitemapSite) handle(path string, h func(http.ResponseWriter, *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[path] = h
}

func (s *sitemapSite) url(path string) string { return s.srv.URL + path }

func urlsetOf(locs ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2024-05-06</lastmod><changefreq>daily</changefreq><priority>0.7</priority></url>\n", l)
	}
	b.WriteString("</urlset>")
	return []byte(b.String())
}

func indexOf(locs ...string) []byte {
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>\n", l)
	}
	b.WriteString("</sitemapindex>")
	return []byte(b.String())
}

func TestSitemapCommand(t *testing.T) {
	s := newSitemapSite(t)
	s.file("/index.xml", indexOf(s.url("/a.xml"), s.url("/b.xml.gz"), s.url("/c.xml.gz"), s.url("/d.xml")), "")
	s.file("/a.xml", urlsetOf(s.url("/a1"), s.url("/a2")), "")
	s.file("/b.xml.gz", gz(t, urlsetOf(s.url("/b1"))), "")            // a .gz file
	s.file("/c.xml.gz", gz(t, gz(t, urlsetOf(s.url("/c1")))), "gzip") // a .gz served with Content-Encoding: gzip
	s.file("/d.xml", gz(t, urlsetOf(s.url("/d1"), s.url("/a1"))), "gzip")
	out, errOut, code := runSitemapCmd(t, s.url("/index.xml"))
	want := strings.Join([]string{s.url("/a1"), s.url("/a2"), s.url("/b1"), s.url("/c1"), s.url("/d1")}, "\n") + "\n"
	if out != want || errOut != "" || code != 0 {
		t.Errorf("got exit %d, stdout\n%s\nstderr\n%s\nwant stdout\n%s", code, out, errOut, want)
	}
	for _, ua := range s.agents {
		if want := crawler.DefaultConfig().UserAgent; ua != want || !strings.HasPrefix(ua, "politecrawl/1.0 ") {
			t.Errorf("User-Agent %q; want crawl's, %q", ua, want)
		}
	}

	out, errOut, code = runSitemapCmd(t, "--json", "--agent", "TestBot/2.0", s.url("/a.xml"))
	var got []sitemapJSON
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var e sitemapJSON
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	wantJSON := sitemapJSON{Loc: s.url("/a1"), Lastmod: "2024-05-06", ChangeFreq: "daily", Priority: 0.7, Sitemap: s.url("/a.xml")}
	if len(got) != 2 || got[0] != wantJSON || errOut != "" || code != 0 || strings.Count(out, "\n") != 2 {
		t.Errorf("--json: got exit %d, stdout\n%s\nstderr\n%s", code, out, errOut)
	}
	if ua := s.agents[len(s.agents)-1]; ua != "TestBot/2.0" {
		t.Errorf("--agent: sent %q", ua)
	}
}

func TestSitemapCommandWarnings(t *testing.T) {
	s := newSitemapSite(t)
	s.file("/shop/sitemap.xml", urlsetOf(s.url("/shop/a"), s.url("/other/b"), "ftp://x/c", s.url("/shop/d")), "")
	s.file("/index.xml", indexOf(s.url("/shop/sitemap.xml"), s.url("/broken.xml"), s.url("/missing.xml"), s.url("/br.xml")), "")
	s.handle("/broken.xml", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", http.StatusBadGateway) })
	s.file("/br.xml", []byte("\x1b\x00brotli"), "br")
	out, errOut, code := runSitemapCmd(t, "--delay", "1ms", s.url("/index.xml"))
	if want := s.url("/shop/a") + "\n" + s.url("/shop/d") + "\n"; out != want || code != 0 {
		t.Errorf("got exit %d, stdout\n%s\nwant\n%s", code, out, want)
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	wantParts := []string{
		"warning: " + s.url("/shop/sitemap.xml") + ": scope: " + s.url("/other/b") + ": not under",
		"warning: " + s.url("/shop/sitemap.xml") + ": scheme: ftp://x/c:",
		"warning: " + s.url("/broken.xml") + ": fetch: " + s.url("/broken.xml") + ": HTTP status 502 Bad Gateway",
		"warning: " + s.url("/missing.xml") + ": fetch: " + s.url("/missing.xml") + ": HTTP status 404 Not Found",
		"warning: " + s.url("/br.xml") + ": fetch: " + s.url("/br.xml") + `: unsupported Content-Encoding "br"`,
	}
	if len(lines) != len(wantParts) {
		t.Fatalf("got stderr\n%s\nwant %d lines", errOut, len(wantParts))
	}
	for i, want := range wantParts {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("stderr line %d:\n%s\nwant it to start with\n%s", i+1, lines[i], want)
		}
	}
}

func TestSitemapCommandExitCodes(t *testing.T) {
	s := newSitemapSite(t)
	s.file("/empty.xml", []byte(`<urlset/>`), "")
	s.file("/html", []byte(`<html>no</html>`), "")
	for _, c := range []struct {
		args []string
		code int
		err  string // in stderr
	}{
		{[]string{s.url("/missing.xml")}, 1, "no sitemap could be fetched"},
		{[]string{s.url("/missing.xml"), s.url("/empty.xml")}, 0, "404"},
		{[]string{s.url("/html")}, 0, "not a sitemap"},
		{[]string{"http://127.0.0.1:1/refused.xml"}, 1, "no sitemap could be fetched"},
		{[]string{}, 2, "no sitemap URL given"},
		{[]string{"/relative.xml"}, 2, "not an http or https URL"},
		{[]string{"ftp://example.com/s.xml"}, 2, "not an http or https URL"},
		{[]string{"--max-bytes", "lots", s.url("/empty.xml")}, 2, "invalid size"},
		{[]string{"--max-bytes", "0", s.url("/empty.xml")}, 2, "--max-bytes: must be > 0"},
		{[]string{"--max-urls", "-1", s.url("/empty.xml")}, 2, "--max-urls"},
		{[]string{"--max-children", "x", s.url("/empty.xml")}, 2, "max-children"},
		{[]string{"--timeout", "0s", s.url("/empty.xml")}, 2, "--timeout"},
		{[]string{"--delay", "-1s", s.url("/empty.xml")}, 2, "--delay"},
		{[]string{"--bogus", s.url("/empty.xml")}, 2, "bogus"},
	} {
		out, errOut, code := runSitemapCmd(t, c.args...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.err) {
			t.Errorf("sitemap %q: got exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errOut, c.code, c.err)
		}
	}
	out, _, code := runSitemapCmd(t, "-h")
	if code != 0 || !strings.Contains(out, "--json") || !strings.Contains(out, "max-bytes") {
		t.Errorf("-h: exit %d, %q", code, out)
	}
}

func TestSitemapCommandCaps(t *testing.T) {
	s := newSitemapSite(t)
	var locs []string
	for i := range 5 {
		locs = append(locs, s.url(fmt.Sprintf("/p%d", i)))
	}
	s.file("/five.xml", urlsetOf(locs...), "")
	s.file("/index.xml", indexOf(s.url("/five.xml"), s.url("/x.xml"), s.url("/y.xml")), "")
	out, errOut, code := runSitemapCmd(t, "--max-urls", "3", "--max-children", "1", s.url("/index.xml"))
	if want := strings.Join(locs[:3], "\n") + "\n"; out != want || code != 0 ||
		!strings.Contains(errOut, ": max_children: "+s.url("/x.xml")) || !strings.Contains(errOut, ": max_urls: "+locs[3]) {
		t.Errorf("got exit %d, stdout\n%s\nstderr\n%s", code, out, errOut)
	}

	// An endless body: the command reads up to the cap, warns and goes on,
	// whether or not the body is compressed on the fly.
	var written atomic.Int64
	endless := func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<urlset><url><loc>" + s.url("/first") + "</loc></url>"))
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		for i := 0; i < 16<<10; i++ { // 1 GiB
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}
	s.handle("/endless.xml", endless)
	s.handle("/endless-gzip.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		defer zw.Close()
		endless(&gzipResponse{w, zw}, r)
	})
	for _, path := range []string{"/endless.xml", "/endless-gzip.xml"} {
		written.Store(0)
		out, errOut, code = runSitemapCmd(t, "--max-bytes", "1MiB", s.url(path))
		if out != s.url("/first")+"\n" || code != 0 || !strings.Contains(errOut, "max_bytes") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: got exit %d, stdout\n%s\nstderr\n%s", path, code, out, errOut)
		}
		// The server may have filled socket buffers past the cap; not a
		// gigabyte.
		if n := written.Load(); n > 256<<20 {
			t.Errorf("%s: the server wrote %d bytes before the client hung up", path, n)
		}
	}
}

// gzipResponse compresses what a handler writes.
type gzipResponse struct {
	http.ResponseWriter
	zw *gzip.Writer
}

func (g *gzipResponse) Write(b []byte) (int, error) { return g.zw.Write(b) }

func TestSitemapCommandTimeout(t *testing.T) {
	s := newSitemapSite(t)
	release := make(chan struct{})
	s.handle("/slow.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<urlset><url><loc>" + s.url("/slow") + "</loc></url>"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	s.file("/ok.xml", urlsetOf(s.url("/ok")), "")
	s.file("/index.xml", indexOf(s.url("/slow.xml"), s.url("/ok.xml")), "")
	out, errOut, code := runSitemapCmd(t, "--timeout", "1s", s.url("/index.xml"))
	// The entries read before the timeout are kept.
	if out != s.url("/slow")+"\n"+s.url("/ok")+"\n" || code != 0 || !strings.Contains(errOut, "fetch: "+s.url("/slow.xml")) {
		t.Errorf("got exit %d, stdout\n%s\nstderr\n%s", code, out, errOut)
	}
}

func TestSitemapCommandRedirects(t *testing.T) {
	s := newSitemapSite(t)
	for i := range 7 {
		s.handle(fmt.Sprintf("/r%d", i), func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, fmt.Sprintf("/r%d", i+1), http.StatusFound)
		})
	}
	s.handle("/moved.xml", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/r5", http.StatusMovedPermanently) })
	s.file("/r7", urlsetOf(s.url("/page")), "")
	out, errOut, code := runSitemapCmd(t, s.url("/r0"), s.url("/moved.xml"))
	if out != s.url("/page")+"\n" || code != 0 || !strings.Contains(errOut, "stopped after 5 redirects") {
		t.Errorf("got exit %d, stdout\n%s\nstderr\n%s", code, out, errOut)
	}
}

func TestSitemapFetcherDelay(t *testing.T) {
	f := &sitemapFetcher{delay: time.Hour, last: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.wait(ctx); err != context.Canceled {
		t.Errorf("wait with a delay to go and a canceled context: %v", err)
	}
	f = &sitemapFetcher{delay: time.Hour}
	if err := f.wait(ctx); err != nil || f.last.IsZero() {
		t.Errorf("the first request waits for nothing: %v", err)
	}
}

// A location with a control character, in the fragment too, written raw
// or as a character reference, is dropped with a warning: neither the
// listing (plain or --json) nor the warnings carry a C0 byte or DEL.
func TestSitemapCommandPrintsNoControlCharacters(t *testing.T) {
	s := newSitemapSite(t)
	s.file("/s.xml", urlsetOf(
		s.url("/ok"),
		s.url("/a#\x1b[2J"),
		s.url("/b#&#x1b;]0;title&#x07;"),
		s.url("/c\rd"),
		s.url("/e?\x7f"),
	), "")
	for _, args := range [][]string{{s.url("/s.xml")}, {"--json", s.url("/s.xml")}} {
		stdout, stderr, code := runSitemapCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d; stderr:\n%s", args, code, stderr)
		}
		for name, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if i := strings.IndexFunc(text, func(r rune) bool { return (r < 0x20 && r != '\n') || r == 0x7f }); i >= 0 {
				t.Errorf("%v: %s holds control character %q: %q", args, name, text[i], text)
			}
		}
		if n := strings.Count(stdout, "\n"); n != 1 || !strings.Contains(stdout, s.url("/ok")) {
			t.Errorf("%v: stdout %q, want only %s", args, stdout, s.url("/ok"))
		}
		if n := strings.Count(stderr, ": control: "); n != 4 {
			t.Errorf("%v: %d control warnings, want 4; stderr:\n%s", args, n, stderr)
		}
	}
}

// C1 controls (U+009B, an 8-bit CSI), bidi overrides and isolates and
// the line separators a sitemap's <loc> holds reach no output raw: the
// URL lines percent-encode them, --json escapes them (issue 23, item 7).
func TestSitemapCommandPrintsNoC1OrBidi(t *testing.T) {
	s := newSitemapSite(t)
	s.file("/x/s.xml", urlsetOf(
		s.url("/x/a\u009b2J"),
		s.url("/x/b\u202eexe.txt"),
		s.url("/x/c\u2066d\u2028e\u0085"),
		s.url("/out-of-scope/\u009b2J\u202e"), // a warning quotes it
	), "")
	for _, args := range [][]string{{s.url("/x/s.xml")}, {"--json", s.url("/x/s.xml")}} {
		stdout, stderr, code := runSitemapCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d; stderr:\n%s", args, code, stderr)
		}
		for name, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if i := strings.IndexAny(text, "\u009b\u202e\u2066\u2028\u0085"); i >= 0 {
				t.Errorf("%v: %s holds a control raw at %d: %q", args, name, i, text)
			}
		}
		if n := strings.Count(stdout, "\n"); n != 3 {
			t.Errorf("%v: %d lines, want 3: %q", args, n, stdout)
		}
		if args[0] != "--json" && !strings.Contains(stdout, s.url("/x/a%C2%9B2J")) {
			t.Errorf("stdout %q lacks /x/a%%C2%%9B2J", stdout)
		}
		if !strings.Contains(stderr, "out-of-scope") {
			t.Errorf("stderr %q lacks the warning", stderr)
		}
		if args[0] == "--json" && !strings.Contains(stdout, `/b\u202eexe.txt`) {
			t.Errorf("--json stdout %q lacks /b\\u202eexe.txt", stdout)
		}
	}
}
