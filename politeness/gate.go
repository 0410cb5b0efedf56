package politeness

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Config sets the gate's limits. The zero value of a field means its default.
type Config struct {
	// Delay is the least time between the starts of two requests to one host.
	Delay time.Duration
	// MaxPerHost is how many requests may be in flight to one host at once.
	MaxPerHost int
	// HonorCrawlDelay makes a robots.txt Crawl-delay larger than Delay win.
	HonorCrawlDelay bool
	// GiveUp parks a host that asks (by Retry-After or by failing again and
	// again) to be left alone for longer than this. Default 1h.
	GiveUp time.Duration
	// BackoffBase and BackoffMax bound the exponential backoffs: a host's
	// after 429, 503 and network errors (and once the breaker trips), and
	// a URL's between its own attempts. A backoff's first step is two of
	// the host's intervals, and at least BackoffBase; each step doubles
	// the last, up to BackoffMax. Defaults 100ms and 5m.
	BackoffBase, BackoffMax time.Duration
	// Breaker makes the whole host back off once this many different URLs
	// failed in a row, whatever their failures were. Default 3.
	Breaker int
	// MaxStreak parks a host once this many different URLs failed in a
	// row. Default 10.
	MaxStreak int
	// DelayFactor, when above 0, makes a host wait after each answer at
	// least DelayFactor times as long as that answer took (Heritrix's
	// delay factor), but never more than MaxDelay for it: a server that
	// slows down is asked less often. Default MaxDelay 30s.
	DelayFactor float64
	MaxDelay    time.Duration
	// MaxBytesPerSecond, when above 0, caps the bytes a host sends us per
	// second: each answer's bytes put the host's next start off by
	// bytes/MaxBytesPerSecond, counted from when the request went out and
	// added up over answers that overlap.
	MaxBytesPerSecond int64
	// Seed seeds the backoff jitter, so tests are repeatable.
	Seed uint64
}

func (c Config) withDefaults() Config {
	if c.MaxPerHost < 1 {
		c.MaxPerHost = 1
	}
	if c.GiveUp <= 0 {
		c.GiveUp = time.Hour
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = 100 * time.Millisecond
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 5 * time.Minute
	}
	if c.Breaker <= 0 {
		c.Breaker = 3
	}
	if c.MaxStreak <= 0 {
		c.MaxStreak = 10
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = 30 * time.Second
	}
	return c
}

// Why says what sets a host's current wait.
type Why string

// The reasons a host waits.
const (
	WhyConfig     Why = "config"       // politeness.delay
	WhyCrawlDelay Why = "crawl-delay"  // robots.txt Crawl-delay of our group
	WhyRetryAfter Why = "retry-after"  // the server asked, with 429 or 503
	WhyBackoff    Why = "backoff"      // after 429, 503 or a network error
	WhyBreaker    Why = "breaker"      // several different URLs failed in a row
	WhyRobots     Why = "robots"       // robots.txt is unavailable (5xx, network)
	WhySlow       Why = "delay-factor" // its last answer was slow (DelayFactor)
	WhyBandwidth  Why = "bandwidth"    // MaxBytesPerSecond
)

// Gate decides, for each host (an origin: scheme, host and port), whether a
// request may start now and when the host may be asked next. It keeps one
// rate.Limiter per host at 1/interval, where the interval is the larger of
// Config.Delay and the host's Crawl-delay; it counts requests in flight; and
// it holds the waits that Retry-After, backoff and an unavailable robots.txt
// impose. It never sleeps: every answer is a time for the caller to act on.
//
// A Gate is safe for concurrent use. Its memory grows with the number of
// distinct hosts asked about, which the crawl's scope bounds.
type Gate struct {
	mu    sync.Mutex
	cfg   Config
	start time.Time
	rng   *rand.Rand
	hosts map[string]*host
}

type host struct {
	lim        *rate.Limiter
	crawlDelay time.Duration
	inFlight   int
	unsent     int       // requests granted and not yet on the wire (Sent)
	sentAt     time.Time // when the last request started: granted, or later sent
	waitUntil  time.Time
	waitWhy    Why
	// streak counts the different URLs that failed since the host last
	// answered well; failing holds them (up to MaxStreak), so that one
	// URL failing again is not counted twice.
	streak  int
	failing []string
	bwFree  time.Time // when the bytes received so far are paid for at MaxBytesPerSecond
	parked  string
	changed chan struct{} // closed by wake; nil until Changed asks
}

