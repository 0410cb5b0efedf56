package crawler

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRequisiteChainIsBounded: a CDN's stylesheet that imports a new
// stylesheet without end (a trap) is no way round the crawl's trap guards:
// requisites count toward no page budget and are at their page's depth, so
// without a bound of their own (maxRequisiteNesting) max_pages,
// max_pages_per_host and max_depth let a mirror crawl fetch such a chain
// for ever (5,546 stylesheets in 20 s, and the crawl stopped by its
// deadline, before the bound).
func TestRequisiteChainIsBounded(t *testing.T) {
	var css atomic.Int64
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/c/"):
			css.Add(1)
			importChain(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(cdn.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><link rel="stylesheet" href="`+cdn.URL+`/c/0.css"></head><body><a href="/a">a</a></body></html>`)
	}))
	t.Cleanup(srv.Close)
	cfg := testConfig(t, srv.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Scope.MaxPages = 1
	cfg.Scope.MaxPagesPerHost = 1
	cfg.Scope.MaxDepth = 1
	sum, err := crawlWith(t, cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stopped != "max_pages" || css.Load() != maxRequisiteNesting {
		t.Fatalf("stopped %q after %d stylesheets of an endless @import chain; want max_pages after %d", sum.Stopped, css.Load(), maxRequisiteNesting)
	}
	rec := inventory(t, cfg.Output.URLs)[fmt.Sprintf("%s/c/%d.css", cdn.URL, maxRequisiteNesting)]
	if rec.Error != "out of scope: "+rejectNesting {
		t.Errorf("the first stylesheet too deep has record %+v, want it refused for its nesting", rec)
	}
}

// TestDrainRetriesRequisites: at max_pages the crawl still fetches the
// requisites queued, ahead of their host's pages (README, "Whole sites"),
// and so one that failed once and waits for its retry: putting its host
// off for the pages left behind must not leave it unfetched (it was
// recorded "not fetched: max_pages reached").
func TestDrainRetriesRequisites(t *testing.T) {
	var img atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><img src="/i.png"><a href="/a">a</a><a href="/b">b</a></body></html>`)
		case "/i.png":
			if img.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "image/png")
			fmt.Fprint(w, "PNG")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := testConfig(t, srv.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Scope.MaxPages = 1
	sum := runCrawl(t, cfg)
	rec := inventory(t, cfg.Output.URLs)[srv.URL+"/i.png"]
	if sum.Stopped != "max_pages" || img.Load() != 2 || rec.Status != 200 {
		t.Errorf("stopped %q, the image asked %d times, its record %+v; want it fetched on its retry", sum.Stopped, img.Load(), rec)
	}
}

// TestDrainFetchesNestedRequisites: what a stylesheet fetched in the
// max_pages drain imports from its own host is fetched too, though the
// drain put the host off for its pages before the import was queued (1
// stylesheet of the chain's 5 was fetched), and the chain stops at
// maxRequisiteNesting.
func TestDrainFetchesNestedRequisites(t *testing.T) {
	var css atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><link rel="stylesheet" href="/c/0.css"></head><body><a href="/a">a</a></body></html>`)
		case strings.HasPrefix(r.URL.Path, "/c/"):
			css.Add(1)
			importChain(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := testConfig(t, srv.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Scope.MaxPages = 1
	if sum := runCrawl(t, cfg); sum.Stopped != "max_pages" || css.Load() != maxRequisiteNesting {
		t.Fatalf("stopped %q after %d stylesheets of the chain; want max_pages after %d", sum.Stopped, css.Load(), maxRequisiteNesting)
	}
}

// importChain serves /c/N.css, a stylesheet that imports /c/N+1.css: a
// chain without end.
func importChain(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/c/"), ".css"))
	w.Header().Set("Content-Type", "text/css")
	fmt.Fprintf(w, "@import \"/c/%d.css\";\nbody { color: red }\n", n+1)
}
