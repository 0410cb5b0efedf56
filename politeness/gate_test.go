package politeness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

const origin = "http://127.0.0.2:8001"

// acquireAt asks until the gate grants a slot, following the times it gives,
// and returns the start time granted.
func acquireAt(t *testing.T, g *Gate, o string, now time.Time) time.Time {
	t.Helper()
	for range 100 {
		ok, at := g.Acquire(o, now)
		if ok {
			return now
		}
		if at.IsZero() {
			t.Fatalf("Acquire(%s, %v): refused with no time to retry", o, now)
		}
		if !at.After(now) {
			t.Fatalf("Acquire(%s, %v): refused but says retry at %v", o, now, at)
		}
		now = at
	}
	t.Fatalf("Acquire(%s): never granted", o)
	return time.Time{}
}

func TestGateSpacesStartsByDelay(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cfg        Config
		crawlDelay time.Duration
		want       time.Duration
	}{
		{"delay", Config{Delay: time.Second}, 0, time.Second},
		{"crawl-delay wins when larger", Config{Delay: time.Second, HonorCrawlDelay: true}, 2500 * time.Millisecond, 2500 * time.Millisecond},
		{"crawl-delay ignored when off", Config{Delay: time.Second}, 5 * time.Second, time.Second},
		{"smaller crawl-delay loses", Config{Delay: time.Second, HonorCrawlDelay: true}, 500 * time.Millisecond, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(tc.cfg, t0)
			g.SetCrawlDelay(origin, tc.crawlDelay, t0)
			var starts []time.Time
			now := t0
			for range 20 {
				now = acquireAt(t, g, origin, now)
				starts = append(starts, now)
				g.Release(origin, now.Add(10*time.Millisecond), Result{Status: 200})
			}
			if starts[0].Sub(t0) < tc.want {
				t.Errorf("first start %v after the gate's start, want ≥ %v (restart safety)", starts[0].Sub(t0), tc.want)
			}
			for i := 1; i < len(starts); i++ {
				if gap := starts[i].Sub(starts[i-1]); gap < tc.want {
					t.Fatalf("starts %d and %d are %v apart, want ≥ %v", i-1, i, gap, tc.want)
				} else if gap > tc.want+tc.want/10+10*time.Millisecond {
					t.Fatalf("starts %d and %d are %v apart: slower than %v needs", i-1, i, gap, tc.want)
				}
			}
		})
	}
}

func TestGateHostsAreIndependent(t *testing.T) {
	g := New(Config{Delay: time.Second}, t0)
	now := t0.Add(time.Hour)
	if ok, _ := g.Acquire("http://127.0.0.2:8001", now); !ok {
		t.Fatal("first host refused")
	}
	if ok, _ := g.Acquire("http://127.0.0.3:8001", now); !ok {
		t.Fatal("second host refused while only the first is busy")
	}
}

func TestGateMaxPerHost(t *testing.T) {
	g := New(Config{MaxPerHost: 2}, t0)
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("1st refused")
	}
	g.Sent(origin, t0)
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("2nd refused")
	}
	g.Sent(origin, t0)
	ok, at := g.Acquire(origin, t0)
	if ok || !at.IsZero() {
		t.Fatalf("3rd: got (%v, %v), want refused until a release", ok, at)
	}
	if _, ok := g.Ready(origin, t0); ok {
		t.Fatal("Ready says ok with the host full")
	}
	g.Release(origin, t0, Result{Status: 200})
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("refused after a release")
	}
}

func TestGateSentKeepsDistanceFromWire(t *testing.T) {
	g := New(Config{Delay: time.Second}, t0)
	now := acquireAt(t, g, origin, t0)
	g.Sent(origin, now.Add(300*time.Millisecond)) // left late
	g.Release(origin, now.Add(400*time.Millisecond), Result{Status: 200})
	next := acquireAt(t, g, origin, now)
	if gap := next.Sub(now.Add(300 * time.Millisecond)); gap < time.Second {
		t.Fatalf("next start %v after the last one went out, want ≥ 1s", gap)
	}
}

