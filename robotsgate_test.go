package crawler

import (
	"context"
	"testing"
	"time"

	"github.com/politecrawl/crawler/politeness"
)

// A redirect hop of robots.txt waiting for a host whose slot is taken is
// granted as soon as the slot is released, not at its next poll: the gate
// answers "no time" for a request in flight or not yet sent, which lasts
// milliseconds. The deadline is below the one-second poll it replaced.
func TestAcquireWaitingWakesOnRelease(t *testing.T) {
	const origin = "http://127.0.0.2:8001"
	c := &Crawler{gate: politeness.New(politeness.Config{MaxPerHost: 1}, time.Now()), now: time.Now}
	if ok, _ := c.gate.Acquire(origin, c.now()); !ok {
		t.Fatal("first Acquire refused")
	}
	go func() {
		time.Sleep(20 * time.Millisecond) // let acquireWaiting be refused first
		c.gate.Release(origin, c.now(), politeness.Result{Status: 200})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
	defer cancel()
	if err := c.acquireWaiting(ctx, origin); err != nil {
		t.Fatalf("acquireWaiting: %v, want the slot once released", err)
	}
}

// A Sent that net/http reports after the visit released its slot (a timeout
// firing while the headers were written) must not reach the gate: it would
// end the hold of the next request to the host, granted but not yet sent.
func TestSentAfterReleaseIgnored(t *testing.T) {
	const origin = "http://127.0.0.2:8001"
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	g := politeness.New(politeness.Config{Delay: time.Second, MaxPerHost: 2}, t0.Add(-time.Hour))
	if ok, _ := g.Acquire(origin, t0); !ok {
		t.Fatal("first Acquire refused")
	}
	var first sentGuard
	g.Release(origin, t0, politeness.Result{Err: context.DeadlineExceeded, Unsent: first.release()})
	next := t0.Add(2 * time.Second)
	if ok, at := g.Acquire(origin, next); !ok {
		t.Fatalf("second Acquire refused (%v)", at)
	}
	if first.sent(g, origin, next) {
		t.Error("a Sent after the release was let through")
	}
	// The second request has not gone out: the host stays held.
	if ok, at := g.Acquire(origin, next.Add(time.Hour)); ok || !at.IsZero() {
		t.Fatalf("granted (%v, %v) while the second request has not gone out", ok, at)
	}
}
