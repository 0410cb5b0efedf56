package crawler

import (
	"container/list"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/crawler/robots"
)

// robotsShareFor is how long an answer for a robots.txt URL serves other
// hosts whose robots.txt redirects there (and that URL's own host), counted
// from when it was asked for.
const robotsShareFor = 10 * time.Minute

// robotsShareMax bounds how many robots.txt URLs the share remembers; the
// oldest are forgotten first (their hosts then fetch them again).
const robotsShareMax = 1024

// robotsShare remembers which robots.txt URL a host's robots.txt fetch
// ended at, so that one fetched as the redirect target of another host's
// robots.txt is not fetched again for its own host, nor the other way
// round: a crawl fetches no URL twice.
//
// It keeps no copy of an answer once the robots cache has it: an entry
// then names the host whose cached state holds it, and when it was asked
// for. Until then (between the end of the fetch and its store, while the
// slot the fetch held is already free) the entry holds the answer itself.
// A host's own robots.txt is kept only for that moment: afterwards its
// cached state answers for it. Only answers (2xx, 4xx) are kept, at most
// robotsShareMax URLs, each for robotsShareFor.
type robotsShare struct {
	mu    sync.Mutex
	order list.List // of *sharedRobots, in the order put, oldest first
	index map[string]*list.Element
}

type sharedRobots struct {
	key   string        // the robots.txt URL answered
	from  string        // the origin whose robots.txt fetch ended there
	asked time.Time     // when that fetch was asked for
	f     *robots.Fetch // the answer, until from's robots cache holds it
}

// robotsKey is the key of u when it is an origin's /robots.txt, else "".
func robotsKey(u *url.URL) string {
	if u.Path != "/robots.txt" || u.RawQuery != "" {
		return ""
	}
	return originOf(u) + "/robots.txt"
}

// isAnswer says whether f is an answer other hosts may share: a 2xx or a
// 4xx other than 429.
func isAnswer(f robots.Fetch) bool {
	return f.Err == nil && (f.Status >= 200 && f.Status <= 299 || f.Status >= 400 && f.Status <= 499 && f.Status != 429)
}

// put records f, the answer at key to a fetch of from's robots.txt asked
// for at asked, until settle.
func (s *robotsShare) put(key, from string, f robots.Fetch, asked, now time.Time) {
	if key == "" || !isAnswer(f) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.index == nil {
		s.index = map[string]*list.Element{}
	}
	if el, ok := s.index[key]; ok {
		s.order.Remove(el)
	}
	s.index[key] = s.order.PushBack(&sharedRobots{key: key, from: from, asked: asked, f: &f})
	// The oldest go first: past robotsShareMax, or stale. Entries are in
	// the order put, so the stale ones are mostly at the front; one put
	// late after a slow fetch only waits its turn.
	for el := s.order.Front(); el != nil; el = s.order.Front() {
		e := el.Value.(*sharedRobots)
		if s.order.Len() <= robotsShareMax && now.Sub(e.asked) < robotsShareFor {
			break
		}
		s.order.Remove(el)
		delete(s.index, e.key)
	}
}

// settle drops the answer that put recorded at key for from, once from's
// robots cache holds it (or the fetch was abandoned): a redirect target is
// then found through from's state, and from's own robots.txt through its
// own state, so it is forgotten.
func (s *robotsShare) settle(key, from string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.index[key]
	if !ok {
		return
	}
	e := el.Value.(*sharedRobots)
	switch {
	case e.from != from:
	case key == from+"/robots.txt":
		s.order.Remove(el)
		delete(s.index, key)
	default:
		e.f = nil
	}
}

// get returns what is known of key from a fetch of another origin's
// robots.txt than origin's, while fresh at now: the origin whose fetch
// ended there, when it was asked for, and the answer when the robots cache
// does not have it yet. A host's own answers are never returned to it:
// when its copy expires, it fetches robots.txt again.
func (s *robotsShare) get(key, origin string, now time.Time) (from string, asked time.Time, f *robots.Fetch, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.index[key]
	if !ok {
		return "", time.Time{}, nil, false
	}
	e := el.Value.(*sharedRobots)
	fresh := robotsShareFor
	if e.f != nil && e.f.HasMaxAge {
		fresh = min(fresh, e.f.MaxAge)
	}
	if e.from == origin || now.Sub(e.asked) >= fresh {
		return "", time.Time{}, nil, false
	}
	return e.from, e.asked, e.f, true
}

// sharedRobots returns the answer at robots.txt URL key that a fetch for
// another host than origin got, and when that fetch was asked for, while
// it is fresh at now: from the share, or from the robots cache of the host
// whose fetch ended at key, or of key's own host.
func (h *hosts) sharedRobots(key, origin string, now time.Time) (robots.Fetch, time.Time, bool) {
	if key == "" {
		return robots.Fetch{}, time.Time{}, false
	}
	if from, asked, f, ok := h.share.get(key, origin, now); ok {
		if f != nil {
			g := *f
			g.Redirects = 0
			return g, asked, true
		}
		// The state of from still holds that answer when it was stamped
		// with the same request time.
		if st, ok := h.robots.Answer(from, now); ok && st.FetchedAt.Equal(asked) {
			return fetchOf(st), asked, true
		}
	}
	if target := strings.TrimSuffix(key, "/robots.txt"); target != origin {
		if st, ok := h.robots.Answer(target, now); ok && now.Sub(st.FetchedAt) < robotsShareFor {
			return fetchOf(st), st.FetchedAt, true
		}
	}
	return robots.Fetch{}, time.Time{}, false
}

// fetchOf is the fetch that an answer's state st was made of, as far as
// the policy tells: stored again at st.FetchedAt, it gives the same rules
// and the same NextFetch.
func fetchOf(st robots.State) robots.Fetch {
	return robots.Fetch{Status: st.Status, Body: st.Body, MaxAge: st.NextFetch.Sub(st.FetchedAt), HasMaxAge: true}
}