// A request whose headers go out as its timeout fires is seen going out
// (SentLate) after its Release. The server may have it, so the next start
// keeps the interval from it; the counts Release settled stay as they are.
func TestGateSentLateKeepsTheInterval(t *testing.T) {
	g := New(Config{Delay: 2 * time.Second, MaxPerHost: 2}, t0)
	now := acquireAt(t, g, origin, t0)
	done := now.Add(30 * time.Second)
	g.Release(origin, done, Result{Err: context.DeadlineExceeded, Unsent: true})
	late := done.Add(500 * time.Millisecond)
	g.SentLate(origin, late)
	next := acquireAt(t, g, origin, done)
	if gap := next.Sub(late); gap < 2*time.Second {
		t.Fatalf("next start %v after the late send, want ≥ 2s", gap)
	}
	// The late send ends no other request's hold: the one just granted
	// has not gone out, and nothing more is granted until it does.
	g.SentLate(origin, next)
	if ok, at := g.Acquire(origin, next.Add(time.Hour)); ok || !at.IsZero() {
		t.Fatalf("granted (%v, %v) while the request granted has not gone out", ok, at)
	}
	g.Sent(origin, next)
	if at, ok := g.Ready(origin, next); !ok || at.Before(next.Add(2*time.Second)) {
		t.Fatalf("Ready = (%v, %v) after the second went out, want ≥ 2s after it", at.Sub(next), ok)
	}
}

// A request that fails before it is seen going out may still go out, its
// SentLate not yet told: the gate counts it as started when it is released,
// and Ready keeps the interval from then. One that never went out for sure
// (no error) does not move the clock.
func TestGateUnsentFailureCountsAsStarted(t *testing.T) {
	g := New(Config{Delay: 2 * time.Second}, t0)
	now := acquireAt(t, g, origin, t0)
	done := now.Add(30 * time.Second)
	g.Release(origin, done, Result{Err: context.DeadlineExceeded, Unsent: true})
	if at, ok := g.Ready(origin, done); !ok || at.Before(done.Add(2*time.Second)) {
		t.Fatalf("Ready = (%v, %v) after an unsent failure, want ≥ 2s after its release", at.Sub(done), ok)
	}

	g = New(Config{Delay: 2 * time.Second}, t0)
	now = acquireAt(t, g, origin, t0)
	g.Release(origin, now.Add(30*time.Second), Result{Status: 200, Unsent: true})
	if at, ok := g.Ready(origin, now.Add(30*time.Second)); !ok || at.After(now.Add(30*time.Second)) {
		t.Fatalf("Ready = (%v, %v) after a request never sent, want at once", at.Sub(now), ok)
	}
}

func TestGateRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header string
		want   time.Duration
	}{
		{"429 seconds", 429, "120", 120 * time.Second},
		{"503 date", 503, t0.Add(90 * time.Second).Format("Mon, 02 Jan 2006 15:04:05 GMT"), 90 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(Config{}, t0)
			now := acquireAt(t, g, origin, t0)
			out := g.Release(origin, now, Result{Status: tc.status, RetryAfter: tc.header})
			if !out.Wait || out.Until.Sub(now) != tc.want {
				t.Fatalf("Release: %+v, want wait of %v", out, tc.want)
			}
			if out.RetryAt.Before(out.Until) {
				t.Fatalf("Release: %+v, want the URL retried after the host's wait", out)
			}
			if ok, at := g.Acquire(origin, now.Add(tc.want-time.Millisecond)); ok || at.Before(now.Add(tc.want)) {
				t.Fatalf("Acquire before Retry-After ran out: (%v, %v)", ok, at)
			}
			if ok, _ := g.Acquire(origin, now.Add(tc.want)); !ok {
				t.Fatal("Acquire refused once Retry-After ran out")
			}
		})
	}
}

