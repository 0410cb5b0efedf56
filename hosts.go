package crawler

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/frontier/cluster"
	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/robots"
	"github.com/politecrawl/crawler/storage"
)

// hosts owns what the crawl knows of each host (an origin): its politeness
// gate, its robots.txt (the cache, the answers shared between hosts whose
// robots.txt redirects, the copies saved for the next run), its waits and
// parking, the pages fetched from it, and its sitemaps being read. Every
// change it makes that bears on when the host may next be asked, it tells
// the frontier itself (SetReady), so no caller has a step to forget.
//
// It is safe for concurrent use.
type hosts struct {
	gate   *politeness.Gate
	robots *politeness.RobotsCache
	share  robotsShare
	front  *frontier.Frontier
	saved  *storage.RobotsStates
	obs    *observer
	log    *slog.Logger
	agent  string
	conf   func() *liveConfig
	now    func() time.Time
	// fail stops the crawl on a write of the state it cannot go on
	// without (parking a host).
	fail func(error)
	// shared, in a crawl shared by several workers, says which hosts are
	// this worker's to ask, and keeps their waits for a successor; nil on
	// one machine.
	shared *shared
	// renderTabs is render.tabs when render.enabled, 0 otherwise: a host
	// has at most that many of its pages visited (fetched, then
	// rendered) at once, so that one site cannot hold every worker
	// waiting for a tab.
	renderTabs int

	mu        sync.Mutex
	rendering map[string]int       // page leases out while rendering is on, by origin
	pages     map[string]int       // pages fetched this run, by origin
	waitedTo  map[string]time.Time // politeness wait counted up to, by origin
	reading   map[string]int       // sitemap leases out, by origin
	linking   map[string][]int     // link depths of the leases of linked pages out, by origin
	heldBack  map[string]bool      // origins put off until their sitemaps are read and linked pages settled
	unread    map[string]bool      // origins whose robots.txt just queued sitemaps of their own
	noHead    map[string]bool      // hosts out of scope that refused a HEAD (external.go)
	asked     map[string]time.Time // when an unavailable robots.txt's server asked to be asked again
	lastTry   map[string]time.Time // when a robots.txt's last call is due (see lastCall)
	doneEarly int64                // pages fetched by earlier runs on this state
}

func newHosts(cfg *liveConfig, start time.Time, front *frontier.Frontier, st *storage.State,
	obs *observer, log *slog.Logger, conf func() *liveConfig, now func() time.Time) *hosts {
	h := &hosts{
		gate:   politeness.New(gateConfig(cfg.Config), start),
		robots: politeness.NewRobotsCache(ProductToken(cfg.UserAgent), 10000),
		front:  front, saved: st.Robots, obs: obs, log: log,
		agent: ProductToken(cfg.UserAgent), conf: conf, now: now,
		pages: map[string]int{}, waitedTo: map[string]time.Time{},
		reading: map[string]int{}, linking: map[string][]int{}, rendering: map[string]int{}, heldBack: map[string]bool{}, unread: map[string]bool{},
		noHead: map[string]bool{},
		asked:  map[string]time.Time{}, lastTry: map[string]time.Time{},
	}
	if cfg.Daemon.Enabled {
		h.robots.SetMaxAge(cfg.Daemon.Recrawl)
	}
	return h
}

func gateConfig(cfg Config) politeness.Config {
	return politeness.Config{
		Delay:             cfg.Politeness.Delay,
		MaxPerHost:        cfg.Politeness.MaxPerHost,
		HonorCrawlDelay:   cfg.Politeness.HonorCrawlDelay,
		GiveUp:            cfg.Politeness.RetryAfterMax,
		DelayFactor:       cfg.Politeness.DelayFactor,
		MaxDelay:          cfg.Politeness.MaxDelay,
		MaxBytesPerSecond: int64(cfg.Politeness.MaxBytesPerSecond),
	}
}

// reconfigure applies a reloaded config's politeness.
func (h *hosts) reconfigure(cfg Config, now time.Time) {
	h.gate.SetConfig(gateConfig(cfg), now)
	if cfg.Daemon.Enabled {
		h.robots.SetMaxAge(cfg.Daemon.Recrawl)
	}
}

