package crawler

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage/warc/warctest"
)

// TestCrawlArchivesAsReceived crawls a site that answers gzip, sends
// ETags and serves one body at two URLs, then crawls it again with
// --refresh, and checks the WARC files with gowarc (warctest.Check): the
// gzip page is stored gzip with its Content-Encoding, robots.txt is
// archived, the duplicate body and the 304s are revisits whose originals
// are in the files, and every CDXJ line leads to its record.
func TestCrawlArchivesAsReceived(t *testing.T) {
	home := []byte(`<html><title>Home</title><a href="/a">a</a><a href="/b">b</a></html>`)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(home)
	zw.Close()
	s := newSite(t)
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(zipped.Bytes())
				return
			}
			w.Write(home)
			return
		}
		s.serve(w, r)
	})
	s.set("/", page{})
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nAllow: /\n"})
	s.set("/a", page{ctype: "text/plain", body: "one body at two URLs"})
	s.set("/b", page{ctype: "text/plain", body: "one body at two URLs"})
	cfg := testConfig(t, s.URL+"/")
	cfg.Fetch.Workers = 1 // /a before /b, whatever the scheduling
	cfg.Output.WARC = t.TempDir()
	runCrawl(t, cfg)
	c, err := New(cfg, Options{Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	key, _ := frontier.Canonicalize(s.URL+"/b", 0)
	if p, _, _ := c.pages.Get(key.Key); p.WARC.TargetURI != s.URL+"/a" {
		t.Errorf("/b's page record refers to %+v, want /a's record", p.WARC)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	recs := warctest.Check(t, cfg.Output.WARC)
	kinds := map[string][]string{}
	for _, r := range recs {
		if r.Type != "response" && r.Type != "revisit" {
			continue
		}
		path := strings.TrimPrefix(r.Get("WARC-Target-URI"), s.URL)
		kind := r.Type
		if p := r.Get("WARC-Profile"); p != "" {
			kind = p[strings.LastIndex(p, "/")+1:]
		}
		kinds[path] = append(kinds[path], kind)
		if path == "/" && r.Type == "response" &&
			(!bytes.Equal(r.Payload, zipped.Bytes()) || r.HTTPHeader.Get("Content-Encoding") != "gzip") {
			t.Errorf("the gzip page stored as %q, Content-Encoding %q; want it as sent", r.Payload, r.HTTPHeader.Get("Content-Encoding"))
		}
	}
	for path, want := range map[string]string{
		"/robots.txt": "response", // asked once: its answer is kept for a day
		"/":           "response server-not-modified",
		"/a":          "response identical-payload-digest",
		"/b":          "identical-payload-digest identical-payload-digest",
	} {
		if got := strings.Join(kinds[path], " "); got != want {
			t.Errorf("%s archived as %q, want %q", path, got, want)
		}
	}
}

// TestWARCTurnedOnLater crawls without a WARC, then again with one
// (--refresh on the same state_dir): the page with an ETag, whose body no
// WARC file holds, is asked for without validators, so that the archive
// gets its body rather than a 304 with no original to refer to.
func TestWARCTurnedOnLater(t *testing.T) {
	s := newSite(t)
	var conditional int
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && r.Header.Get("If-None-Match") == `"v1"` {
			conditional++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		s.serve(w, r)
	})
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.set("/", page{body: `<title>Home</title>`, headers: map[string]string{"ETag": `"v1"`}})
	cfg := testConfig(t, s.URL+"/")
	cfg.Fetch.Workers = 1
	runCrawl(t, cfg)

	cfg.Output.WARC = t.TempDir()
	for pass, want := range []int{0, 1} { // the first pass with a WARC may not ask, the second may
		if _, err := crawlWith(t, cfg, Options{Refresh: true}); err != nil {
			t.Fatal(err)
		}
		if conditional != want {
			t.Errorf("pass %d with a WARC: %d conditional requests so far, want %d", pass+1, conditional, want)
		}
	}
	var kinds []string
	for _, r := range warctest.Check(t, cfg.Output.WARC) {
		if r.Get("WARC-Target-URI") == s.URL+"/" && r.Type != "request" {
			kinds = append(kinds, r.Type)
		}
	}
	if got := strings.Join(kinds, " "); got != "response revisit" {
		t.Errorf("/ archived as %q, want a response, then a revisit of it", got)
	}
}

// TestWARCOffForARun crawls with a WARC, then without one while the page
// changes, then with the WARC again: the third run must not take the
// page's new validators to a 304 revisit of the first run's record, whose
// body is the old one (replayed, the third capture showed the first
// body). The page is asked for without validators, and archived whole.
func TestWARCOffForARun(t *testing.T) {
	s := newSite(t)
	var mu sync.Mutex
	version := "v1"
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			s.serve(w, r)
			return
		}
		mu.Lock()
		v := version
		mu.Unlock()
		w.Header().Set("ETag", `"`+v+`"`)
		if r.Header.Get("If-None-Match") == `"`+v+`"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<title>" + v + "</title>"))
	})
	s.set("/robots.txt", page{ctype: "text/plain"})
	cfg := testConfig(t, s.URL+"/")
	cfg.Fetch.Workers = 1
	dir := t.TempDir()
	for _, run := range []struct {
		warc    string
		version string
	}{{dir, "v1"}, {"", "v2"}, {dir, "v2"}} {
		mu.Lock()
		version = run.version
		mu.Unlock()
		cfg.Output.WARC = run.warc
		if _, err := crawlWith(t, cfg, Options{Refresh: true}); err != nil {
			t.Fatal(err)
		}
	}
	var last warctest.Record
	for _, r := range warctest.Check(t, dir) {
		if r.Get("WARC-Target-URI") == s.URL+"/" && (r.Type == "response" || r.Type == "revisit") {
			last = r
		}
	}
	if last.Type != "response" || !bytes.Contains(last.Payload, []byte("v2")) {
		t.Errorf("the last capture of / is a %s %s of %s (payload %q); want a response holding v2",
			last.Type, last.Get("WARC-Profile"), last.Get("WARC-Refers-To-Date"), last.Payload)
	}
}
