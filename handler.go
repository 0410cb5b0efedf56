package crawler

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/politecrawl/crawler/frontier"
)

// Handler serves the crawl's observability endpoints, for daemon.listen:
// /metrics in the Prometheus exposition format, /healthz, and /hosts, a
// JSON list of every host with its robots state, current delay and why,
// queue size, error streak and next eligible time.
func (c *Crawler) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(c.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /hosts", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(c.hosts(c.now()))
	})
	return mux
}

// hostView is one host in /hosts.
type hostView struct {
	Origin    string    `json:"origin"`
	Robots    string    `json:"robots"`
	Delay     string    `json:"delay"`
	DelayWhy  string    `json:"delay_why"`
	Waiting   string    `json:"waiting,omitempty"`
	InFlight  int       `json:"in_flight"`
	Queued    int64     `json:"queued"`
	Done      int64     `json:"done"`
	ErrStreak int       `json:"error_streak"`
	NextAt    time.Time `json:"next_eligible,omitzero"`
	Parked    string    `json:"parked,omitempty"`
}

func (c *Crawler) hosts(now time.Time) []hostView {
	queues := map[string]frontier.HostStats{}
	for _, h := range c.front.Hosts() {
		queues[h.Origin] = h
	}
	var out []hostView
	for _, h := range c.gate.Snapshot(now) {
		q := queues[h.Origin]
		out = append(out, hostView{
			Origin: h.Origin, Robots: c.robots.Status(h.Origin, now),
			Delay: h.DelayText, DelayWhy: string(h.DelayWhy), Waiting: string(h.WaitingWhy),
			InFlight: h.InFlight, Queued: q.Queued, Done: q.Done,
			ErrStreak: h.ErrStreak, NextAt: h.NextAt, Parked: h.Parked,
		})
	}
	return out
}
