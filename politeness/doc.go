// Package politeness decides whether a request to a host may start now and
// when the host may be asked next. A host is an origin: scheme, host and port.
//
// The Gate keeps one golang.org/x/time/rate Limiter per host at 1/interval,
// where the interval is the larger of the configured delay and, when honoured,
// the Crawl-delay of our group in the host's robots.txt. It also caps the
// requests in flight to a host, and judges each failure (Release) as the
// URL's or the host's:
//
//   - a 5xx other than 503 is the URL's: the URL backs off on its own
//     (Outcome.RetryAt) and the host keeps its interval;
//   - 429, 503 and network errors are the host's: it waits as long as
//     Retry-After asks (RFC 9110 §10.2.3, seconds or an HTTP date, never
//     shortened), or backs off when it does not say or says 0 or a moment
//     past (no failed host rests less than its interval);
//   - Config.Breaker different URLs failing in a row (3) trip a circuit
//     breaker: the host backs off after each failure until an answer that
//     is no failure resets the count.
//
// Backoffs are exponential with jitter, in the host's own pace: the first
// step is two of its intervals (at least Config.BackoffBase). A URL's grows
// with its attempts; the host's with the different URLs failing in a row,
// not with one URL failing again, so that a few bad pages cannot drive it
// up while the rest of the host answers. A failed URL is due after its own
// backoff counted from the end of the host's wait, so that the host's other
// URLs go first and tell whether the host is well. The Gate parks a host
// that asks to be left alone for longer than the configured give-up, or on
// which Config.MaxStreak different URLs failed in a row. It never sleeps:
// it answers with times, and the caller (the crawl engine and its frontier)
// schedules around them, so no worker ever waits holding a slot.
//
// Every request counts: robots.txt, sitemaps, redirect hops and retries all go
// through Acquire. The clock of a request starts when it goes out on the wire
// (Sent), not when it was queued, and every limiter starts empty when the
// Gate is made, so the first requests after a restart keep their distance
// from the last requests of the run that was killed. While a granted request
// has not gone out, a host with an interval gets no further grant; and while
// that request is still the host's last, its first byte of answer (Answered)
// restarts the clock, since a busy server may read a request late. Changed
// tells a caller refused with a zero time when to ask again.
//
// FetchRobots fetches a host's robots.txt for the pure policy of package
// robots (RFC 9309 §2.3: redirects, status codes, the 500 KiB cap).
//
// Caveats: the limiter adds a slack to the interval against scheduling
// jitter (a hundredth of it, at least 2ms, at most a tenth), so with
// Answered the gaps a server sees are a little longer than the delay; a
// request that fails before it is seen going out counts as started when it
// is released, since net/http may still write it (SentLate); and the
// per-host state lives as long as the Gate, bounded by the crawl's scope
// rather than by an eviction policy.
package politeness
