package crawler

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// runAt runs a crawl of cfg to its end on a clock shifted by skew, as a run
// started that much later would see it.
func runAt(t *testing.T, cfg Config, skew time.Duration) Summary {
	t.Helper()
	sum, err := crawlWith(t, cfg, Options{Now: func() time.Time { return time.Now().Add(skew) }})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// notFetched lists which of paths on site the inventory at path does not
// hold as a 200.
func notFetched(t *testing.T, path, base string, paths ...string) []string {
	t.Helper()
	inv := inventory(t, path)
	var missing []string
	for _, p := range paths {
		if r := inv[base+p]; r.Status != 200 {
			missing = append(missing, p+" ("+r.Error+")")
		}
	}
	return missing
}

// A host whose robots.txt got no answer is given up on, its URLs recorded
// as not fetched; once it listens, the next run on the same state fetches
// every one of them (README: "the next run tries it again").
func TestHostGivenUpOnUnreachableIsCrawledNextRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: every request is refused
	base := "http://" + addr
	paths := []string{"/a", "/b", "/c"}
	cfg := testConfig(t, base+"/a", base+"/b", base+"/c")
	cfg.Fetch.Retries = 1
	cfg.Politeness.RobotsLastWait = 0
	sum := runAt(t, cfg, 0)
	if len(sum.Parked) != 1 {
		t.Fatalf("first run parked %+v; want the refusing host", sum.Parked)
	}
	if m := notFetched(t, cfg.Output.URLs, base, paths...); len(m) != len(paths) {
		t.Fatalf("first run fetched some of %v from a closed port: %v left", paths, m)
	}

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	s := &testSite{pages: map[string]page{"/robots.txt": {ctype: "text/plain"}}}
	for _, p := range paths {
		s.html(p)
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	defer s.Close()
	sum = runAt(t, cfg, 0)
	if m := notFetched(t, cfg.Output.URLs, base, paths...); len(m) != 0 {
		t.Errorf("second run, host listening: not fetched %v; server saw %v", m, s.hits())
	}
	if len(sum.Parked) != 0 {
		t.Errorf("second run parked %+v", sum.Parked)
	}
}

// A host parked for answering 429 has its URLs fetched by a run after its
// wait is over.
func TestHostParkedBy429IsCrawledNextRun(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	paths := []string{"/", "/1", "/2", "/3"}
	for _, p := range paths {
		s.set(p, page{status: 429, headers: map[string]string{"Retry-After": "0"}})
	}
	cfg := testConfig(t, s.URL+"/", s.URL+"/1", s.URL+"/2", s.URL+"/3")
	cfg.Politeness.RetryAfterMax = time.Millisecond // the first 429 gives up on the host
	sum := runAt(t, cfg, 0)
	if len(sum.Parked) != 1 {
		t.Fatalf("first run parked %+v; want the host", sum.Parked)
	}
	if m := notFetched(t, cfg.Output.URLs, s.URL, paths...); len(m) != len(paths) {
		t.Fatalf("first run fetched some of %v: %v left", paths, m)
	}

	for _, p := range paths {
		s.html(p)
	}
	before := len(s.hits())
	cfg.Politeness.RetryAfterMax = time.Hour
	runAt(t, cfg, 2*time.Hour) // its wait is long over
	if m := notFetched(t, cfg.Output.URLs, s.URL, paths...); len(m) != 0 {
		t.Errorf("second run: not fetched %v; server saw %v (%d before)", m, s.hits(), before)
	}
}
