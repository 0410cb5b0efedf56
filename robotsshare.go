package crawler

import (
	"errors"
	"net/url"
	"sync"
	"time"

	"github.com/politecrawl/crawler/robots"
)

// robotsShareFor is how long an answer for a robots.txt URL serves other
// hosts whose robots.txt redirects there (and that URL's own host).
const robotsShareFor = 10 * time.Minute

// errRobotsShared stops a robots.txt fetch whose next hop was answered a
// moment ago: the answer is reused, not fetched again.
var errRobotsShared = errors.New("robots.txt answered a moment ago")

// robotsShare remembers what each robots.txt URL answered, for a short
// while, so that one fetched as the redirect target of another host's
// robots.txt is not fetched again for its own host, nor the other way
// round: a crawl fetches no URL twice. Only answers (2xx, 4xx) are kept.
type robotsShare struct {
	mu sync.Mutex
	m  map[string]sharedRobots
}

type sharedRobots struct {
	f    robots.Fetch
	at   time.Time
	from string // the origin whose robots.txt fetch it answered
}

// robotsKey is the key of u when it is an origin's /robots.txt, else "".
func robotsKey(u *url.URL) string {
	if u.Path != "/robots.txt" || u.RawQuery != "" {
		return ""
	}
	return originOf(u) + "/robots.txt"
}

// get returns the answer for key that a fetch of another origin's
// robots.txt than origin's got, while it is fresh: for robotsShareFor, or
// its max-age when shorter. A host's own answers are never reused by
// itself: when its copy expires, it fetches robots.txt again.
func (s *robotsShare) get(key, origin string, now time.Time) (robots.Fetch, bool) {
	if key == "" {
		return robots.Fetch{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	fresh := robotsShareFor
	if e.f.HasMaxAge {
		fresh = min(fresh, e.f.MaxAge)
	}
	if !ok || e.from == origin || now.Sub(e.at) >= fresh || now.Before(e.at) {
		return robots.Fetch{}, false
	}
	f := e.f
	f.Redirects = 0
	return f, true
}

// put records f, the answer to a fetch of origin's robots.txt that ended
// at key, at now.
func (s *robotsShare) put(key, origin string, f robots.Fetch, now time.Time) {
	if key == "" || f.Err != nil || f.Status < 200 || f.Status > 499 || (f.Status > 299 && f.Status < 400) || f.Status == 429 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]sharedRobots{}
	}
	for k, e := range s.m { // bounded by the hosts asked about in a few minutes
		if now.Sub(e.at) > robotsShareFor {
			delete(s.m, k)
		}
	}
	s.m[key] = sharedRobots{f: f, at: now, from: origin}
}
