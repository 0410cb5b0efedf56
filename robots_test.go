package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/robots"
)

// testClock is a crawl's clock that a test moves. It starts an hour ahead
// of the real clock, which the transport's trace hooks read for Sent, so
// that a request's real send time never pushes the gate past the test's
// instants.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Now().Add(time.Hour).Truncate(time.Second)} }

func (k *testClock) now() time.Time { k.mu.Lock(); defer k.mu.Unlock(); return k.t }

func (k *testClock) advance(d time.Duration) { k.mu.Lock(); k.t = k.t.Add(d); k.mu.Unlock() }

// newClockedCrawler opens a crawl of cfg on clock, not running: a test
// drives its parts.
func newClockedCrawler(t *testing.T, cfg Config, clock *testClock) *Crawler {
	t.Helper()
	c, err := New(cfg, Options{Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// leaseOf queues raw, if not queued, and leases it at now, its host made
// ready then. Other hosts' URLs handed out meanwhile go back, their hosts
// busy until made ready again.
func leaseOf(t *testing.T, c *Crawler, raw string, now time.Time) *frontier.Lease {
	t.Helper()
	u, err := frontier.Canonicalize(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.front.Add([]frontier.Item{{URL: u, Kind: frontier.KindPage}}); err != nil {
		t.Fatal(err)
	}
	c.front.SetReady(u.Origin, now) // as the visit that held it would
	var others []*frontier.Lease    // given back once l is out, or Next hands them out again
	defer func() {
		for _, o := range others {
			c.front.Release(o, time.Time{})
		}
	}()
	for {
		l, idle, err := c.front.Next(now)
		if err != nil || l == nil {
			t.Fatalf("no lease of %s at %v: %v (%+v)", raw, now, err, idle)
		}
		if l.Key == u.Key {
			return l
		}
		others = append(others, l)
	}
}

// robotsOf is robotsFor that, when the lease is not ready, settles it as
// a worker would.
func robotsOf(c *Crawler, ctx context.Context, l *frontier.Lease, now time.Time) (*robots.Group, bool) {
	g, o, ok := c.robotsFor(ctx, l, now)
	if !ok {
		c.settle(l, o)
	}
	return g, ok
}

// robotsSite serves robots.txt with the given header and body and counts
// its requests; slow makes the first answer take that long on clock.
func robotsSite(t *testing.T, clock *testClock, slow time.Duration, header, body string) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if hits.Add(1) == 1 {
			clock.advance(slow)
		}
		if header != "" {
			w.Header().Set("Cache-Control", header)
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// A redirect hop of robots.txt waiting for a host whose slot is taken is
// granted when the slot is released, woken by Gate.Changed: the gate
// answers "no time" for a request in flight or not yet sent, which lasts
// milliseconds. In a synctest bubble, Wait returns once exchange.wait is
// parked, so the Release surely comes after its refusal; the bubble's
// context deadline only guards against a hang.
func TestExchangeWaitWakesOnRelease(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		const origin = "http://127.0.0.2:8001"
		cfg := testConfig(t, origin+"/")
		cfg.StateDir = dir
		c, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.hosts.gate = politeness.New(politeness.Config{MaxPerHost: 1}, time.Now())
		if ok, _ := c.hosts.gate.Acquire(origin, c.now()); !ok {
			t.Fatal("first Acquire refused")
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		got := make(chan error, 1)
		go func() { got <- c.x.wait(ctx, origin) }()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("wait returned (%v) while the slot was taken", err)
		default:
		}
		c.hosts.gate.Release(origin, c.now(), politeness.Result{Status: 200})
		synctest.Wait()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("wait: %v, want the slot once released", err)
			}
		default:
			t.Fatal("wait still waiting after the Release")
		}
	})
}

// sentHosts is a crawl's hosts with gate g, for the sentGuard tests.
func sentHosts(t *testing.T, g *politeness.Gate) *hosts {
	c, err := New(testConfig(t, "http://127.0.0.2:8001/"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.hosts.gate = g
	return c.hosts
}

// A Sent that net/http reports after the visit released its slot (a timeout
// firing while the headers were written) must not reach the gate as Sent:
// it would end the hold of the next request to the host, granted but not
// yet sent.
func TestSentAfterReleaseIgnored(t *testing.T) {
	const origin = "http://127.0.0.2:8001"
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	g := politeness.New(politeness.Config{Delay: time.Second, MaxPerHost: 2}, t0.Add(-time.Hour))
	h := sentHosts(t, g)
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("first Acquire refused")
	}
	var first sentGuard
	g.Release(origin, t0, politeness.Result{Err: context.DeadlineExceeded, Unsent: first.release()})
	next := t0.Add(2 * time.Second)
	if ok, at := g.Acquire(origin, next); !ok {
		t.Fatalf("second Acquire refused (%v)", at)
	}
	first.sent(h, origin, next)
	// The second request has not gone out: the host stays held.
	if ok, at := g.Acquire(origin, next.Add(time.Hour)); ok || !at.IsZero() {
		t.Fatalf("granted (%v, %v) while the second request has not gone out", ok, at)
	}
}

// A request whose headers go out as its timeout fires (net/http calls
// WroteHeaders after Do returned) may reach the server: the guard passes
// that send on as SentLate, and the next start keeps the interval from it.
func TestSentAfterReleaseKeepsTheInterval(t *testing.T) {
	const origin = "http://127.0.0.2:8001"
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	g := politeness.New(politeness.Config{Delay: 2 * time.Second}, t0.Add(-time.Hour))
	h := sentHosts(t, g)
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("first Acquire refused")
	}
	var guard sentGuard
	done := t0.Add(30 * time.Second)
	g.Release(origin, done, politeness.Result{Err: context.DeadlineExceeded, Unsent: guard.release()})
	late := done.Add(500 * time.Millisecond)
	guard.sent(h, origin, late)
	if at, ok := g.Ready(origin, late); !ok || at.Sub(late) < 2*time.Second {
		t.Fatalf("Ready = (%v after the late send, %v), want ≥ 2s after it", at.Sub(late), ok)
	}
}

// A robots.txt answer shared with another host counts its max-age from
// when the fetch that got it was asked for, not from when it was reused:
// asked for at t0 with max-age=1 and reused at t0+0.5s, it is due again by
// t0+1.1s.
func TestSharedRobotsAgeFromOriginalRequest(t *testing.T) {
	clock := newTestClock()
	t0 := clock.now()
	const body = "User-agent: *\nDisallow: /private/\n"
	b, hits := robotsSite(t, clock, 0, "max-age=1", body)
	c := newClockedCrawler(t, testConfig(t, b.URL+"/"), clock)
	ctx := context.Background()
	// Another host's robots.txt redirected to b's, asked for at t0 and
	// answered at t0+0.4s.
	c.hosts.share.put(originOf(frontier.MustParse(b.URL))+"/robots.txt", "http://127.0.0.9:9", robots.Fetch{Status: 200,
		Body: []byte(body), MaxAge: time.Second, HasMaxAge: true}, t0, t0.Add(400*time.Millisecond))

	clock.advance(500 * time.Millisecond)
	if _, ok := robotsOf(c, ctx, leaseOf(t, c, b.URL+"/", clock.now()), clock.now()); ok {
		t.Fatal("robots.txt taken as known before it was stored")
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("robots.txt fetched %d times, want the shared answer used", n)
	}
	clock.advance(400 * time.Millisecond) // t0+0.9s
	// Fetched once: when the shared copy expired.
	checkRobotsExpiry(t, c, clock, b.URL, hits, 1)
}

// checkRobotsExpiry checks, at t0+0.9s on clock, that the robots.txt copy
// of site asked for at t0 with max-age=1 rules it (it disallows /private/),
// and at t0+1.1s that it is fetched again, robots.txt having been fetched
// wantHits times by then.
func checkRobotsExpiry(t *testing.T, c *Crawler, clock *testClock, site string, hits *atomic.Int32, wantHits int32) {
	t.Helper()
	ctx := context.Background()
	l := leaseOf(t, c, site+"/", clock.now())
	if g, ok := robotsOf(c, ctx, l, clock.now()); !ok || g.Allowed(site+"/private/x") {
		t.Fatalf("at t0+0.9s: ready %v, want the copy asked for at t0, which disallows /private/", ok)
	}
	c.front.Release(l, time.Time{})
	clock.advance(200 * time.Millisecond) // t0+1.1s: past max-age from t0
	if _, ok := robotsOf(c, ctx, leaseOf(t, c, site+"/", clock.now()), clock.now()); ok {
		t.Error("at t0+1.1s the copy asked for at t0 with max-age=1 still rules")
	}
	if n := hits.Load(); n != wantHits {
		t.Errorf("robots.txt fetched %d times by t0+1.1s, want %d", n, wantHits)
	}
}

// A's robots.txt redirects to B's. Whichever host asks first, B's
// robots.txt is fetched once and rules both; and once stored, the share
// keeps no copy of the answer: the robots cache has it.
func TestRobotsRedirectSharedEitherOrder(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private/\n"
	for _, aFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("aFirst=%v", aFirst), func(t *testing.T) {
			clock := newTestClock()
			b, hits := robotsSite(t, clock, 0, "", body)
			a := httptest.NewServer(http.RedirectHandler(b.URL+"/robots.txt", http.StatusFound))
			defer a.Close()
			c := newClockedCrawler(t, testConfig(t, a.URL+"/", b.URL+"/"), clock)
			ctx := context.Background()
			order := []string{a.URL, b.URL}
			if !aFirst {
				order[0], order[1] = order[1], order[0]
			}
			for _, site := range order {
				clock.advance(time.Second)
				if _, ok := robotsOf(c, ctx, leaseOf(t, c, site+"/", clock.now()), clock.now()); ok {
					t.Fatalf("%s: robots.txt taken as known before it was stored", site)
				}
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("B's robots.txt fetched %d times, want once", n)
			}
			for _, site := range order {
				l := leaseOf(t, c, site+"/", clock.now())
				g, ok := robotsOf(c, ctx, l, clock.now())
				if !ok || g.Allowed(site+"/private/x") {
					t.Errorf("%s: ready %v, want B's robots.txt, which disallows /private/", site, ok)
				}
				c.front.Release(l, time.Time{})
			}
			c.hosts.share.mu.Lock()
			defer c.hosts.share.mu.Unlock()
			for el := c.hosts.share.order.Front(); el != nil; el = el.Next() {
				if e := el.Value.(*sharedRobots); e.f != nil {
					t.Errorf("the share still holds the answer at %s, stored already", e.key)
				}
			}
		})
	}
}

