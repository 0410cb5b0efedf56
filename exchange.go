package crawler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/politecrawl/crawler/politeness"
)

// exchange is the one path of every request the crawl makes — pages,
// sitemaps, robots.txt and each of its redirect hops: a slot of the host
// is taken (try, or wait for a redirect hop that cannot go back to the
// queue), the request is sent (do), the gate hears when it went out and
// when its answer began, and the slot is given back with what came of it.
// Every time comes from the crawl's one clock, and every request is
// counted once, by the observer.
type exchange struct {
	hosts *hosts
	fetch *fetcher
	obs   *observer
	now   func() time.Time
}

// try takes a slot of origin at now; when the gate refuses, it returns
// false and when to come back (zero: when a request of the host ends).
func (x *exchange) try(origin string, now time.Time) (bool, time.Time) {
	return x.hosts.acquire(origin, now)
}

// errHostParked refuses a wait for a host the crawl gave up on.
var errHostParked = errors.New("host given up on")

// wait takes a slot of origin, waiting for the host's turn. A refusal with
// no time (a request in flight or not yet sent) waits for the gate to say
// the host changed, which a send or a release does at once; a parked host
// is refused with errHostParked.
func (x *exchange) wait(ctx context.Context, origin string) error {
	for {
		changed := x.hosts.gate.Changed(origin) // before acquire: no change missed
		ok, at := x.hosts.acquire(origin, x.now())
		if ok {
			return nil
		}
		if at.IsZero() && x.hosts.gate.Parked(origin) {
			return fmt.Errorf("%s: %w", origin, errHostParked)
		}
		if at.IsZero() && x.hosts.shared != nil {
			if ours, when := x.hosts.shared.owns(origin, x.now()); !ours {
				if !x.hosts.shared.mine(origin) {
					return fmt.Errorf("%s: %w", origin, errNotOurs)
				}
				at = when // this worker's, not yet to be asked: waited for
			}
		}
		var due <-chan time.Time // nil, never ready, when at is zero
		var t *time.Timer
		if !at.IsZero() {
			t = time.NewTimer(max(at.Sub(x.now()), time.Millisecond))
			due = t.C
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// giveBack returns a slot taken by try or wait whose request was not made.
func (x *exchange) giveBack(origin string) {
	x.hosts.release(origin, x.now(), politeness.Result{Status: 200, Unsent: true})
}

// do sends r on the slot held for origin and gives the slot back. keep, if
// not nil, sees the answer before the slot is free, so that what must be
// known before the host's next request is known. It returns the answer
// (nil, with an error, when none came) and the gate's verdict. A request
// abandoned because ctx ended is not counted.
func (x *exchange) do(ctx context.Context, origin string, r request, keep func(*response, error)) (*response, politeness.Outcome, error) {
	var guard sentGuard
	r.sent = func(t time.Time) { guard.sent(x.hosts, origin, t) }
	r.answered = func(t time.Time) {
		if sent := guard.sentAt(); !sent.IsZero() {
			x.hosts.answered(origin, sent, t)
		}
	}
	resp, err := x.fetch.get(ctx, r)
	if keep != nil {
		keep(resp, err)
	}
	res := politeness.Result{Err: err}
	switch {
	case err != nil && ctx.Err() != nil:
		res = politeness.Result{Abandoned: true} // the crawl is stopping: nothing said of the host
	case err == nil:
		res = politeness.Result{Status: resp.status, RetryAfter: resp.header.Get("Retry-After"),
			Took: resp.duration, Bytes: int64(len(resp.body))}
	}
	res.URL, res.Attempt = r.url, r.attempt
	res.Unsent = guard.release()
	out := x.hosts.release(origin, x.now(), res)
	// The release readied the host and woke the dispatcher, which Go runs
	// on this processor only once this goroutine blocks or is preempted
	// (up to 10 ms of parsing later). Yielding lets the dispatcher hand out
	// the host's next URL, and its worker send the request, before this
	// one goes on to parse and save the answer.
	runtime.Gosched()
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		x.obs.request(0, 0, 0)
	default:
		x.obs.request(resp.status, len(resp.body), resp.duration)
	}
	return resp, out, err
}

// sentGuard stands between one request and the gate's Sent. net/http may
// call the WroteHeaders hook after Do returned, when a timeout fires while
// the headers are written: a Sent reaching the gate after the slot's
// release would count as another request's, and end that one's hold before
// it went out. Once released, the guard passes a send on as SentLate,
// which keeps the interval from it and leaves the counts alone.
type sentGuard struct {
	mu       sync.Mutex
	at       time.Time // when the request went out; zero before
	released bool
}

// sent tells the hosts that the request to origin went out at t, once: as
// Sent while the slot is held, as SentLate after. They hear it under the
// guard's lock, so a release cannot come between the check and the telling.
func (s *sentGuard) sent(h *hosts, origin string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.at.IsZero() {
		return
	}
	s.at = t
	if s.released {
		h.sentLate(origin, t)
		return
	}
	h.sent(origin, t)
}

// sentAt is when the request went out; zero before.
func (s *sentGuard) sentAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at
}

// release closes the guard before the slot is released, and reports
// whether the request never went out (politeness.Result.Unsent).
func (s *sentGuard) release() (unsent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = true
	return s.at.IsZero()
}
