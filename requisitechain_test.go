package crawler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/c/"), ".css"))
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprintf(w, "@import \"/c/%d.css\";\nbody { color: red }\n", n+1)
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
	c, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sum, err := c.Run(ctx)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
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
