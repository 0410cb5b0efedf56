package crawler

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// requests returns the site's request log: each request URI with when it
// arrived, in order.
func (s *testSite) requests() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.log...)
}

// A 5xx other than 503 is the URL's problem (README, "What it promises"):
// the URL is retried on its own backoff while the host's other URLs go on
// at the host's interval. Before, the host rested after each 500 and the
// URL's retry came first when it woke: the server saw /bad four times in a
// row, seconds apart, and nothing else meanwhile.
func TestFailingURLKeepsItsHostGoing(t *testing.T) {
	const delay = 100 * time.Millisecond
	s := newSite(t)
	links := []string{"/bad"}
	for i := range 30 {
		p := fmt.Sprintf("/p/%d", i)
		links = append(links, p)
		s.html(p)
	}
	s.html("/", links...)
	s.set("/bad", page{status: 500})
	cfg := testConfig(t, s.URL+"/")
	cfg.Politeness.Delay = delay
	cfg.Fetch.Retries = 3
	sum := runCrawl(t, cfg)

	hits := s.hits()
	if hits["/bad"] != 4 {
		t.Errorf("/bad asked %d times, want 4 (fetch.retries 3)", hits["/bad"])
	}
	inv := inventory(t, cfg.Output.URLs)
	if r := inv[s.URL+"/bad"]; r.Status != 500 {
		t.Errorf("/bad recorded %d %q, want its 500", r.Status, r.Error)
	}
	for _, p := range links[1:] {
		if hits[p] != 1 || inv[s.URL+p].Status != 200 {
			t.Errorf("%s asked %d times, recorded %d %q; want once, 200", p, hits[p], inv[s.URL+p].Status, inv[s.URL+p].Error)
		}
	}
	if sum.Stopped != "drained" || len(sum.Parked) != 0 {
		t.Errorf("stopped %q, parked %+v; want drained, no host given up on", sum.Stopped, sum.Parked)
	}

	// The server's log, from the first attempt of /bad to its last: the
	// host's other URLs kept coming meanwhile, in most of the host's
	// turns (a quarter allows for a loaded machine; before, there were
	// none).
	log := s.requests()
	first, last := -1, -1
	for i, h := range log {
		if h.path == "/bad" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		t.Fatal("/bad never asked")
	}
	others := 0
	for _, h := range log[first:last] {
		if strings.HasPrefix(h.path, "/p/") {
			others++
		}
	}
	window := log[last].at.Sub(log[first].at)
	if turns := int(window / delay); others < 2 || others < turns/4 {
		t.Errorf("%d other URLs asked in the %v /bad was retried (%d turns of the host), want most turns", others, window, turns)
	}
	if gap := s.minGap(); gap < delay-5*time.Millisecond {
		t.Errorf("two requests arrived %v apart; the delay is %v", gap, delay)
	}
	if n := s.maxInFlight(); n > 1 {
		t.Errorf("%d requests in flight at once; max_per_host is 1", n)
	}
}

// Issue 23's case: 50 good URLs and 3 that always answer 503, the three
// last, so that nothing succeeds between their failures. The host waits
// after each 503, but its backoff grows with the different URLs failing
// (three), not with each failure, and each URL gives up after its
// retries. Before, the backoff doubled at each of the twelve 503s and the
// host was given up on at the tenth, minutes in, with /bad/3 untried.
func TestFewFailingURLsEndInSeconds(t *testing.T) {
	const delay = 50 * time.Millisecond
	s := newSite(t)
	var seeds, good, bad []string
	for i := range 50 {
		p := fmt.Sprintf("/p/%d", i)
		s.html(p)
		good = append(good, p)
	}
	for i := range 3 {
		p := fmt.Sprintf("/bad/%d", i)
		s.set(p, page{status: 503})
		bad = append(bad, p)
	}
	for _, p := range append(good[:len(good):len(good)], bad...) {
		seeds = append(seeds, s.URL+p)
	}
	cfg := testConfig(t, seeds...)
	cfg.Politeness.Delay = delay
	cfg.Fetch.Retries = 3
	sum := runCrawl(t, cfg)

	hits := s.hits()
	inv := inventory(t, cfg.Output.URLs)
	for _, p := range good {
		if hits[p] != 1 || inv[s.URL+p].Status != 200 {
			t.Errorf("%s asked %d times, recorded %d %q; want once, 200", p, hits[p], inv[s.URL+p].Status, inv[s.URL+p].Error)
		}
	}
	for _, p := range bad {
		if hits[p] != 4 || inv[s.URL+p].Status != 503 {
			t.Errorf("%s asked %d times, recorded %d %q; want 4 times (fetch.retries 3), 503", p, hits[p], inv[s.URL+p].Status, inv[s.URL+p].Error)
		}
	}
	if sum.Stopped != "drained" || len(sum.Parked) != 0 {
		t.Errorf("stopped %q, parked %+v; want drained, no host given up on", sum.Stopped, sum.Parked)
	}

	// After the last good URL, only the three failing ones are left:
	// their retries end within a few times what the good ones took
	// (about 12 s at most, against minutes before).
	log := s.requests()
	lastGood := 0
	for i, h := range log {
		if strings.HasPrefix(h.path, "/p/") {
			lastGood = i
		}
	}
	goods := log[lastGood].at.Sub(log[0].at)
	if tail := log[len(log)-1].at.Sub(log[lastGood].at); tail > 5*goods {
		t.Errorf("the failing URLs took %v after the last good one, which came %v after the first request; want at most 5 times that", tail, goods)
	}
	if gap := s.minGap(); gap < delay-5*time.Millisecond {
		t.Errorf("two requests arrived %v apart; the delay is %v", gap, delay)
	}
}