func TestGateRetryAfterNeverShortened(t *testing.T) {
	g := New(Config{}, t0)
	g.Acquire(origin, t0)
	g.Acquire(origin, t0)
	g.Release(origin, t0, Result{Status: 503, RetryAfter: "600"})
	out := g.Release(origin, t0, Result{Status: 503, RetryAfter: "5"})
	if got := out.Until.Sub(t0); got != 600*time.Second {
		t.Fatalf("a later, shorter Retry-After cut the wait to %v", got)
	}
}

func TestGateBackoffGrowsAndResets(t *testing.T) {
	g := New(Config{BackoffBase: time.Second, BackoffMax: time.Minute, Seed: 1}, t0)
	now := t0
	var waits []time.Duration
	for range 8 {
		now = acquireAt(t, g, origin, now)
		out := g.Release(origin, now, Result{Err: errors.New("connection refused")})
		waits = append(waits, out.Until.Sub(now))
		now = out.Until
	}
	for i, w := range waits {
		ceiling := min(time.Second<<i, time.Minute)
		if w < ceiling/2 || w > ceiling {
			t.Errorf("backoff %d = %v, want in [%v, %v]", i+1, w, ceiling/2, ceiling)
		}
	}
	now = acquireAt(t, g, origin, now)
	if out := g.Release(origin, now, Result{Status: 200}); out.Wait {
		t.Fatal("a 200 still waits")
	}
	now = acquireAt(t, g, origin, now)
	if w := g.Release(origin, now, Result{Status: 503}).Until.Sub(now); w > time.Second {
		t.Fatalf("backoff after a success restarted at %v, want ≤ 1s", w)
	}
}

func TestGateParks(t *testing.T) {
	g := New(Config{GiveUp: time.Hour, MaxStreak: 3}, t0)
	g.Acquire(origin, t0)
	out := g.Release(origin, t0, Result{Status: 429, RetryAfter: "7200"})
	if !strings.Contains(out.Parked, "retry-after") {
		t.Fatalf("a 2h Retry-After with a 1h give-up: Parked = %q", out.Parked)
	}
	if ok, at := g.Acquire(origin, t0.Add(3*time.Hour)); ok || !at.IsZero() {
		t.Fatal("a parked host was granted a slot")
	}
	g.Unpark(origin)
	if ok, _ := g.Acquire(origin, t0.Add(3*time.Hour)); !ok {
		t.Fatal("refused after Unpark")
	}

	other := "http://127.0.0.9:1"
	now := t0
	for i := range 3 {
		now = acquireAt(t, g, other, now)
		out = g.Release(other, now, Result{Status: 502})
		if parked := out.Parked != ""; parked != (i == 2) {
			t.Fatalf("failure %d: Parked = %q", i+1, out.Parked)
		}
		now = out.RetryAt
	}
}

func TestGateSnapshot(t *testing.T) {
	g := New(Config{Delay: time.Second, HonorCrawlDelay: true}, t0)
	g.SetCrawlDelay(origin, 3*time.Second, t0)
	g.Wait("http://b.example", t0.Add(time.Minute), WhyRobots)
	snap := g.Snapshot(t0)
	if len(snap) != 2 || snap[0].Origin != "http://127.0.0.2:8001" || snap[1].Origin != "http://b.example" {
		t.Fatalf("Snapshot = %+v", snap)
	}
	if snap[0].Delay != 3*time.Second || snap[0].DelayWhy != WhyCrawlDelay {
		t.Errorf("host 0: delay %v (%s), want 3s (crawl-delay)", snap[0].Delay, snap[0].DelayWhy)
	}
	if !snap[1].Waiting || snap[1].WaitingWhy != WhyRobots || !snap[1].NextAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("host 1: %+v, want waiting on robots until +1m", snap[1])
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{" 30 ", 30 * time.Second, true},
		{"Sat, 21 Nov 2026 12:01:00 GMT", time.Minute, true},
		{"Sat, 21 Nov 2026 11:00:00 GMT", 0, true},
		{"Saturday, 21-Nov-26 12:00:10 GMT", 10 * time.Second, true},
		{"-5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{"99999999999999999999", 0, false},
		{"9999999999999", time.Duration(1<<63 - 1).Truncate(time.Second), true},
	} {
		got, ok := ParseRetryAfter(tc.in, t0)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "Sat, 21 Nov 2026 12:01:00 GMT", "-1", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := ParseRetryAfter(s, t0); d < 0 || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v", s, d, ok)
		}
	})
}

