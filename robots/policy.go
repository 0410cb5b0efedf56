package robots

import "time"

// The limits of the fetch policy.
const (
	// MaxRedirects is how many redirects a fetch of /robots.txt follows
	// (RFC 9309 §2.3.1.2: at least five). Beyond, robots.txt is unreachable.
	MaxRedirects = 5
	// CacheMax is the longest a good copy is used before it is fetched
	// again (RFC 9309 §2.4); a shorter Cache-Control max-age wins.
	CacheMax = 24 * time.Hour
	// CacheMin is how long a copy served with max-age=0, no-cache or
	// no-store is used, so that robots.txt is not fetched before every URL
	// (many servers send no-cache on everything). A positive max-age is
	// the site owner's own word and is kept to, however short.
	CacheMin = time.Minute
	// RetryMin and RetryMax bound the backoff between fetches while
	// robots.txt is unreachable: RetryMin after the first failure, doubling.
	RetryMin = time.Minute
	RetryMax = time.Hour
	// UnreachableLimit is how long robots.txt may be unreachable before the
	// last good copy applies again, or everything is allowed when there is
	// none (RFC 9309 §2.3.1.4 gives 30 days as an example).
	UnreachableLimit = 30 * 24 * time.Hour
)

// Fetch is what one fetch of a host's /robots.txt came to, redirects
// followed: the input of Update.
type Fetch struct {
	// Status is the HTTP status of the last response; 0 when none came.
	Status int
	// Err is why no response came: a network error, a timeout.
	Err error
	// Redirects is how many redirects were followed before the last
	// response. More than MaxRedirects, or a last response that is still a
	// redirect, makes robots.txt unavailable: everything is allowed, as
	// RFC 9309 §2.3.1.2 permits and Google does (it treats it as a 404).
	Redirects int
	// Body is the body of a 2xx response; bytes beyond MaxSize are ignored.
	Body []byte
	// MaxAge is the Cache-Control max-age of the response, when HasMaxAge;
	// no-store and no-cache count as max-age=0.
	MaxAge    time.Duration
	HasMaxAge bool
	// RetryAfter is how long the server asked to wait (Retry-After on a 429
	// or 503); zero when it did not say.
	RetryAfter time.Duration
}

// Result is how a fetch of robots.txt ended, in the terms of RFC 9309 §2.3.
// Its values are short words fit for a metric label.
type Result string

// The results of a fetch.
const (
	// ResultOK: a 2xx; its body is the rules.
	ResultOK Result = "ok"
	// ResultMissing: a 4xx other than 429, or a redirect chain longer
	// than MaxRedirects; there is no robots.txt and everything is allowed
	// (the RFC's "unavailable").
	ResultMissing Result = "missing"
	// ResultUnreachable: a 429, a 5xx, any other status that is not an
	// answer (1xx), or no response at all; everything is disallowed for now (the RFC's
	// "unreachable").
	ResultUnreachable Result = "unreachable"
)

// Classify returns the Result of a fetch.
func Classify(f Fetch) Result {
	switch {
	case f.Err != nil || f.Status == 0:
		return ResultUnreachable
	case f.Redirects > MaxRedirects || f.Status >= 300 && f.Status <= 399:
		return ResultMissing
	case f.Status >= 200 && f.Status <= 299:
		return ResultOK
	case f.Status == 429:
		return ResultUnreachable
	case f.Status >= 400 && f.Status <= 499:
		return ResultMissing
	}
	return ResultUnreachable
}

// State is what is known of a host's robots.txt: the outcome of the latest
// fetch, the last good copy, and when to fetch again. Update makes the next
// State from the previous one. Its exported fields are all that needs to be
// kept across a restart (Rules parses Body again when needed); the zero
// State is a host whose robots.txt was never fetched.
type State struct {
	Result    Result    // how the latest fetch ended
	Status    int       // its HTTP status; 0 when no response came
	Error     string    // why no response came, if so
	FetchedAt time.Time // when it ended
	NextFetch time.Time // when to fetch robots.txt again

	// DisallowAll is set while robots.txt has been unreachable for less
	// than UnreachableLimit: nothing but /robots.txt may be fetched.
	DisallowAll bool
	// Body is the last good copy: the body of the latest 2xx, or empty when
	// the latest definite answer was a 4xx (everything allowed).
	Body []byte
	// GoodAt is when the last good copy was fetched; zero if never.
	GoodAt time.Time
	// FailingSince is when the current run of unreachable fetches began,
	// and Failures how many there have been; zero when the latest fetch
	// was an answer.
	FailingSince time.Time
	Failures     int

	rules *Rules // Body parsed; nil when it must be parsed again
}