// restore gives the gate and the robots cache what earlier runs knew of
// each host: Retry-After waits, robots.txt and its Crawl-delay, parked
// hosts; and counts the pages earlier runs fetched, which max_pages counts
// too. A host an earlier run gave up on gets another chance once the wait
// it asked for is over, unless its Crawl-delay is still past
// politeness.retry_after_max.
func (h *hosts) restore(now time.Time, pages *storage.Pages, countPages bool) error {
	delays := map[string]time.Duration{}
	err := h.saved.ForEach(func(origin string, st robots.State) error {
		h.robots.Restore(origin, st)
		d, _ := st.Rules().ForAgent(h.agent).CrawlDelay()
		h.gate.SetCrawlDelay(origin, d, now)
		delays[origin] = d
		return nil
	})
	if err != nil {
		return fmt.Errorf("read robots.txt states: %w", err)
	}
	cfg := h.conf().Politeness
	for _, fh := range h.front.Hosts() {
		if fh.Wait.After(now) {
			h.gate.Wait(fh.Origin, fh.Wait, politeness.WhyRetryAfter)
		}
		switch {
		case !fh.Parked:
		case fh.Wait.After(now) || cfg.HonorCrawlDelay && delays[fh.Origin] > cfg.RetryAfterMax:
			h.gate.Park(fh.Origin, fh.ParkReason)
		default:
			h.log.Info("host given up on by an earlier run: trying it again", "host", fh.Origin, "reason", fh.ParkReason)
			if err := h.front.Unpark(fh.Origin); err != nil {
				return fmt.Errorf("unpark %s: %w", fh.Origin, err)
			}
		}
	}
	if !countPages {
		return nil
	}
	return pages.ForEach(func(p storage.Page) error {
		if p.Status >= 200 && p.Status < 300 {
			h.doneEarly++
		}
		return nil
	})
}

// ready tells the frontier when the gate will next let origin be asked,
// and counts the time the host is held back until then.
func (h *hosts) ready(origin string, now time.Time) {
	at, ok := h.gate.Ready(origin, now)
	if !ok {
		return // full or parked: a release readies it
	}
	h.countWait(origin, now, at)
	h.front.SetReady(origin, at)
}

// countWait counts the part of [now, at] that origin is held back and that
// was not counted before, while it has URLs to fetch: each moment a host
// with work waits is counted once, however often it is readied.
func (h *hosts) countWait(origin string, now, at time.Time) {
	if !at.After(now) {
		return
	}
	if fh, ok := h.front.Host(origin); !ok || fh.Queued+fh.Leased == 0 {
		return
	}
	h.mu.Lock()
	from := now
	if to := h.waitedTo[origin]; to.After(from) {
		from = to
	}
	if at.After(from) {
		h.waitedTo[origin] = at
	}
	h.mu.Unlock()
	h.obs.wait(at.Sub(from))
}

// acquire asks for a slot to start a request to origin at now. When the
// gate refuses, the frontier is told when to hand the host out again and
// that time is returned (zero: when a request of the host ends).
func (h *hosts) acquire(origin string, now time.Time) (bool, time.Time) {
	if h.shared == nil {
		return h.acquireSlot(origin, now)
	}
	// A slot taken counts until its release, so that its partition is
	// not handed over with the request in flight (a redirect hop of
	// robots.txt holds no lease of that partition); counted from before
	// the check, so that a handover cannot come between the two.
	h.shared.handed(origin, 1)
	if ours, at := h.shared.owns(origin, now); !ours {
		// Another worker's host, or one this worker may not ask yet:
		// the frontier holds it back until then, and the lease goes
		// back as it was.
		h.shared.handed(origin, -1)
		h.shared.holdBack(origin, at)
		return false, time.Time{}
	}
	if !h.shared.starting(origin, now, h.gate.Interval(origin)) {
		h.shared.handed(origin, -1)
		at := now.Add(time.Second) // asked again then
		h.front.SetReady(origin, at)
		return false, at
	}
	ok, at := h.acquireSlot(origin, now)
	if !ok {
		h.shared.handed(origin, -1)
	}
	return ok, at
}

// acquireSlot asks the gate for a slot of origin, as acquire says.
func (h *hosts) acquireSlot(origin string, now time.Time) (bool, time.Time) {
	ok, at := h.gate.Acquire(origin, now)
	switch {
	case ok:
		h.ready(origin, now)
	case at.IsZero():
		// Full or parked: the host waits for a request to end, whose
		// release readies it. One may have ended just now, before the
		// host was put off: ready checks again.
		h.front.SetReady(origin, farFuture)
		h.ready(origin, now)
	default:
		h.countWait(origin, now, at)
		h.front.SetReady(origin, at)
	}
	return ok, at
}

