package crawler

import (
	"sync"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// sitemapsOut makes a host's links wait while one of its sitemaps is read.
// A URL the sitemap lists is at depth 0 (CONTRACT.md), but the frontier can
// only lower the depth of a URL still queued: were /a, found by a link at
// depth 1, handed out while the sitemap listing it was being parsed, it
// would be fetched at depth 1 and its own links counted from there, which
// max_depth would cut short. Sitemaps go first in their host's queue (they
// are queued at the top priority), so the wait is for one parse at most.
//
// Only the leases of the sitemap's own origin wait (the sitemaps protocol
// keeps a sitemap's URLs on its host); the dispatcher goes on with other
// hosts. The zero value is ready to use.
type sitemapsOut struct {
	mu   sync.Mutex
	out  map[string]int  // origin → its sitemap leases in flight
	held map[string]bool // origins the dispatcher put off until then
}

// start counts a sitemap lease of origin handed to a worker.
func (s *sitemapsOut) start(origin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		s.out, s.held = map[string]int{}, map[string]bool{}
	}
	s.out[origin]++
}

// end counts a sitemap lease of origin finished, its URLs in the frontier,
// and, when it was the last of its host and a link was put off, makes the
// host ready again.
func (s *sitemapsOut) end(origin string, c *Crawler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out[origin]--; s.out[origin] > 0 {
		return
	}
	delete(s.out, origin)
	if s.held[origin] {
		delete(s.held, origin)
		c.hostReady(origin, c.now())
	}
}

// hold reports whether lease l, a link of a host with a sitemap being
// read, must wait; if so it gives l back and keeps the host from being
// handed out until end. Pages at depth 0 have nothing to gain and go on.
func (s *sitemapsOut) hold(l *frontier.Lease, c *Crawler) bool {
	if l.Kind != frontier.KindPage || l.Depth == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out[l.Origin] == 0 {
		return false
	}
	if err := c.front.Release(l, time.Time{}); err != nil {
		c.fail("release "+l.Request, err)
	}
	c.front.SetReady(l.Origin, farFuture)
	s.held[l.Origin] = true
	return true
}