func TestGateCrawlDelayCountsFromTheRobotsRequest(t *testing.T) {
	g := New(Config{HonorCrawlDelay: true}, t0)
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("robots.txt request refused")
	}
	g.Release(origin, t0.Add(5*time.Millisecond), Result{Status: 200})
	g.SetCrawlDelay(origin, 300*time.Millisecond, t0.Add(5*time.Millisecond))
	next := acquireAt(t, g, origin, t0.Add(5*time.Millisecond))
	if gap := next.Sub(t0); gap < 300*time.Millisecond {
		t.Fatalf("the first page started %v after robots.txt; Crawl-delay is 300ms", gap)
	}
}

// With max_per_host above 1, a request granted but slow to leave (a dial, a
// busy machine) must not let the next one be granted before it is on the
// wire: the next would then go out too close after it.
func TestGateHoldsNextGrantUntilSent(t *testing.T) {
	g := New(Config{Delay: time.Second, MaxPerHost: 2}, t0)
	now := acquireAt(t, g, origin, t0)
	later := now.Add(2 * time.Second)
	if ok, at := g.Acquire(origin, later); ok || !at.IsZero() {
		t.Fatalf("granted (%v, %v) while the first request has not gone out", ok, at)
	}
	if _, ok := g.Ready(origin, later); ok {
		t.Fatal("Ready says ok while the first request has not gone out")
	}
	left := now.Add(1900 * time.Millisecond)
	g.Sent(origin, left)
	next := acquireAt(t, g, origin, left)
	if gap := next.Sub(left); gap < time.Second {
		t.Fatalf("second start %v after the first went out, want ≥ 1s", gap)
	}
	// A request that fails before it is sent frees the host too.
	g.Release(origin, next, Result{Err: errors.New("dial"), Unsent: true})
	if _, ok := g.Ready(origin, next.Add(time.Hour)); !ok {
		t.Fatal("host still held after its unsent request was released")
	}
}

// A server busy when a request arrives sees it later than it was sent: the
// next start keeps its distance from the first byte of the answer, the
// latest moment the server can have seen the request.
func TestGateAnsweredKeepsDistanceAsTheServerSeesIt(t *testing.T) {
	g := New(Config{Delay: time.Second, MaxPerHost: 2}, t0)
	now := acquireAt(t, g, origin, t0)
	g.Sent(origin, now)
	answered := now.Add(300 * time.Millisecond)
	g.Answered(origin, now, answered)
	g.Release(origin, answered, Result{Status: 200})
	next := acquireAt(t, g, origin, answered)
	if gap := next.Sub(answered); gap < time.Second {
		t.Fatalf("next start %v after the answer began, want ≥ 1s", gap)
	}
	g.Sent(origin, next)

	// An answer to an older request, once a later one went out, changes
	// nothing: the later start is the one to keep distance from.
	third := acquireAt(t, g, origin, next) // granted at next+1s, in flight with the second
	g.Sent(origin, third)
	g.Answered(origin, next, third.Add(500*time.Millisecond))
	g.Release(origin, third.Add(500*time.Millisecond), Result{Status: 200})
	if at, ok := g.Ready(origin, third); !ok || at.Sub(third) > time.Second+20*time.Millisecond {
		t.Fatalf("Ready = (%v, %v), want about 1s after the third start", at.Sub(third), ok)
	}
}

