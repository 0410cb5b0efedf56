package crawler

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// maxRefusals bounds the set of refused URLs remembered so that each is
// recorded in the inventory once; past it the set starts again, and a URL
// may be recorded twice.
const maxRefusals = 100_000

// runStats are the counts a run keeps for its progress line and summary.
type runStats struct {
	done, disallowed, errors, stateErrors atomic.Int64
	doneBefore                            int64 // pages done by earlier runs on this state

	mu        sync.Mutex
	byClass   map[string]int64
	bytes     int64
	rejected  map[string]int64
	hostPages map[string]int
	refused   map[string]struct{}
}

func newRunStats() runStats {
	return runStats{
		byClass:   map[string]int64{},
		rejected:  map[string]int64{},
		hostPages: map[string]int{},
		refused:   map[string]struct{}{},
	}
}

func (s *runStats) count(c *atomic.Int64) { c.Add(1) }

func (s *runStats) status(status, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byClass[statusClass(status)]++
	s.bytes += int64(bytes)
}

func (s *runStats) reject(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejected[reason]++
}

// firstRefusal reports whether raw was not refused before (within the
// bounded memory of maxRefusals URLs).
func (s *runStats) firstRefusal(raw string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.refused[raw]; ok {
		return false
	}
	if len(s.refused) >= maxRefusals {
		clear(s.refused)
	}
	s.refused[raw] = struct{}{}
	return true
}

// pagesOf is how many pages of origin this run fetched.
func (s *runStats) pagesOf(origin string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hostPages[origin]
}

func (s *runStats) addHostPage(origin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hostPages[origin]++
}

// Summary is what a run did, for the report at its end.
type Summary struct {
	Elapsed     time.Duration    `json:"elapsed"`
	Done        int64            `json:"done"`      // URLs completed this run
	ByStatus    map[string]int64 `json:"by_status"` // "2xx" … "5xx", "error"
	Bytes       int64            `json:"bytes"`
	Disallowed  int64            `json:"disallowed_by_robots"`
	Rejected    map[string]int64 `json:"rejected"` // URLs kept out, by reason
	Parked      []ParkedHost     `json:"parked_hosts,omitempty"`
	Queued      int64            `json:"queued"` // left in the frontier
	StateErrors int64            `json:"state_errors,omitempty"`
	BrokenLinks int              `json:"broken_mirror_links,omitempty"` // after relinking the mirror
}

// ParkedHost is a host the crawl gave up on, and why.
type ParkedHost struct {
	Origin string `json:"origin"`
	Reason string `json:"reason"`
}

func (c *Crawler) summary(started time.Time) Summary {
	s := &c.stats
	s.mu.Lock()
	sum := Summary{
		Elapsed:     c.now().Sub(started),
		Done:        s.done.Load(),
		ByStatus:    maps.Clone(s.byClass),
		Bytes:       s.bytes,
		Disallowed:  s.disallowed.Load(),
		Rejected:    maps.Clone(s.rejected),
		StateErrors: s.stateErrors.Load(),
	}
	s.mu.Unlock()
	st := c.front.Stats()
	sum.Queued = st.Queued
	for _, h := range c.gate.Snapshot(c.now()) {
		if h.Parked != "" {
			sum.Parked = append(sum.Parked, ParkedHost{Origin: h.Origin, Reason: h.Parked})
		}
	}
	slices.SortFunc(sum.Parked, func(a, b ParkedHost) int {
		if a.Origin < b.Origin {
			return -1
		}
		return 1
	})
	return sum
}
