package crawler

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
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
	ctx, cancel := context.WithTimeout(context.Background(), patience)
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

// /readyz answers 503 naming the output that can no longer be written,
// while /healthz still answers 200; and 200 again once it can.
func TestReadyz(t *testing.T) {
	cfg := testConfig(t, "http://example.test/")
	linksDir := t.TempDir()
	cfg.Output.Links = filepath.Join(linksDir, "links.jsonl")
	cfg.Output.MirrorDir = filepath.Join(t.TempDir(), "mirror")
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/readyz"); code != 200 {
		t.Fatalf("/readyz with every output writable: %d %q", code, body)
	}
	if err := os.RemoveAll(linksDir); err != nil {
		t.Fatal(err)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "output.links") {
		t.Errorf("/readyz with output.links' folder gone: %d %q; want 503 naming output.links", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz while not ready: %d, want 200", code)
	}
	if err := os.MkdirAll(linksDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, body := get("/readyz"); code != 200 {
		t.Errorf("/readyz with the folder back: %d %q", code, body)
	}
}

// Every metric /metrics serves passes the linter promtool check metrics
// runs (client_golang's promlint), and crawler_build_info is there.
func TestMetricsLint(t *testing.T) {
	cfg := testConfig(t, "http://example.test/")
	c, err := New(cfg, Options{Version: "v9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	if want := `crawler_build_info{goversion="` + runtime.Version() + `",revision=`; !strings.Contains(string(body), want) || !strings.Contains(string(body), `version="v9.9.9"} 1`) {
		t.Errorf("/metrics has no crawler_build_info for v9.9.9:\n%s", body)
	}
	for _, want := range []string{`crawler_config_reloads_total{result="failure"} 0`, `crawler_config_reloads_total{result="success"} 0`, "crawler_config_last_reload_success_timestamp_seconds "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