// The share holds at most robotsShareMax URLs, and forgets stale ones as
// it goes, without a scan of all it holds.
func TestRobotsShareBounded(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var s robotsShare
	f := robots.Fetch{Status: 200, Body: []byte("User-agent: *\n")}
	key := func(i int) string { return fmt.Sprintf("http://h%d.example/robots.txt", i) }
	for i := range robotsShareMax + 10 {
		s.put(key(i), "http://from.example", f, t0, t0)
	}
	if n := s.order.Len(); n != robotsShareMax || len(s.index) != robotsShareMax {
		t.Fatalf("%d entries (index %d), want at most %d", n, len(s.index), robotsShareMax)
	}
	if _, _, _, ok := s.get(key(0), "http://other.example", t0); ok {
		t.Error("the oldest entry kept past the bound")
	}
	if _, _, _, ok := s.get(key(robotsShareMax+9), "http://other.example", t0); !ok {
		t.Error("the newest entry dropped")
	}
	later := t0.Add(robotsShareFor)
	s.put(key(-1), "http://from.example", f, later, later)
	if n := s.order.Len(); n != 1 {
		t.Errorf("%d entries after the others went stale, want 1", n)
	}
	// A host's own answer is kept only until its robots cache has it; a
	// redirect target's loses its copy then.
	s.put("http://from.example/robots.txt", "http://from.example", f, later, later)
	s.settle("http://from.example/robots.txt", "http://from.example")
	s.settle(key(-1), "http://from.example")
	if _, _, g, ok := s.get(key(-1), "http://other.example", later); !ok || g != nil || s.order.Len() != 1 {
		t.Errorf("after settle: found %v, copy %v, %d entries; want the target found without a copy, alone", ok, g, s.order.Len())
	}
}