// wake closes the channel Changed handed out, if any.
func (h *host) wake() {
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
}

// Changed returns a channel closed the next time a request to origin is
// sent or released, its interval changes, or it is unparked: when an
// Acquire refused with a zero time may be granted. Take it before Acquire,
// so that no change between the two is missed.
func (g *Gate) Changed(origin string) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(origin)
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.changed
}

// New returns a gate whose clock starts at start. Every host's limiter starts
// empty at start, so the first request to a host after a restart keeps the
// same distance from the last request of the previous run.
func New(cfg Config, start time.Time) *Gate {
	cfg = cfg.withDefaults()
	return &Gate{
		cfg:   cfg,
		start: start,
		rng:   rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		hosts: map[string]*host{},
	}
}

// SetConfig replaces the limits (a config reload). Hosts keep their state;
// their intervals follow the new delay from now on.
func (g *Gate) SetConfig(cfg Config, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cfg = cfg.withDefaults()
	for _, h := range g.hosts {
		h.lim.SetLimitAt(now, g.limit(h))
		h.wake()
	}
}

func (g *Gate) host(origin string) *host {
	h := g.hosts[origin]
	if h == nil {
		h = &host{}
		h.lim = rate.NewLimiter(g.limit(h), 1)
		h.lim.AllowN(g.start, 1) // start empty: see New
		g.hosts[origin] = h
	}
	return h
}

// interval is the least time between two request starts to h, and why.
func (g *Gate) interval(h *host) (time.Duration, Why) {
	if g.cfg.HonorCrawlDelay && h.crawlDelay > g.cfg.Delay {
		return h.crawlDelay, WhyCrawlDelay
	}
	return g.cfg.Delay, WhyConfig
}

// Interval is the least time between two request starts to origin: the
// configured delay, or its Crawl-delay when that is longer and honoured.
func (g *Gate) Interval(origin string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.intervalOf(g.host(origin))
}

func (g *Gate) intervalOf(h *host) time.Duration {
	iv, _ := g.interval(h)
	return iv
}

// limit is the limiter's rate for h. It is slower than the interval asks by
// slack, so that scheduling jitter between deciding and sending never brings
// two starts closer than the interval as the server sees them.
func (g *Gate) limit(h *host) rate.Limit {
	iv, _ := g.interval(h)
	if iv <= 0 {
		return rate.Inf
	}
	return rate.Every(iv + slack(iv))
}

// slack is what the gate adds to an interval iv for the time a request takes
// from our side to the server's: a hundredth of iv but at least 2ms (a
// loaded machine delays the server's reading of a request by that much),
// and never more than a tenth of iv.
func slack(iv time.Duration) time.Duration {
	return min(max(iv/100, 2*time.Millisecond), iv/10)
}

// SetCrawlDelay records the Crawl-delay of our group in the host's robots.txt
// (0 for none). It takes effect only when Config.HonorCrawlDelay is set.
func (g *Gate) SetCrawlDelay(origin string, d time.Duration, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(origin)
	h.crawlDelay = max(d, 0)
	h.lim.SetLimitAt(now, g.limit(h))
	h.wake() // a hold may have ended with the interval
}

// Acquire asks to start one request to origin at now. When it may, the slot
// is taken (Sent and then Release must follow) and Acquire returns true.
// When it may not, it returns false and the time to ask again; a zero time
// means "after a request to this host goes out (Sent) or ends (Release), or
// never if the host is parked".
func (g *Gate) Acquire(origin string, now time.Time) (bool, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(origin)
	if at, ok := g.readyLocked(h, now); !ok || at.After(now) {
		return false, at
	}
	h.lim.AllowN(now, 1)
	h.inFlight++
	h.unsent++
	h.sentAt = now // Sent moves it later if the request leaves later
	return true, time.Time{}
}

