package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// auditSite serves a site with a sitemap, a redirect, a broken link and
// a page only the sitemap lists.
func auditSite(t *testing.T) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nDisallow: /secret\nSitemap: %s/sitemap.xml\n", srv.URL)
		case "/sitemap.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%[1]s/</loc></url><url><loc>%[1]s/orphan</loc></url><url><loc>%[1]s/secret</loc></url></urlset>`, srv.URL)
		case "/":
			fmt.Fprint(w, `<html><head><title>Home</title></head><a href="/a">A</a> <a href="/gone">the gone page</a> <a href="/moved">moved</a> <a href="/secret">s</a></html>`)
		case "/a":
			fmt.Fprint(w, `<html><head><title>Home</title><meta name="robots" content="noindex"></head><a href="/">home</a></html>`)
		case "/orphan":
			fmt.Fprint(w, `<html><head><title>Orphan</title></head>alone</html>`)
		case "/moved":
			http.Redirect(w, r, "/a", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// discover writes the inventory and link graph of a site, and report
// makes the audit of them.
func TestReportOfDiscover(t *testing.T) {
	srv := auditSite(t)
	dir := t.TempDir()
	urls, links := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "links.jsonl")
	if _, stderr, code := runCmd(t, "", "discover", "--delay", "0", "--out", urls, "--links", links, srv.URL+"/"); code != 0 {
		t.Fatalf("discover: exit %d:\n%s", code, stderr)
	}
	out, stderr, code := runCmd(t, "", "report", "--urls", urls, "--links", links, "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d:\n%s", code, stderr)
	}
	var rep struct {
		Overview struct {
			URLs       int `json:"urls"`
			Disallowed int `json:"disallowed"`
		} `json:"overview"`
		Broken []struct {
			URL     string `json:"url"`
			Status  int    `json:"status"`
			Inlinks []struct{ From, Anchor string }
		} `json:"broken"`
		Redirects []struct {
			URL, FinalURL string
			FinalStatus   int `json:"final_status"`
		} `json:"redirects"`
		Orphans []string `json:"orphans"`
		Noindex []string `json:"noindex"`
		Titles  struct {
			Duplicates []struct {
				Title string
				URLs  []string
			}
		} `json:"titles"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	u := srv.URL
	if len(rep.Broken) != 1 || rep.Broken[0].URL != u+"/gone" || rep.Broken[0].Status != 404 ||
		len(rep.Broken[0].Inlinks) != 1 || rep.Broken[0].Inlinks[0].From != u+"/" || rep.Broken[0].Inlinks[0].Anchor != "the gone page" {
		t.Errorf("broken %+v, want /gone linked from / as \"the gone page\"", rep.Broken)
	}
	if len(rep.Redirects) != 1 || rep.Redirects[0].URL != u+"/moved" || rep.Redirects[0].FinalStatus != 200 {
		t.Errorf("redirects %+v, want /moved to a 200", rep.Redirects)
	}
	if strings.Join(rep.Orphans, " ") != u+"/orphan" {
		t.Errorf("orphans %q, want /orphan", rep.Orphans)
	}
	if strings.Join(rep.Noindex, " ") != u+"/a" {
		t.Errorf("noindex %q, want /a", rep.Noindex)
	}
	if len(rep.Titles.Duplicates) != 1 || rep.Titles.Duplicates[0].Title != "Home" {
		t.Errorf("duplicate titles %+v, want Home", rep.Titles.Duplicates)
	}
	if rep.Overview.Disallowed != 1 {
		t.Errorf("overview %+v, want /secret disallowed", rep.Overview)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("warnings on a finished crawl's outputs:\n%s", stderr)
	}
}

// The config names the files; a missing link graph is a warning, and the
// rest of the report is made; bad usage exits 2.
func TestReportUsage(t *testing.T) {
	dir := t.TempDir()
	urls := filepath.Join(dir, "u.jsonl")
	if err := os.WriteFile(urls, []byte(`{"url":"https://ex.test/","status":404}`+"\n"+`{"url":"https://ex.test/x","sta`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "c.yaml", fmt.Sprintf("output:\n  urls: %s\n  links: %s\n", urls, filepath.Join(dir, "missing.jsonl")))
	out, stderr, code := runCmd(t, "", "report", "-c", cfg)
	if code != 0 || !strings.Contains(out, "https://ex.test/") || !strings.Contains(stderr, "missing.jsonl: no such file") ||
		!strings.Contains(stderr, "u.jsonl: skipped 1 malformed line (line 2)") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	csvDir := filepath.Join(dir, "csv")
	if _, stderr, code := runCmd(t, "", "report", "--urls", urls, "--format", "csv", "--out", csvDir); code != 0 {
		t.Errorf("csv: exit %d: %s", code, stderr)
	} else if _, err := os.Stat(filepath.Join(csvDir, "broken.csv")); err != nil {
		t.Error(err)
	}
	for _, args := range [][]string{
		{"report"},
		{"report", "--urls", urls, "--format", "xml"},
		{"report", "--urls", urls, "--format", "csv"},
		{"report", "--urls", urls, "extra"},
		{"report", "-c", writeFile(t, "bad.yaml", "output:\n  url: x\n")},
	} {
		if _, stderr, code := runCmd(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2: %s", args, code, stderr)
		}
	}
	if _, _, code := runCmd(t, "", "report", "--urls", filepath.Join(dir, "none")); code != 1 {
		t.Errorf("a missing inventory: exit %d, want 1", code)
	}
	if out, _, code := runCmd(t, "", "help", "report"); code != 0 || !strings.Contains(out, "-compare OLD_URLS_FILE") {
		t.Errorf("help report: exit %d:\n%s", code, out)
	}
}

// A page whose every fact is over a megabyte (title, description, h1,
// canonical, hreflang, a link) is still in the report: each fact is cut
// to its cap, so no line is over what the report reads (issue 23.4).
func TestReportOfHugePage(t *testing.T) {
	long := strings.Repeat("Tïtle ", 200_000) // 1.4 MB
	href := "/x?" + strings.Repeat("q", 1_100_000)
	var alts strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&alts, `<link rel="alternate" hreflang="l%d" href="/alt/%d">`, i, i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><head><title>Home</title></head><a href="/huge">one</a> <a href="/huge2">two</a></html>`)
		case "/huge", "/huge2":
			fmt.Fprintf(w, `<html><head><title>%s</title><meta name="description" content="%s"><link rel="canonical" href="%s">%s</head>`+
				`<body><h1>%s</h1><a href="%s">long</a></body></html>`, long, long, href, alts.String(), long, href)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	urls, links := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "links.jsonl")
	if _, stderr, code := runCmd(t, "", "discover", "--delay", "0", "--max-depth", "1", "--out", urls, "--links", links, srv.URL+"/"); code != 0 {
		t.Fatalf("discover: exit %d:\n%s", code, stderr)
	}
	out, stderr, code := runCmd(t, "", "report", "--urls", urls, "--links", links, "--format", "json")
	if code != 0 || strings.Contains(stderr, "malformed") {
		t.Fatalf("report: exit %d:\n%s", code, stderr)
	}
	var rep struct {
		Overview struct {
			PagesHTML int `json:"pages_html"`
		} `json:"overview"`
		Titles struct {
			Duplicates []struct {
				Title string
				URLs  []string
			}
		} `json:"titles"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	d := rep.Titles.Duplicates
	if rep.Overview.PagesHTML != 3 || len(d) != 1 || strings.Join(d[0].URLs, " ") != srv.URL+"/huge "+srv.URL+"/huge2" ||
		!strings.HasPrefix(long, d[0].Title) || len(d[0].Title) < 1000 {
		t.Errorf("pages_html %d, duplicate titles %d %.80q, want /huge and /huge2 with the title cut", rep.Overview.PagesHTML, len(d), d)
	}
}

// manyLines gives n bytes of inventory lines, and calls at once it has
// given half of them.
type manyLines struct {
	block    []byte
	off, n   int
	at       func()
	afterHit int // bytes given after at was called
}

func (m *manyLines) Read(p []byte) (int, error) {
	if m.off >= m.n {
		return 0, io.EOF
	}
	if m.at == nil {
		defer func(off int) { m.afterHit += m.off - off }(m.off)
	} else if m.off >= m.n/2 {
		m.at()
		m.at = nil
	}
	k := copy(p[:min(len(p), m.n-m.off)], m.block[m.off%len(m.block):])
	m.off += k
	return k, nil
}

// The first signal stops a report reading a large inventory at once,
// with an error and nothing written (issue 23.6: a 359 MB inventory ran on
// to its end).
func TestReportStopsOnSignal(t *testing.T) {
	line := []byte(`{"url":"http://h.test/p","status":200,"content_type":"text/html","title":"A page"}` + "\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &manyLines{block: bytes.Repeat(line, 1000), n: 64 << 20, at: cancel}
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"report", "--urls", "-", "--format", "json"}, in, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "stopped by signal") || stdout.Len() > 0 {
		t.Errorf("err %v, stdout %d bytes; want stopped by signal, nothing written", err, stdout.Len())
	}
	if in.afterHit > 8<<20 {
		t.Errorf("read %d MB more of the inventory after the signal", in.afterHit>>20)
	}
}

// enteredReader closes entered when its first Read begins.
type enteredReader struct {
	r       io.Reader
	entered chan struct{}
	once    sync.Once
}

func (e *enteredReader) Read(p []byte) (int, error) {
	e.once.Do(func() { close(e.entered) })
	return e.r.Read(p)
}

// The first signal stops a report reading its inventory from a pipe that
// sends nothing (--urls -): the read blocked in the pipe held the signal
// until the next byte or the pipe's end came.
func TestReportStdinStopsOnSignal(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	in := &enteredReader{r: pr, entered: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-in.entered
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		done <- run(ctx, []string{"report", "--urls", "-"}, in, &stdout, &stderr)
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stopped by signal") {
			t.Errorf("err %v; want stopped by signal", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("report still reading an idle stdin 10 s after the signal")
	}
}
