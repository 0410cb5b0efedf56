package crawler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestHandlerEndpoints(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nCrawl-delay: 0.01\n"})
	s.html("/", "/a", "/nowhere")
	s.html("/a")
	cfg := testConfig(t, s.URL+"/")
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.progress() // refresh the gauges, as the progress ticker does
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()

	metric := scrape(t, srv.URL+"/metrics")
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		var pairs []string
		for k, v := range labels {
			pairs = append(pairs, k, v)
		}
		return metric(name, pairs...)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"crawler_fetches_total", map[string]string{"code": "2xx"}, 3}, // robots.txt, /, /a
		{"crawler_fetches_total", map[string]string{"code": "4xx"}, 1},
		{"crawler_fetch_duration_seconds", nil, 4}, // every request is timed
		{"crawler_robots_requests_total", map[string]string{"result": "ok"}, 1},
		{"crawler_frontier_urls", map[string]string{"state": "done"}, 3},
		{"crawler_frontier_urls", map[string]string{"state": "queued"}, 0},
		{"crawler_hosts", map[string]string{"state": "parked"}, 0},
	} {
		if got := value(tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	for _, name := range []string{"crawler_bytes_total", "crawler_politeness_wait_seconds_total"} {
		value(name, nil)
	}

	var hosts []hostView
	getJSON(t, srv.URL+"/hosts", &hosts)
	if len(hosts) != 1 {
		t.Fatalf("/hosts: %+v", hosts)
	}
	if h := hosts[0]; h.Robots != "ok" || h.DelayWhy != "crawl-delay" || h.Done != 3 {
		t.Errorf("/hosts: %+v, want robots ok, delay from crawl-delay, 3 done", h)
	}
	if resp, err := http.Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
}