// pass readies origin after a lease that made no request, at once, so that
// its next URL need not wait for that lease's outcome to be written.
func (h *hosts) pass(origin string, now time.Time) { h.ready(origin, now) }

// sent records that a request to origin went out at t; the gate counts
// the host's next start from then.
func (h *hosts) sent(origin string, t time.Time) {
	h.gate.Sent(origin, t)
	h.ready(origin, t)
}

// sentLate records a request seen going out after its slot was released.
func (h *hosts) sentLate(origin string, t time.Time) { h.gate.SentLate(origin, t) }

// answered records the first byte of the answer to the request sent at sent.
func (h *hosts) answered(origin string, sent, t time.Time) { h.gate.Answered(origin, sent, t) }

// release gives back a slot with what came of its request, and applies the
// gate's verdict: a wait the server asked for is kept across restarts, and
// a host the gate gives up on is parked.
func (h *hosts) release(origin string, now time.Time, r politeness.Result) politeness.Outcome {
	out := h.gate.Release(origin, now, r)
	if h.shared != nil {
		h.shared.handed(origin, -1)
	}
	h.ready(origin, now)
	if out.Wait && (r.Status == 429 || r.Status == 503) {
		h.persistWait(origin, out.Until)
	}
	if out.Parked != "" {
		h.park(origin, out.Parked)
	}
	return out
}

// wait makes origin rest until until, for why, across restarts too.
func (h *hosts) wait(origin string, until time.Time, why politeness.Why) {
	h.gate.Wait(origin, until, why)
	h.persistWait(origin, until)
	h.ready(origin, h.now())
}

func (h *hosts) persistWait(origin string, until time.Time) {
	h.keepWait(cluster.HostWait{Origin: origin, Until: until})
	if err := h.front.SetHostWait(origin, until); err != nil {
		h.stateError("save host wait", err)
	}
}

// park gives up on a host: for this run in an ad hoc crawl (the summary
// lists it, and its URLs are recorded as not fetched at the end, left
// queued for the next run); until the next pass in a daemon, which must
// not lose a host to a passing outage.
func (h *hosts) park(origin, reason string) {
	if cfg := h.conf(); cfg.Daemon.Enabled {
		until := h.now().Add(cfg.Daemon.Recrawl)
		h.log.Warn("host resting until the next pass", "host", origin, "reason", reason, "until", until)
		h.gate.Unpark(origin)
		h.wait(origin, until, politeness.WhyBackoff)
		return
	}
	h.log.Warn("host parked", "host", origin, "reason", reason)
	h.keepWait(cluster.HostWait{Origin: origin, Parked: true, Reason: reason})
	h.gate.Park(origin, reason)
	if err := h.front.Park(origin, reason); err != nil {
		// Kept going, the host would sit parked in the gate with its
		// URLs queued, and the crawl would never end.
		h.fail(fmt.Errorf("park %s: %w", origin, err))
	}
}

// keepWait writes a host's wait or parking for the workers of a shared crawl
// before the frontier keeps it. A failure is logged: a successor then
// knows the host only as its own requests teach it.
func (h *hosts) keepWait(w cluster.HostWait) {
	if h.shared == nil {
		return
	}
	if err := h.shared.hostWait(w); err != nil {
		h.log.Warn("cluster: keep a host's wait", "host", w.Origin, "err", err)
	}
}

// learnWait applies a host's wait or parking that another worker (or this
// one, in an earlier hold) wrote to the log of a partition taken over.
func (h *hosts) learnWait(w cluster.HostWait) error {
	if w.Parked {
		h.gate.Park(w.Origin, w.Reason)
		return h.front.Park(w.Origin, w.Reason)
	}
	if w.Until.After(h.now()) {
		h.gate.Wait(w.Origin, w.Until, politeness.WhyRetryAfter)
	}
	return h.front.SetHostWait(w.Origin, w.Until)
}

// waitsToCome lists the hosts whose next request is not due at now, with
// when it is, for a successor to keep to.
func (h *hosts) waitsToCome(now time.Time) []cluster.HostWait {
	var out []cluster.HostWait
	for _, g := range h.gate.Snapshot(now) {
		if g.Parked == "" && g.NextAt.After(now) {
			out = append(out, cluster.HostWait{Origin: g.Origin, Until: g.NextAt})
		}
	}
	return out
}