// Rules returns the rules to apply now: DisallowAll before the first fetch
// and while robots.txt is unreachable, else the last good copy (which allows
// everything when it is empty, after a 4xx or when there never was one).
// The State Update returns has Body parsed already; a State restored from
// storage parses it on every call, so keep what Rules returns.
func (s State) Rules() *Rules {
	switch {
	case s.FetchedAt.IsZero() || s.DisallowAll:
		return DisallowAll()
	case s.rules != nil:
		return s.rules
	}
	return Parse(s.Body)
}

// Unreachable reports whether the latest fetch of robots.txt failed: a 429,
// a 5xx or no response.
func (s State) Unreachable() bool { return s.Result == ResultUnreachable }

// Due reports whether robots.txt should be fetched again at now.
func (s State) Due(now time.Time) bool { return !now.Before(s.NextFetch) }

// Update is the fetch policy of RFC 9309 §2.3 and §2.4: it returns the
// State that follows prev after fetch f ended at now. The State keeps
// f.Body, which must not be changed afterwards.
//
//   - 2xx: the body is the rules, and the last good copy, until it is
//     fetched again after CacheMax, or after a shorter Cache-Control max-age
//     (CacheMin for max-age=0, no-cache and no-store).
//   - 4xx but 429: everything is allowed, for as long as a good copy.
//   - 429, 5xx, no response: everything is disallowed,
//     and robots.txt is fetched again after a backoff from RetryMin
//     doubling to RetryMax (longer if Retry-After asks, up to CacheMax).
//     Once it has been unreachable for UnreachableLimit, the last good copy
//     applies again, or everything is allowed if there never was one.
func Update(prev State, f Fetch, now time.Time) State {
	s := prev
	s.Result = Classify(f)
	s.Status, s.Error, s.FetchedAt = f.Status, "", now
	if f.Err != nil {
		s.Error = f.Err.Error()
	}
	switch s.Result {
	case ResultOK, ResultMissing:
		var body []byte
		if s.Result == ResultOK {
			body = f.Body[:min(len(f.Body), MaxSize)]
		}
		s.Body, s.GoodAt, s.rules = body, now, Parse(body)
		s.DisallowAll, s.FailingSince, s.Failures = false, time.Time{}, 0
		s.NextFetch = now.Add(CacheFor(f))
	default:
		s.Failures++
		if s.FailingSince.IsZero() {
			s.FailingSince = now
		}
		s.DisallowAll = now.Sub(s.FailingSince) < UnreachableLimit
		if !s.DisallowAll && s.rules == nil {
			s.rules = Parse(s.Body)
		}
		s.NextFetch = now.Add(retryAfter(s.Failures, f.RetryAfter))
	}
	return s
}

// CacheFor is how long an answer is used: CacheMax, or a shorter positive
// max-age, or CacheMin when the answer asked not to be kept at all.
func CacheFor(f Fetch) time.Duration {
	switch {
	case !f.HasMaxAge:
		return CacheMax
	case f.MaxAge <= 0:
		return CacheMin
	}
	return min(f.MaxAge, CacheMax)
}

// retryAfter is the wait after the n-th failure in a row: RetryMin doubling
// up to RetryMax, or what the server asked if longer, up to CacheMax.
func retryAfter(n int, asked time.Duration) time.Duration {
	d := RetryMax
	if n < 1 {
		n = 1 // a State from elsewhere may hold anything
	}
	if n <= 10 {
		d = min(RetryMin<<(n-1), RetryMax)
	}
	return max(d, min(asked, CacheMax))
}