// The server reads a request a little after it was sent (more on a loaded
// machine): a start is kept that much further from the last one, so two
// starts are not closer than the delay as the server stamps them, even
// when the last request is still in flight.
func TestGateKeepsSlackOverTheDelay(t *testing.T) {
	g := New(Config{Delay: 100 * time.Millisecond, MaxPerHost: 2}, t0)
	first := acquireAt(t, g, origin, t0)
	sent := first.Add(5 * time.Millisecond) // later than the grant: the limiter's own slack is spent
	g.Sent(origin, sent)
	next := acquireAt(t, g, origin, sent)
	if gap := next.Sub(sent); gap < 102*time.Millisecond {
		t.Fatalf("second start %v after the first went out, want ≥ 102ms (100ms and 2ms of slack)", gap)
	}
}

// With no interval to keep (no delay, no Crawl-delay), a request granted
// but not yet sent does not hold the next grant: max_per_host requests may
// start together. The bound on requests in flight still holds.
func TestGateNoHoldWithoutInterval(t *testing.T) {
	g := New(Config{MaxPerHost: 2}, t0)
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("1st refused")
	}
	if ok, at := g.Acquire(origin, t0); !ok {
		t.Fatalf("2nd refused (%v) while the 1st is unsent, with no interval to keep", at)
	}
	if ok, at := g.Acquire(origin, t0); ok || !at.IsZero() {
		t.Fatalf("3rd: got (%v, %v), want refused until a release", ok, at)
	}
	// A Crawl-delay brings the hold back.
	g = New(Config{MaxPerHost: 2, HonorCrawlDelay: true}, t0)
	g.SetCrawlDelay(origin, time.Second, t0)
	now := acquireAt(t, g, origin, t0)
	if ok, at := g.Acquire(origin, now.Add(time.Hour)); ok || !at.IsZero() {
		t.Fatalf("granted (%v, %v) with a Crawl-delay while the first request has not gone out", ok, at)
	}
}

// Changed wakes a caller refused with a zero time when the request that
// held the host goes out, and when it is released.
func TestGateChangedWakesOnSentAndRelease(t *testing.T) {
	g := New(Config{Delay: time.Second, MaxPerHost: 2}, t0)
	now := acquireAt(t, g, origin, t0)
	ch := g.Changed(origin)
	if ok, at := g.Acquire(origin, now); ok || !at.IsZero() {
		t.Fatalf("got (%v, %v), want held until sent", ok, at)
	}
	select {
	case <-ch:
		t.Fatal("closed before anything changed")
	default:
	}
	g.Sent(origin, now)
	select {
	case <-ch:
	default:
		t.Fatal("not closed by Sent")
	}
	ch = g.Changed(origin)
	g.Release(origin, now, Result{Status: 200})
	select {
	case <-ch:
	default:
		t.Fatal("not closed by Release")
	}
}

// A Retry-After of 0 or of a past date is no licence to ask again at once:
// the host backs off as if none were given, and never rests less than its
// interval.
func TestGateRetryAfterNowBacksOff(t *testing.T) {
	for _, header := range []string{"0", t0.Add(-time.Hour).Format(http.TimeFormat)} {
		t.Run(header, func(t *testing.T) {
			const delay = 3 * time.Second
			g := New(Config{Delay: delay, BackoffBase: time.Second, BackoffMax: time.Minute, MaxStreak: 100, Seed: 1}, t0)
			now := t0
			var total time.Duration
			for i := range 10 {
				now = acquireAt(t, g, origin, now)
				out := g.Release(origin, now, Result{Status: 429, RetryAfter: header})
				w := out.Until.Sub(now)
				floor := max(delay, min(time.Second<<i, time.Minute)/2)
				if !out.Wait || w < floor {
					t.Fatalf("answer %d: wait %v, want ≥ %v", i+1, w, floor)
				}
				if ok, _ := g.Acquire(origin, out.Until.Add(-time.Millisecond)); ok {
					t.Fatalf("answer %d: Acquire granted before the wait ran out", i+1)
				}
				total += w
				now = out.Until
			}
			if total < 2*time.Minute {
				t.Errorf("10 answers of Retry-After %q spread over %v, want backoff (≥ 2m)", header, total)
			}
		})
	}
}