// mine reports whether origin is this worker's to crawl: always on one
// machine; in a shared crawl, when its partition is held here.
func (h *hosts) mine(origin string) bool { return h.shared == nil || h.shared.mine(origin) }

func (h *hosts) stateError(what string, err error) {
	h.obs.stateError()
	h.log.Error(what, "err", err)
}

// addPage counts a page of origin fetched this run; pagesOf reads it.
func (h *hosts) addPage(origin string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pages[origin]++
}

func (h *hosts) pagesOf(origin string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pages[origin]
}

// A host's pages wait for what may change them while they are queued.
//
// Sitemaps being read make their host's pages wait. A URL a sitemap lists
// is at depth 0 and in_sitemap (README, "Semantics" and "Outputs"), but
// the frontier can only change a URL still queued: were /a, found by a
// link at depth 1, handed out while the sitemap listing it was being
// parsed, it would be fetched at depth 1 and its own links counted from
// there, which max_depth would cut short, and its record would not say it
// is in the sitemap. Sitemaps go first in their host's queue (they are
// queued at the top priority), so the wait is for one parse at most. The
// page whose visit read robots.txt is out already when robots.txt names
// the host's sitemaps: it goes back once (see firstSitemaps).
//
// Linked pages being visited make pages that a link they hold may bring
// nearer wait: those no link reaches yet, which come last in their host's
// queue (see listedPriority), and those two link hops or more deeper than
// a page under way. The frontier hands a host's linked pages out by link
// depth, so that without this wait only a page being visited, or one
// whose links are not yet queued, could hold a shorter chain to the next:
// with it, each page is fetched with its shortest chain of links from the
// host's pages known. Pages only a sitemap reaches lead to no link depth,
// so that once the linked pages are done, the rest go on with no wait.
//
// Only the leases of the host's own origin wait (the protocol keeps a
// sitemap's URLs on its host); the dispatcher goes on with other hosts.

// out counts a lease handed to a worker.
func (h *hosts) out(l leaseOut) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case l.kind == frontier.KindSitemap:
		h.reading[l.origin]++
		delete(h.unread, l.origin)
	case l.linkDepth >= 0:
		h.linking[l.origin] = append(h.linking[l.origin], l.linkDepth)
	}
	if l.budgeted && h.renderTabs > 0 {
		h.rendering[l.origin]++
	}
}

// back counts a lease settled, its URLs in the frontier, and readies the
// host when a page of it was held back and no sitemap is read any more:
// what held it may be over (mustWait holds it again if not).
func (h *hosts) back(l leaseOut) {
	h.mu.Lock()
	switch {
	case l.kind == frontier.KindSitemap:
		h.reading[l.origin]--
	case l.linkDepth >= 0:
		lds := h.linking[l.origin]
		if i := slices.Index(lds, l.linkDepth); i >= 0 {
			lds = slices.Delete(lds, i, i+1)
		}
		h.linking[l.origin] = lds
	}
	if l.budgeted && h.renderTabs > 0 {
		if h.rendering[l.origin]--; h.rendering[l.origin] <= 0 {
			delete(h.rendering, l.origin)
		}
	}
	if h.reading[l.origin] == 0 {
		delete(h.reading, l.origin)
	}
	if len(h.linking[l.origin]) == 0 {
		delete(h.linking, l.origin)
	}
	held := h.heldBack[l.origin] && h.reading[l.origin] == 0 &&
		(h.renderTabs == 0 || h.rendering[l.origin] < h.renderTabs)
	if held {
		delete(h.heldBack, l.origin)
	}
	h.mu.Unlock()
	if held {
		h.ready(l.origin, h.now()) // not under h.mu, which ready takes
	}
}

// refusesHead reports whether origin refused a HEAD already; headRefused
// says it did.
func (h *hosts) refusesHead(origin string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.noHead[origin]
}

func (h *hosts) headRefused(origin string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.noHead[origin] = true
}

// sitemapsQueued notes that origin's robots.txt queued new sitemaps of
// origin itself.
func (h *hosts) sitemapsQueued(origin string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unread[origin] = true
}

// firstSitemaps reports whether page lease l, handed out before robots.txt
// queued sitemaps of its host or before one of them was handed out, must
// go back so that they are read first (the dispatcher then holds it, see
// mustWait); if so it readies the host for them. The robots.txt's mark is
// taken once, so a sitemap that fails to come first cannot hold its pages
// back for ever.
func (h *hosts) firstSitemaps(l *frontier.Lease) bool {
	if l.Kind != frontier.KindPage || l.InSitemap {
		return false
	}
	h.mu.Lock()
	wait := h.unread[l.Origin] || h.reading[l.Origin] > 0
	delete(h.unread, l.Origin)
	h.mu.Unlock()
	if wait {
		h.pass(l.Origin, h.now())
	}
	return wait
}