// Sent records that a request acquired for origin went out on the wire at t
// (an httptrace hook calls it). The next start keeps its distance from t,
// not only from the moment Acquire granted the slot. While the host has an
// interval to keep (a delay or a Crawl-delay), no other request to origin is
// granted until it is called: with max_per_host above 1, a request slow to
// leave (a dial, a busy machine) would otherwise go out after the next one
// was granted, closer to it than the interval.
func (g *Gate) Sent(origin string, t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(origin)
	h.wake()
	if h.unsent > 0 {
		h.unsent--
	}
	if t.After(h.sentAt) {
		h.sentAt = t
	}
}

// SentLate records that a request to origin went out at t after its slot
// was released: net/http may write a request's headers on its own goroutine
// after Do returned, when a timeout fires during the write. The server may
// have seen that request, so the next start keeps its distance from t as
// from any other; the counts of requests in flight and not yet sent are
// left alone, as Release settled them already.
func (g *Gate) SentLate(origin string, t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(origin)
	if t.After(h.sentAt) {
		h.sentAt = t
	}
}

// Answered records that the first byte of the answer to the request sent at
// sent came back at t. The server saw the request no later than t, and
// perhaps well after sent when it was busy; so when that request is still
// the last one sent, the next start keeps its distance from t, and two
// starts are never closer than the interval as the server sees them.
func (g *Gate) Answered(origin string, sent, t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(origin)
	if h.sentAt.Equal(sent) && t.After(h.sentAt) {
		h.sentAt = t
	}
}

// Ready returns when origin may next start a request. ok is false while the
// host has MaxPerHost requests in flight (ask again after a Release), has a
// request granted but not yet sent while it has an interval to keep (ask
// again after Sent), or is parked.
func (g *Gate) Ready(origin string, now time.Time) (at time.Time, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readyLocked(g.host(origin), now)
}

func (g *Gate) readyLocked(h *host, now time.Time) (time.Time, bool) {
	iv, _ := g.interval(h)
	// A request granted but not yet sent holds the next grant only when
	// there is an interval to keep: with none, holding would only
	// serialise connection starts, for no politeness gain.
	if h.parked != "" || h.inFlight >= g.cfg.MaxPerHost || h.unsent > 0 && iv > 0 {
		return time.Time{}, false
	}
	at := now
	if h.waitUntil.After(at) {
		at = h.waitUntil
	}
	// The interval also holds from the last start itself, so a Crawl-delay
	// learnt from a robots.txt counts from that very request.
	if next := h.sentAt.Add(iv + slack(iv)); next.After(at) {
		at = next
	}
	if tokens := h.lim.TokensAt(at); tokens < 1 {
		at = at.Add(durationFor(1-tokens, h.lim.Limit()))
	}
	return at, true
}

// durationFor is how long limit takes to earn tokens, rounded up.
func durationFor(tokens float64, limit rate.Limit) time.Duration {
	if limit == rate.Inf || limit <= 0 {
		return 0
	}
	return time.Duration(tokens/float64(limit)*float64(time.Second)) + time.Millisecond
}

// Result is what became of a request, as the gate needs to know it.
type Result struct {
	Status     int    // the HTTP status; 0 when no response came
	Err        error  // a network error or timeout
	RetryAfter string // the Retry-After header, if any
	// Took is how long the request took, sent to the end of its body,
	// and Bytes the body bytes received: DelayFactor and
	// MaxBytesPerSecond pace the host by them.
	Took  time.Duration
	Bytes int64
	// URL is the URL asked, so that one URL failing again and again counts
	// once toward the host's failures in a row; "" counts every failure.
	URL string
	// Attempt is how many attempts of URL failed before this one; a
	// failure's Outcome.RetryAt backs off by it.
	Attempt int
	// Unsent says no Sent call was made for the request. With no Err it
	// never went out; with an Err it may still go out (see SentLate), so
	// Release counts it as started when it was released.
	Unsent bool
	// Abandoned says the caller stopped waiting for the answer (the crawl
	// is stopping): it tells nothing of the host, whose error streak and
	// waits stay as they were.
	Abandoned bool
}

