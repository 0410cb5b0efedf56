package crawler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/crawler/storage"
)

// testSite is an httptest server serving scripted pages, logging every
// request with the time it arrived, and counting requests in flight.
type testSite struct {
	*httptest.Server
	mu       sync.Mutex
	pages    map[string]page
	log      []hit
	inFlight int
	maxIn    int
	hold     time.Duration // how long each answer takes
	gate     chan struct{} // when not nil, answers wait until it is closed
}

type page struct {
	status  int
	ctype   string
	body    string
	headers map[string]string
	hang    bool // never answered: the handler ends when the client goes
}

type hit struct {
	path string
	at   time.Time
	hdr  http.Header
}

func newSite(t *testing.T) *testSite {
	s := &testSite{pages: map[string]page{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *testSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.log = append(s.log, hit{path: r.URL.RequestURI(), at: time.Now(), hdr: r.Header.Clone()})
	s.inFlight++
	s.maxIn = max(s.maxIn, s.inFlight)
	p, ok := s.pages[r.URL.RequestURI()]
	hold, gate := s.hold, s.gate
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if hold > 0 {
		time.Sleep(hold)
	}
	if gate != nil {
		<-gate
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	if p.hang {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	for k, v := range p.headers {
		w.Header().Set(k, v)
	}
	if p.ctype == "" {
		p.ctype = "text/html; charset=utf-8"
	}
	w.Header().Set("Content-Type", p.ctype)
	if p.status == 0 {
		p.status = 200
	}
	w.WriteHeader(p.status)
	fmt.Fprint(w, strings.ReplaceAll(p.body, "{{base}}", s.URL))
}

// set scripts the answer for a request URI.
func (s *testSite) set(uri string, p page) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[uri] = p
}

// html scripts an HTML page linking to each of links.
func (s *testSite) html(uri string, links ...string) {
	var b strings.Builder
	b.WriteString("<html><body>")
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a>`, l, l)
	}
	b.WriteString("</body></html>")
	s.set(uri, page{body: b.String()})
}

// hits returns how often each request URI was asked for.
func (s *testSite) hits() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for _, h := range s.log {
		m[h.path]++
	}
	return m
}

// askedBy lists who asked for path (User-Agent) and when, in order, for
// a test's log.
func (s *testSite) askedBy(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var who []string
	for _, h := range s.log {
		if h.path == path {
			who = append(who, h.hdr.Get("User-Agent")+" at "+h.at.UTC().Format("15:04:05.000"))
		}
	}
	return strings.Join(who, ", ")
}

// maxInFlight returns the most requests it served at once.
func (s *testSite) maxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxIn
}

// minGap returns the smallest time between two request arrivals.
func (s *testSite) minGap() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	gap := time.Duration(1<<63 - 1)
	for i := 1; i < len(s.log); i++ {
		gap = min(gap, s.log[i].at.Sub(s.log[i-1].at))
	}
	return gap
}

// testConfig is a config crawling seeds fast, with its state in a temp dir.
func testConfig(t *testing.T, seeds ...string) Config {
	cfg := DefaultConfig()
	cfg.Seeds = seeds
	cfg.StateDir = t.TempDir()
	cfg.Politeness.Delay = 0
	cfg.Fetch.Workers = 4
	cfg.Fetch.Timeout = 5 * time.Second
	cfg.Output.URLs = filepath.Join(t.TempDir(), "urls.jsonl")
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test config: %v", err)
	}
	return cfg
}

// runCrawl runs a crawl of cfg to its end and returns its summary.
func runCrawl(t *testing.T, cfg Config) Summary {
	t.Helper()
	sum, err := crawlWith(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// crawlWith runs a crawl of cfg with opts to its end (patience at most),
// logging to the test's log when opts has no logger.
func crawlWith(t *testing.T, cfg Config, opts Options) (Summary, error) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	c, err := New(cfg, opts)
	if err != nil {
		return Summary{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	sum, err := c.Run(ctx)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return sum, err
}

// testWriter sends a log to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// inventory reads the records of a crawl's inventory, the last per URL.
func inventory(t *testing.T, path string) map[string]storage.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]storage.Record{}
	if err := storage.ReadInventory(f, func(r storage.Record) error {
		out[r.URL] = r
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// patience bounds the tests' waits for what a crawl brings about: long
// enough that only something stuck exceeds it, never a busy machine or
// the race detector.
const patience = 2 * time.Minute

// waitUntil polls cond until it holds, failing the test after patience.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", patience, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// poll calls cond every 10ms until it holds, for at most patience (a
// bound only something stuck exceeds, not a busy machine), and reports
// whether it held.
func poll(cond func() bool) bool {
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// runInBackground runs c until stop, which returns what Run returned.
func runInBackground(c *Crawler) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		done <- err
	}()
	return func() error {
		cancel()
		return <-done
	}
}
