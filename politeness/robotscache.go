package politeness

import (
	"container/list"
	"sync"
	"time"

	"github.com/politecrawl/crawler/robots"
)

// RobotsAction says what a caller of RobotsCache.Lookup must do.
type RobotsAction uint8

// The answers of Lookup.
const (
	// RobotsReady: the group applies; go on.
	RobotsReady RobotsAction = iota
	// RobotsFetch: robots.txt must be fetched first, and this caller is the
	// one to do it; it must call Store (or Abandon) when done.
	RobotsFetch
	// RobotsWait: another caller is fetching robots.txt; come back later.
	RobotsWait
)

// RobotsCache keeps the robots.txt state of each host for one user agent:
// the policy of package robots (RFC 9309 §2.3–2.4) applied to each fetch,
// the group chosen once per fetch, and one fetch at a time per host however
// many workers ask. It holds at most max hosts, dropping the least recently
// used (whose robots.txt is then fetched again when needed).
//
// A RobotsCache is safe for concurrent use.
type RobotsCache struct {
	agent  string
	max    int
	maxAge time.Duration // see SetMaxAge

	mu    sync.Mutex
	lru   *list.List // of *robotsEntry, most recently used first
	index map[string]*list.Element
}

type robotsEntry struct {
	origin   string
	state    robots.State
	group    *robots.Group
	fetching bool
}

// NewRobotsCache returns a cache for userAgent (groups are chosen by its
// product token) holding at most size hosts.
func NewRobotsCache(userAgent string, size int) *RobotsCache {
	return &RobotsCache{agent: userAgent, max: max(size, 1), lru: list.New(), index: map[string]*list.Element{}}
}

func (c *RobotsCache) entry(origin string) *robotsEntry {
	if el, ok := c.index[origin]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*robotsEntry)
	}
	e := &robotsEntry{origin: origin}
	c.index[origin] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		if last.Value.(*robotsEntry).fetching {
			break // never drop an entry whose fetch is under way
		}
		delete(c.index, last.Value.(*robotsEntry).origin)
		c.lru.Remove(last)
	}
	return e
}

// Lookup says what to do about origin's robots.txt at now. With RobotsReady
// the group to apply is returned; with RobotsFetch the caller must fetch and
// Store; with RobotsWait it must come back later. The State is the current
// one (its NextFetch says when an unreachable robots.txt is tried again).
func (c *RobotsCache) Lookup(origin string, now time.Time) (RobotsAction, *robots.Group, robots.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(origin)
	switch {
	case e.fetching:
		return RobotsWait, nil, e.state
	case e.group == nil || c.stale(e.state, now):
		e.fetching = true
		return RobotsFetch, nil, e.state
	}
	return RobotsReady, e.group, e.state
}

// stale reports whether state s must be fetched again at now: its policy
// says so, or it is older than the max age SetMaxAge set. c.mu is held.
func (c *RobotsCache) stale(s robots.State, now time.Time) bool {
	return s.Due(now) || c.maxAge > 0 && now.Sub(s.FetchedAt) >= c.maxAge
}

// SetMaxAge makes robots.txt due again d after each fetch, even when its
// cache would keep it longer (a daemon revisits robots.txt with its pages);
// 0 leaves it to the policy alone.
func (c *RobotsCache) SetMaxAge(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxAge = d
}

// Store applies the result of a fetch begun by Lookup and returns the new
// state.
func (c *RobotsCache) Store(origin string, f robots.Fetch, now time.Time) robots.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(origin)
	e.state = robots.Update(e.state, f, now)
	e.group = e.state.Rules().ForAgent(c.agent)
	e.fetching = false
	return e.state
}

// Answer returns origin's state when its latest fetch was an answer (ok or
// missing) that is still fresh at now, as Lookup would use it: another host
// whose robots.txt redirects to origin's may take it rather than fetch it
// again. It does not change the cache's order, nor add the host.
func (c *RobotsCache) Answer(origin string, now time.Time) (robots.State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.index[origin]
	if !ok {
		return robots.State{}, false
	}
	s := el.Value.(*robotsEntry).state
	switch {
	case s.Result != robots.ResultOK && s.Result != robots.ResultMissing, c.stale(s, now):
		return robots.State{}, false
	}
	return s, true
}

// Peek returns origin's state without starting a fetch or changing the
// cache's order; false when the host is unknown.
func (c *RobotsCache) Peek(origin string) (robots.State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.index[origin]
	if !ok {
		return robots.State{}, false
	}
	return el.Value.(*robotsEntry).state, true
}

// Hasten makes origin's robots.txt due at at when it is due later: its
// caller asks again sooner than the policy's backoff (see EndWait).
func (c *RobotsCache) Hasten(origin string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entry(origin); e.state.NextFetch.After(at) {
		e.state.NextFetch = at
	}
}

// Abandon ends a fetch begun by Lookup that did not happen (the crawl is
// stopping, or politeness said "not now").
func (c *RobotsCache) Abandon(origin string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entry(origin).fetching = false
}

// Restore puts back a state saved before a restart, so that robots.txt is
// not fetched again before it is due.
func (c *RobotsCache) Restore(origin string, s robots.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(origin)
	e.state, e.group = s, s.Rules().ForAgent(c.agent)
}

// Status is a host's robots.txt state in a word, for /hosts: "unknown"
// (never fetched), "fetching", "ok", "missing" (4xx: all allowed) or
// "unreachable" (all disallowed for now).
func (c *RobotsCache) Status(origin string, now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.index[origin]
	if !ok {
		return "unknown"
	}
	e := el.Value.(*robotsEntry)
	switch {
	case e.fetching:
		return "fetching"
	case e.state.FetchedAt.IsZero():
		return "unknown"
	}
	return string(e.state.Result)
}
