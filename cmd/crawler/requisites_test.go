package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/politecrawl/crawler/storage/report"
)

// TestDiscoverChecksRequisites: discover keeps no requisites but checks
// them, so a missing image, stylesheet or script of the crawl's host is in
// the report's broken table, each asked once without a body kept (HEAD);
// one on another host is asked only with --check-external.
func TestDiscoverChecksRequisites(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	count := func(r *http.Request) {
		mu.Lock()
		asked[r.Host+" "+r.Method+" "+r.URL.Path]++
		mu.Unlock()
	}
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count(r)
		if r.URL.Path == "/ok.png" {
			w.Header().Set("Content-Type", "image/png")
			return
		}
		http.NotFound(w, r) // robots.txt too: everything allowed
	}))
	t.Cleanup(cdn.Close)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count(r)
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html><head><link rel="stylesheet" href="/missing.css"><script src="/missing.js"></script></head>
<body><img src="/missing.png" alt="gone"><img src="/ok.png" alt="ok"><img src="` + cdn.URL + `/gone.png" alt="cdn">
<img src="` + cdn.URL + `/ok.png"></body></html>`))
		case "/ok.png":
			w.Header().Set("Content-Type", "image/png")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)

	for _, external := range []bool{false, true} {
		mu.Lock()
		clear(asked)
		mu.Unlock()
		dir := t.TempDir()
		urls, links := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "links.jsonl")
		args := []string{"discover", "--delay", "0", "--retries", "0", "--out", urls, "--links", links}
		if external {
			args = append(args, "--check-external")
		}
		if _, stderr, code := runCmd(t, "", append(args, site.URL+"/")...); code != 0 {
			t.Fatalf("discover: exit %d:\n%s", code, stderr)
		}
		out, stderr, code := runCmd(t, "", "report", "--urls", urls, "--links", links, "--format", "json")
		if code != 0 {
			t.Fatalf("report: exit %d:\n%s", code, stderr)
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("report: %v", err)
		}
		var broken []string
		for _, b := range rep.Broken {
			broken = append(broken, b.URL)
			if len(b.Inlinks) != 1 || b.Inlinks[0].From != site.URL+"/" {
				t.Errorf("check_external %v: inlinks of %s: %+v; want the home page", external, b.URL, b.Inlinks)
			}
		}
		want := []string{site.URL + "/missing.css", site.URL + "/missing.js", site.URL + "/missing.png"}
		if external {
			want = append(want, cdn.URL+"/gone.png")
		}
		sort.Strings(want)
		if strings.Join(broken, " ") != strings.Join(want, " ") {
			t.Errorf("check_external %v: broken %v; want %v", external, broken, want)
		}
		mu.Lock()
		siteHost, cdnHost := strings.TrimPrefix(site.URL, "http://"), strings.TrimPrefix(cdn.URL, "http://")
		for _, p := range []string{"/missing.css", "/missing.js", "/missing.png", "/ok.png"} {
			if asked[siteHost+" HEAD "+p] != 1 || asked[siteHost+" GET "+p] != 0 {
				t.Errorf("check_external %v: %s asked %d times with HEAD, %d with GET; want once, with HEAD",
					external, p, asked[siteHost+" HEAD "+p], asked[siteHost+" GET "+p])
			}
		}
		cdnAsked := 0
		for k, n := range asked {
			if strings.HasPrefix(k, cdnHost+" ") && !strings.HasSuffix(k, "/robots.txt") {
				cdnAsked += n
			}
		}
		if want := map[bool]int{false: 0, true: 2}[external]; cdnAsked != want {
			t.Errorf("check_external %v: the other host's images asked %d times; want %d (%v)", external, cdnAsked, want, asked)
		}
		mu.Unlock()
	}
}