// Outcome is the gate's verdict on a Result.
type Outcome struct {
	// Failed is true for an answer worth trying again: a 5xx, a 429, a
	// network error. RetryAt is then when the URL may be tried again: its
	// own backoff, counted from the end of the host's wait if it has one.
	Failed  bool
	RetryAt time.Time
	// Wait is true when the whole host must rest, until Until: after a
	// 429, a 503 or a network error, or once the breaker tripped.
	Wait  bool
	Until time.Time
	// Parked is set when the wait asked for exceeds Config.GiveUp or
	// Config.MaxStreak different URLs failed in a row: give up on the host.
	Parked string
}

// Release returns the slot taken by Acquire and applies what the request
// came to. A request that failed with no Sent seen counts as started at now
// (see Result.Unsent).
//
// A failure is either the URL's or the host's. A 5xx other than 503 is the
// URL's: the URL backs off on its own (Outcome.RetryAt) and the host keeps
// its interval. 429, 503 and network errors (refused, reset, timeouts)
// speak of the host: it waits as long as Retry-After asks (never less), or
// backs off exponentially with jitter when it does not say. Different URLs
// failing in a row are the host's too: from Config.Breaker of them on, the
// host backs off after each failure. An answer that is no failure resets
// the count.
func (g *Gate) Release(origin string, now time.Time, r Result) Outcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(origin)
	h.wake()
	if h.inFlight > 0 {
		h.inFlight--
	}
	if r.Unsent && h.unsent > 0 {
		h.unsent--
	}
	if r.Unsent && (r.Err != nil || r.Abandoned) && now.After(h.sentAt) {
		// Failed before it was seen going out, but the headers may be
		// on their way yet: the safe guess is that it reached the server.
		h.sentAt = now
	}
	h.unsent = min(h.unsent, h.inFlight) // a caller that forgot Sent cannot stall the host
	if r.Abandoned {
		return Outcome{}
	}
	g.paceLocked(h, now, r)
	if r.Err == nil && r.Status < 500 && r.Status != 429 {
		h.streak, h.failing = 0, nil
		return Outcome{}
	}
	return g.failLocked(h, now, r)
}

// failLocked judges failure r of a request to h, as Release says.
func (g *Gate) failLocked(h *host, now time.Time, r Result) Outcome {
	g.failedLocked(h, r.URL)
	var wait time.Duration
	var why Why
	switch {
	case r.Err != nil || r.Status == 429 || r.Status == 503:
		wait, why = g.backoffLocked(h, h.streak), WhyBackoff
		if r.Err == nil {
			// A Retry-After of 0 or of a moment past says "now",
			// which for a host that just refused us is no plan: it
			// is backed off like an answer that gives no Retry-After.
			if ra, ok := ParseRetryAfter(r.RetryAfter, now); ok && ra > 0 {
				wait, why = ra, WhyRetryAfter
			}
		}
	case h.streak >= g.cfg.Breaker:
		wait, why = g.backoffLocked(h, h.streak-g.cfg.Breaker+1), WhyBreaker
	}
	out := Outcome{Failed: true}
	if wait > 0 {
		// A failed host rests at least its interval, whatever was asked.
		wait = max(wait, g.intervalOf(h))
		g.waitLocked(h, now.Add(wait), why)
		out.Wait, out.Until = true, h.waitUntil
	}
	switch {
	case wait > g.cfg.GiveUp:
		h.parked = fmt.Sprintf("%s of %s exceeds the give-up of %s", why, wait.Round(time.Second), g.cfg.GiveUp)
	case h.streak >= g.cfg.MaxStreak:
		h.parked = fmt.Sprintf("%d different URLs failed in a row", h.streak)
	}
	out.Parked = h.parked
	// The URL steps aside for its own backoff, counted from when the host
	// may be asked again: the host's other URLs go first, and tell
	// whether the host is well.
	from := now
	if h.waitUntil.After(from) {
		from = h.waitUntil
	}
	out.RetryAt = from.Add(g.backoffLocked(h, r.Attempt+1))
	return out
}