// EndWait ends a wait for the reason given, and only that one; the host's
// interval still holds.
func TestGateEndWait(t *testing.T) {
	const origin = "http://a.test"
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	g := New(Config{Delay: time.Second}, t0.Add(-time.Hour))
	g.Wait(origin, t0.Add(time.Hour), WhyRobots)
	g.EndWait(origin, WhyRetryAfter, t0)
	if ok, _ := g.Acquire(origin, t0); ok {
		t.Fatal("a wait for robots.txt ended by EndWait for another reason")
	}
	g.EndWait(origin, WhyRobots, t0)
	if ok, at := g.Acquire(origin, t0); !ok {
		t.Fatalf("refused until %v after EndWait", at)
	}
}

// A request abandoned because the crawl is stopping tells nothing of the
// host: its error streak stays, and it is not parked or made to wait.
func TestGateAbandonedLeavesTheHost(t *testing.T) {
	const origin = "http://a.test"
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	g := New(Config{MaxStreak: 2}, t0.Add(-time.Hour))
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("refused")
	}
	g.Release(origin, t0, Result{Status: 500})
	t1 := t0.Add(time.Hour)
	if ok, at := g.Acquire(origin, t1); !ok {
		t.Fatalf("refused until %v", at)
	}
	if out := g.Release(origin, t1, Result{Abandoned: true, Unsent: true}); out.Wait || out.Parked != "" {
		t.Errorf("abandoned request: %+v, want no verdict", out)
	}
	if ok, at := g.Acquire(origin, t1.Add(time.Minute)); !ok {
		t.Fatalf("refused until %v after an abandoned request", at)
	}
	if out := g.Release(origin, t1.Add(time.Minute), Result{Status: 500}); out.Parked == "" {
		t.Errorf("second failure: %+v, want parked at a streak of 2 (the abandoned one not counted as a success)", out)
	}
}

// With a delay factor a host waits after an answer that many times as long
// as the answer took, capped at MaxDelay, and longer than its delay only
// when that is longer.
func TestGateDelayFactor(t *testing.T) {
	g := New(Config{Delay: 100 * time.Millisecond, DelayFactor: 2, MaxDelay: 3 * time.Second}, t0)
	base := t0
	for _, tc := range []struct {
		took, want time.Duration // want: from the answer's end to the next start
	}{
		{10 * time.Millisecond, 0}, // 20ms: the delay, counted from the start, is longer
		{400 * time.Millisecond, 800 * time.Millisecond},
		{5 * time.Second, 3 * time.Second}, // 10 s, capped
	} {
		base = base.Add(time.Hour) // each case an hour after the one before
		start := acquireAt(t, g, origin, base)
		g.Sent(origin, start)
		end := start.Add(tc.took)
		g.Release(origin, end, Result{Status: 200, Took: tc.took})
		next := acquireAt(t, g, origin, end)
		floor := end.Add(tc.want)
		if d := start.Add(100 * time.Millisecond); d.After(floor) {
			floor = d
		}
		if next.Before(floor) || next.After(floor.Add(10*time.Millisecond)) {
			t.Errorf("answer of %v: next start %v after its end, want %v", tc.took, next.Sub(end), floor.Sub(end))
		}
		g.Release(origin, next, Result{Status: 200, Unsent: true})
	}
}

