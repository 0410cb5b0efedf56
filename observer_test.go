package crawler

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The end summary, /metrics and /hosts of one run are read from the same
// counts, and agree: requests (robots.txt and redirect hops included) are
// told from pages fetched, URLs refused by robots.txt are not counted as
// fetched, every URL kept out is counted by reason in both, and the
// politeness wait is counted for every request held back.
func TestViewsAgree(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private/\n"})
	s.html("/", "/a", "/old", "/private/x", "/missing", "/broken", "http://elsewhere.test/", "/a#frag")
	s.html("/a", "/")
	s.set("/old", page{status: 301, headers: map[string]string{"Location": "/a"}})
	s.set("/broken", page{status: 500})
	const delay = 40 * time.Millisecond
	cfg := testConfig(t, s.URL+"/")
	cfg.Politeness.Delay = delay
	cfg.Fetch.Retries = 1
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	metric := scrape(t, srv.URL+"/metrics")

	// What the server saw: robots.txt, /, /a, /old, /missing, /broken twice.
	hits := s.hits()
	requests := 0
	for _, n := range hits {
		requests += n
	}
	if hits["/private/x"] != 0 || requests != 7 {
		t.Fatalf("server saw %v", hits)
	}
	want := map[string]int64{"2xx": 3, "3xx": 1, "4xx": 1, "5xx": 2} // robots.txt, /, /a; /old; /missing; /broken ×2
	for _, class := range statusClasses {
		if sum.Requests[class] != want[class] || metric("crawler_fetches_total", "code", class) != float64(want[class]) {
			t.Errorf("requests %s: summary %d, /metrics %v, want %d", class, sum.Requests[class],
				metric("crawler_fetches_total", "code", class), want[class])
		}
	}
	want = map[string]int64{"2xx": 2, "3xx": 1, "4xx": 1, "5xx": 2} // as above, less robots.txt
	for _, class := range statusClasses {
		if sum.Pages[class] != want[class] || metric("crawler_pages_fetched_total", "code", class) != float64(want[class]) {
			t.Errorf("pages %s: summary %d, /metrics %v, want %d", class, sum.Pages[class],
				metric("crawler_pages_fetched_total", "code", class), want[class])
		}
	}
	// Done: /, /a, /old, /private/x (refused), /missing, /broken.
	if sum.Done != 6 || metric("crawler_urls_done_total") != 6 || metric("crawler_frontier_urls", "state", "done") != 6 {
		t.Errorf("done: summary %d, /metrics %v and %v, want 6", sum.Done, metric("crawler_urls_done_total"),
			metric("crawler_frontier_urls", "state", "done"))
	}
	if sum.Disallowed != 1 || metric("crawler_robots_disallowed_total") != 1 {
		t.Errorf("disallowed: summary %d, /metrics %v, want 1", sum.Disallowed, metric("crawler_robots_disallowed_total"))
	}
	if sum.Rejected["host"] != 1 || metric("crawler_urls_rejected_total", "reason", "host") != 1 {
		t.Errorf("kept out (host): summary %v, /metrics %v, want 1", sum.Rejected, metric("crawler_urls_rejected_total", "reason", "host"))
	}
	if sum.Retries != 1 || metric("crawler_retries_total") != 1 {
		t.Errorf("retries: summary %d, /metrics %v, want 1", sum.Retries, metric("crawler_retries_total"))
	}
	if float64(sum.Bytes) != metric("crawler_bytes_total") || sum.Bytes == 0 {
		t.Errorf("bytes: summary %d, /metrics %v", sum.Bytes, metric("crawler_bytes_total"))
	}
	// Seven requests to one host, each at least the delay after the last:
	// the host was held back about six delays, less the requests' time.
	if w := metric("crawler_politeness_wait_seconds_total"); w != sum.PoliteWait.Seconds() || sum.PoliteWait < 3*delay {
		t.Errorf("politeness wait: summary %v, /metrics %vs, want the same and at least %v", sum.PoliteWait, w, 3*delay)
	}

	var hosts []hostView
	getJSON(t, srv.URL+"/hosts", &hosts)
	if len(hosts) != 1 || hosts[0].Done != 6 || int64(hosts[0].Pages) != sum.Pages["2xx"] {
		t.Errorf("/hosts %+v, want 6 done and %d pages fetched", hosts, sum.Pages["2xx"])
	}
}

// scrape reads a /metrics page and returns a lookup of its values (a
// histogram's is its count): a series named with label name and value
// pairs; a missing one fails.
func scrape(t *testing.T, url string) func(name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return func(name string, labels ...string) float64 {
		t.Helper()
	metric:
		for _, m := range families[name].GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() != labels[i+1] {
						continue metric
					}
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
		t.Errorf("no %s%v in /metrics", name, labels)
		return -1
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

func TestStatusClass(t *testing.T) {
	for status, want := range map[int]string{0: "error", 200: "2xx", 301: "3xx", 304: "304", 404: "4xx", 503: "5xx", 99: "error", 600: "error"} {
		if got := statusClass(status); got != want {
			t.Errorf("statusClass(%d) = %q, want %q", status, got, want)
		}
	}
}

// With Options.Status, the progress line comes twice a second with the
// elapsed time and the rate, and is cleared ("") when the run ends.
func TestProgressStatusLine(t *testing.T) {
	s := newSite(t)
	s.html("/", "/a", "/b", "/c", "/d", "/e")
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e"} {
		s.html(p)
	}
	cfg := testConfig(t, s.URL+"/")
	cfg.Politeness.Delay = 200 * time.Millisecond // a run of about 1.2s
	var mu sync.Mutex
	var lines []string
	c, err := New(cfg, Options{Status: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) < 2 || lines[len(lines)-1] != "" || !strings.Contains(lines[0], "/s") || !strings.Contains(lines[0], "done ") {
		t.Errorf("status lines %q: want at least one progress line with done and a rate, then a clearing \"\"", lines)
	}
}