// paceLocked applies the delay factor and the bandwidth cap to the answer
// r, which ended at now.
func (g *Gate) paceLocked(h *host, now time.Time, r Result) {
	if f := g.cfg.DelayFactor; f > 0 && r.Took > 0 {
		g.waitLocked(h, now.Add(min(time.Duration(f*float64(r.Took)), g.cfg.MaxDelay)), WhySlow)
	}
	if bps := g.cfg.MaxBytesPerSecond; bps > 0 && r.Bytes > 0 {
		from := now.Add(-r.Took)
		if h.bwFree.After(from) {
			from = h.bwFree
		}
		h.bwFree = from.Add(time.Duration(float64(r.Bytes) / float64(bps) * float64(time.Second)))
		g.waitLocked(h, h.bwFree, WhyBandwidth)
	}
}

// failedLocked counts a failure of url toward h's streak, unless url
// failed already since the host last answered well.
func (g *Gate) failedLocked(h *host, url string) {
	if url != "" {
		for _, u := range h.failing {
			if u == url {
				return
			}
		}
		if len(h.failing) < g.cfg.MaxStreak {
			h.failing = append(h.failing, url)
		}
	}
	h.streak++
}

// backoffLocked is the n-th step of h's backoff: base·2^(n-1), capped at
// BackoffMax, with full jitter in its upper half so that many hosts
// failing together do not retry in step. The base is two of the host's
// intervals, and at least BackoffBase: a backoff is counted in the host's
// own pace, so that a crawl at 50ms and one at 5s both skip a turn or two
// at first.
func (g *Gate) backoffLocked(h *host, n int) time.Duration {
	d := max(g.cfg.BackoffBase, 2*g.intervalOf(h))
	for i := 1; i < n && d < g.cfg.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, g.cfg.BackoffMax)
	return d/2 + time.Duration(g.rng.Int64N(int64(d/2)+1))
}

func (g *Gate) waitLocked(h *host, until time.Time, why Why) {
	if until.After(h.waitUntil) {
		h.waitUntil, h.waitWhy = until, why
	}
}

// Wait makes origin rest until the given time (never shortening a longer
// wait). The crawl uses it to restore waits saved before a restart, and while
// a host's robots.txt is unavailable.
func (g *Gate) Wait(origin string, until time.Time, why Why) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waitLocked(g.host(origin), until, why)
}

// EndWait ends origin's wait now if it is one for why: its caller chose to
// ask again sooner than it decided (the crawl's last call to a robots.txt
// that was unavailable). The host's interval still applies, and a wait for
// another reason stays.
func (g *Gate) EndWait(origin string, why Why, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if h := g.host(origin); h.waitWhy == why && h.waitUntil.After(now) {
		h.waitUntil = now
	}
}

// Parked reports whether origin is parked.
func (g *Gate) Parked(origin string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	h, ok := g.hosts[origin]
	return ok && h.parked != ""
}

// Park gives up on origin: Acquire refuses it from now on, until Unpark.
func (g *Gate) Park(origin, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.host(origin).parked = reason
}

// Unpark lets a parked host be asked again (a config reload, an operator).
func (g *Gate) Unpark(origin string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(origin)
	h.parked, h.streak, h.failing = "", 0, nil
	h.wake()
}

// HostState is a host as the gate sees it, for /hosts and metrics.
type HostState struct {
	Origin     string        `json:"origin"`
	Delay      time.Duration `json:"-"`
	DelayText  string        `json:"delay"`
	DelayWhy   Why           `json:"delay_why"`
	InFlight   int           `json:"in_flight"`
	ErrStreak  int           `json:"error_streak"` // different URLs failed in a row
	NextAt     time.Time     `json:"next_eligible,omitzero"`
	Parked     string        `json:"parked,omitempty"`
	Waiting    bool          `json:"waiting"`
	WaitingWhy Why           `json:"waiting_why,omitempty"`
}

// Snapshot lists every host the gate knows, sorted by origin.
func (g *Gate) Snapshot(now time.Time) []HostState {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]HostState, 0, len(g.hosts))
	for origin, h := range g.hosts {
		iv, why := g.interval(h)
		s := HostState{
			Origin: origin, Delay: iv, DelayText: iv.String(), DelayWhy: why,
			InFlight: h.inFlight, ErrStreak: h.streak, Parked: h.parked,
		}
		if at, ok := g.readyLocked(h, now); ok {
			s.NextAt = at
		}
		if h.waitUntil.After(now) {
			s.Waiting, s.WaitingWhy = true, h.waitWhy
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Origin < out[j].Origin })
	return out
}