// A bandwidth cap puts the host's next start off by bytes/cap from the
// request's own start, and answers that overlap add up.
func TestGateBandwidthCap(t *testing.T) {
	g := New(Config{MaxPerHost: 2, MaxBytesPerSecond: 1000}, t0)
	a := acquireAt(t, g, origin, t0)
	b := acquireAt(t, g, origin, t0)
	g.Sent(origin, a)
	g.Sent(origin, b)
	// Two answers of 500 bytes that took 100 ms each: a second's worth.
	g.Release(origin, t0.Add(100*time.Millisecond), Result{Status: 200, Took: 100 * time.Millisecond, Bytes: 500})
	g.Release(origin, t0.Add(100*time.Millisecond), Result{Status: 200, Took: 100 * time.Millisecond, Bytes: 500})
	next := acquireAt(t, g, origin, t0.Add(100*time.Millisecond))
	if want := t0.Add(time.Second); next.Before(want) || next.After(want.Add(10*time.Millisecond)) {
		t.Errorf("next start %v after the first, want 1s: 1000 bytes at 1000 B/s", next.Sub(t0))
	}
	if s := g.Snapshot(t0.Add(500 * time.Millisecond)); s[0].WaitingWhy != WhyBandwidth {
		t.Errorf("waiting for %q, want %q", s[0].WaitingWhy, WhyBandwidth)
	}
}

// A 5xx other than 503 is the URL's: the URL backs off on its own, its
// backoff growing with its attempts, and the host keeps its interval.
// 429, 503 and network errors are the host's: it waits.
func TestGateURLFailureKeepsTheHost(t *testing.T) {
	const delay = time.Second
	for _, tc := range []struct {
		name      string
		r         Result
		hostWaits bool
	}{
		{"500", Result{Status: 500}, false},
		{"502", Result{Status: 502}, false},
		{"504", Result{Status: 504}, false},
		{"503", Result{Status: 503}, true},
		{"503 Retry-After", Result{Status: 503, RetryAfter: "5"}, true},
		{"429", Result{Status: 429}, true},
		{"refused", Result{Err: errors.New("connect: connection refused")}, true},
		{"timeout", Result{Err: context.DeadlineExceeded}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(Config{Delay: delay, BackoffBase: 2 * time.Second, BackoffMax: time.Minute, Seed: 1}, t0)
			for attempt := range 4 {
				now := acquireAt(t, g, origin, t0.Add(time.Duration(attempt)*time.Hour))
				r := tc.r
				r.URL, r.Attempt = origin+"/a", attempt
				out := g.Release(origin, now, r)
				if !out.Failed || out.Wait != tc.hostWaits || out.Parked != "" {
					t.Fatalf("attempt %d: %+v, want failed, host waiting %v", attempt, out, tc.hostWaits)
				}
				from := now
				if out.Wait {
					from = out.Until
				}
				ceiling := 2 * time.Second << attempt
				if w := out.RetryAt.Sub(from); w < ceiling/2 || w > ceiling {
					t.Errorf("attempt %d: the URL is due %v after the host may be asked, want in [%v, %v]", attempt, w, ceiling/2, ceiling)
				}
				next, ok := g.Ready(origin, now)
				switch {
				case !ok:
					t.Fatalf("attempt %d: host not ready", attempt)
				case !tc.hostWaits && next.Sub(now) > delay+delay/10:
					t.Errorf("attempt %d: host next asked %v later, want its interval (%v)", attempt, next.Sub(now), delay)
				case tc.hostWaits && next.Before(out.Until):
					t.Errorf("attempt %d: host asked again before its wait ended", attempt)
				}
			}
		})
	}
}

