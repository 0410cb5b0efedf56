package crawler

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/politecrawl/crawler/storage"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the crawl's observability endpoints, for daemon.listen:
// /metrics in the Prometheus exposition format, /healthz (200 while the
// process serves), /readyz (200 while Ready, else 503 with the reason),
// and /hosts, a
// JSON list of every host with its robots state, current delay and why,
// queue size, error streak and next eligible time. Each reads the
// observer, the frontier and the hosts, and takes no lock the crawl
// holds for long.
func (c *Crawler) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(c.obs.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := c.Ready(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /hosts", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(storage.JSONWriter(w)) // no C1 or bidi control raw: curl prints it
		enc.SetIndent("", "  ")
		enc.Encode(c.hosts.snapshot(c.now()))
	})
	return mux
}