// mustWait reports whether page lease l must wait: for a sitemap of its
// host being read, if no sitemap listed it yet, or for its host's linked
// pages being visited, if one of them may bring it nearer (no link
// reached it yet, or it is two link hops or more deeper), or, when pages
// are rendered, for one of the render.tabs pages of its host being
// visited (one render is one lease of its host). If so the host is not
// handed out until they are done, and the caller gives l back.
func (h *hosts) mustWait(l *frontier.Lease) bool {
	if l.Kind != frontier.KindPage {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	forSitemap := !l.InSitemap && h.reading[l.Origin] > 0
	forLinks := false
	if lds := h.linking[l.Origin]; len(lds) > 0 {
		forLinks = l.LinkDepth < 0 || slices.Min(lds) < l.LinkDepth-1
	}
	forRender := h.renderTabs > 0 && !l.Requisite && h.rendering[l.Origin] >= h.renderTabs
	if !forSitemap && !forLinks && !forRender {
		return false
	}
	h.front.SetReady(l.Origin, farFuture)
	h.heldBack[l.Origin] = true
	return true
}

// farFuture is later than any wait the frontier may hold.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// hostView is one host in /hosts.
type hostView struct {
	Origin    string    `json:"origin"`
	Robots    string    `json:"robots"`
	Delay     string    `json:"delay"`
	DelayWhy  string    `json:"delay_why"`
	Waiting   string    `json:"waiting,omitempty"`
	InFlight  int       `json:"in_flight"`
	Queued    int64     `json:"queued"`
	Done      int64     `json:"done"`
	Pages     int       `json:"pages_fetched"`
	ErrStreak int       `json:"error_streak"`
	NextAt    time.Time `json:"next_eligible,omitzero"`
	Parked    string    `json:"parked,omitempty"`

	waitingFor time.Duration // how long it still waits, when Waiting
}

// snapshot lists every host the gate knows, sorted by origin, as /hosts
// shows it.
func (h *hosts) snapshot(now time.Time) []hostView {
	queues := map[string]frontier.HostStats{}
	for _, fh := range h.front.Hosts() {
		queues[fh.Origin] = fh
	}
	var out []hostView
	for _, g := range h.gate.Snapshot(now) {
		q := queues[g.Origin]
		v := hostView{
			Origin: g.Origin, Robots: h.robots.Status(g.Origin, now),
			Delay: g.DelayText, DelayWhy: string(g.DelayWhy), Waiting: string(g.WaitingWhy),
			InFlight: g.InFlight, Queued: q.Queued, Done: q.Done, Pages: h.pagesOf(g.Origin),
			ErrStreak: g.ErrStreak, NextAt: g.NextAt, Parked: g.Parked,
		}
		if g.Waiting {
			v.waitingFor = g.NextAt.Sub(now)
		}
		out = append(out, v)
	}
	return out
}

// counts are how many hosts are active, waiting and parked.
func countHosts(views []hostView) (active, waiting, parked int) {
	for _, v := range views {
		switch {
		case v.Parked != "":
			parked++
		case v.Waiting != "":
			waiting++
		default:
			active++
		}
	}
	return active, waiting, parked
}

// idle reports whether every host with URLs queued is given up on for now:
// parked, or waiting longer than politeness.retry_after_max from now, the
// longest wait the crawl keeps to before it gives up on a host (in a
// daemon, a host given up on rests until the next pass). A host that keeps
// its politeness interval, or waits a shorter while (a Retry-After, a
// backoff after errors, its robots.txt to answer), is fetched this pass.
// A host with a URL leased is not idle either: crawlIdle counted that URL
// as queued, and the dispatcher may have leased it since.
func (h *hosts) idle(now time.Time) bool {
	giveUp := h.conf().Politeness.RetryAfterMax
	off := map[string]bool{}
	for _, v := range h.snapshot(now) {
		if v.Parked != "" || v.Waiting != "" && v.waitingFor > giveUp {
			off[v.Origin] = true
		}
	}
	for _, fh := range h.front.Hosts() {
		if !h.mine(fh.Origin) {
			continue
		}
		if fh.Leased > 0 { // about to be handed out, or given back
			return false
		}
		if fh.Queued > 0 && !fh.Parked && !off[fh.Origin] && fh.Wait.Sub(now) <= giveUp {
			return false
		}
	}
	return true
}

// awaitRobots keeps origin from being handed out while another worker
// fetches its robots.txt; that worker readies it when it is stored. The
// fetch may have ended just now, before the host was put off: then it is
// readied here.
func (h *hosts) awaitRobots(origin string, now time.Time) {
	h.front.SetReady(origin, farFuture)
	if h.robots.Status(origin, now) != "fetching" {
		h.ready(origin, now)
	}
}

// robotsUnreachable makes origin wait until its robots.txt is due again.
func (h *hosts) robotsUnreachable(origin string, until time.Time) {
	h.gate.Wait(origin, until, politeness.WhyRobots)
	h.ready(origin, h.now())
}

// learnRobots stores what the policy makes of robots.txt fetch f of
// origin, asked for at asked and answered at done, and applies its
// Crawl-delay. It returns the new state and that Crawl-delay.
func (h *hosts) learnRobots(origin string, f robots.Fetch, asked, done time.Time) (robots.State, time.Duration) {
	// A copy is fresh for its max-age from when it was asked for, as RFC
	// 9111 counts a response's age: counted from a slow answer's end, it
	// would outlive the server's own reckoning. Failures back off from
	// their end.
	stamp := done
	if r := robots.Classify(f); r == robots.ResultOK || r == robots.ResultMissing {
		stamp = asked
	}
	st := h.robots.Store(origin, f, stamp)
	h.obs.robotsResult(string(st.Result))
	d, _ := st.Rules().ForAgent(h.agent).CrawlDelay()
	h.gate.SetCrawlDelay(origin, d, done)
	return st, d
}

// saveRobots keeps origin's robots.txt state for the next run. A failure is
// logged: the next run fetches robots.txt again.
func (h *hosts) saveRobots(origin string, st robots.State) {
	if err := h.saved.Put(origin, st); err != nil {
		h.stateError("save robots.txt state", err)
	}
}

// retryAfterAsked keeps when the server of an unavailable robots.txt asked
// (Retry-After) to be asked again, for lastCall.
func (h *hosts) retryAfterAsked(origin string, f robots.Fetch, done time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.RetryAfter > 0 {
		h.asked[origin] = done.Add(f.RetryAfter)
	} else {
		delete(h.asked, origin)
	}
}

// robotsUnavailable starts the reason a host is given up on when its
// robots.txt never answered; its URLs' records say it as their error.
const robotsUnavailable = "robots.txt unavailable: "

// lastCall ends an ad hoc crawl whose only URLs left are of hosts whose
// robots.txt is unavailable (429, 5xx, no answer), at now: each is asked
// once more, at once or when its server's Retry-After allows if that is
// within wait (politeness.robots_last_wait); a host whose last call failed,
// or whose server asks for longer, is given up on. It reports whether it
// readied or parked a host; false, with nothing changed, when other hosts
// still have URLs waiting, or the last calls are still to come.
func (h *hosts) lastCall(now time.Time, wait time.Duration) bool {
	var left []string
	for _, fh := range h.front.Hosts() {
		if fh.Queued == 0 || fh.Parked || !h.mine(fh.Origin) {
			continue
		}
		if h.robots.Status(fh.Origin, now) != string(robots.ResultUnreachable) {
			return false // other work waits: not the end
		}
		left = append(left, fh.Origin)
	}
	changed := false
	for _, origin := range left {
		st, _ := h.robots.Peek(origin)
		h.mu.Lock()
		due, called := h.lastTry[origin]
		asked := h.asked[origin]
		h.mu.Unlock()
		switch {
		case called && st.FetchedAt.Before(due):
			continue // its last call is still to come
		case called || asked.Sub(now) > wait:
			why := st.Error
			if why == "" {
				why = strconv.Itoa(st.Status)
			}
			h.park(origin, robotsUnavailable+why)
		default:
			at := now
			if asked.After(now) {
				at = asked
			}
			h.mu.Lock()
			h.lastTry[origin] = at
			h.mu.Unlock()
			h.robots.Hasten(origin, at)
			h.gate.EndWait(origin, politeness.WhyRobots, now)
			h.gate.Wait(origin, at, politeness.WhyRobots)
			h.ready(origin, now)
		}
		changed = true
	}
	return changed
}