// Several different URLs failing in a row trip the breaker: the whole host
// backs off. One URL failing again does not count twice, and an answer
// that is no failure resets the count.
func TestGateBreaker(t *testing.T) {
	g := New(Config{Seed: 1}, t0)
	now := t0.Add(time.Hour)
	fail := func(url string, status int) Outcome {
		t.Helper()
		now = acquireAt(t, g, origin, now)
		out := g.Release(origin, now, Result{Status: status, URL: url})
		if out.Wait {
			now = out.Until
		}
		return out
	}
	for _, u := range []string{"/a", "/a", "/b", "/a", "/b"} {
		if out := fail(u, 500); out.Wait {
			t.Fatalf("%s: host waits with two different URLs failing: %+v", u, out)
		}
	}
	out := fail("/c", 502)
	if !out.Wait || g.Snapshot(now.Add(-time.Millisecond))[0].WaitingWhy != WhyBreaker {
		t.Fatalf("third different URL failing: %+v, want the host backing off (breaker)", out)
	}
	if out := fail("/a", 500); !out.Wait {
		t.Fatalf("a failure with the breaker tripped: %+v, want the host backing off", out)
	}
	now = acquireAt(t, g, origin, now)
	g.Release(origin, now, Result{Status: 404, URL: "/d"})
	for _, u := range []string{"/a", "/b"} {
		if out := fail(u, 500); out.Wait {
			t.Fatalf("%s after a success: %+v, want the breaker reset", u, out)
		}
	}
}

// The host's backoff after 503s grows with the different URLs failing, not
// with one URL failing again, so that a few bad URLs cannot drive it up;
// Config.MaxStreak different URLs in a row park the host.
func TestGateBackoffCountsDifferentURLs(t *testing.T) {
	g := New(Config{BackoffBase: time.Second, BackoffMax: time.Hour, MaxStreak: 10, Seed: 1}, t0)
	now := t0.Add(time.Hour)
	// release fails url with a 503 and returns the verdict and how long
	// the host waits.
	release := func(url string) (Outcome, time.Duration) {
		t.Helper()
		now = acquireAt(t, g, origin, now)
		out := g.Release(origin, now, Result{Status: 503, URL: url})
		if !out.Wait {
			t.Fatalf("%s: a 503 did not make the host wait: %+v", url, out)
		}
		w := out.Until.Sub(now)
		now = out.Until
		return out, w
	}
	for i := range 20 {
		if _, w := release("/a"); w > time.Second {
			t.Fatalf("/a failing for the %d. time: the host waits %v, want ≤ 1s", i+1, w)
		}
	}
	for i := 2; i <= 10; i++ {
		out, w := release(fmt.Sprintf("/%d", i))
		ceiling := time.Second << (i - 1)
		if w < ceiling/2 || w > ceiling {
			t.Errorf("%d different URLs failing: the host waits %v, want in [%v, %v]", i, w, ceiling/2, ceiling)
		}
		if parked := out.Parked != ""; parked != (i == 10) {
			t.Fatalf("%d different URLs failing: parked %q", i, out.Parked)
		}
	}
}

// A backoff is counted in the host's own pace: its first step is two of
// the host's intervals, and at least BackoffBase.
func TestGateBackoffFollowsTheInterval(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		want  time.Duration // the first step, before jitter
	}{
		{"no delay", 0, 100 * time.Millisecond},
		{"50ms", 50 * time.Millisecond, 100 * time.Millisecond},
		{"1s", time.Second, 2 * time.Second},
		{"5s", 5 * time.Second, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(Config{Delay: tc.delay, Seed: 1}, t0)
			now := acquireAt(t, g, origin, t0.Add(time.Hour))
			out := g.Release(origin, now, Result{Status: 503, URL: "/a"})
			if w := out.Until.Sub(now); w < max(tc.want/2, tc.delay) || w > tc.want {
				t.Errorf("host waits %v after a 503, want in [%v, %v]", w, max(tc.want/2, tc.delay), tc.want)
			}
			now = acquireAt(t, g, origin, out.Until)
			out = g.Release(origin, now, Result{Status: 500, URL: "/b", Attempt: 1})
			if w := out.RetryAt.Sub(now); w < tc.want || w > 2*tc.want {
				t.Errorf("a URL failing its second attempt is due %v later, want in [%v, %v]", w, tc.want, 2*tc.want)
			}
		})
	}
}
