package frontier

import (
	"time"

	"go.etcd.io/bbolt"
)

// DefaultPriority is the priority of an Item whose Priority is 0: the
// sitemap protocol's default.
const DefaultPriority = 0.5

// Kind says how the engine reads a URL once fetched.
type Kind uint8

// The kinds of URL. A page and a sitemap at the same address are two
// entries: a URL first found as a link can still be read as a sitemap.
const (
	KindPage    Kind = iota // an HTML page or other resource
	KindSitemap             // a sitemap or sitemap index
)

// String returns "page" or "sitemap".
func (k Kind) String() string {
	if k == KindSitemap {
		return "sitemap"
	}
	return "page"
}

// Via says how a URL was found: the inventory's found_via.
type Via uint8

// The ways a URL is found.
const (
	ViaLink     Via = iota // a link in a page
	ViaSeed                // a seed of the configuration or command line
	ViaSitemap             // listed in a sitemap
	ViaRedirect            // the target of a redirect
)

// String returns "link", "seed", "sitemap" or "redirect".
func (v Via) String() string {
	switch v {
	case ViaSeed:
		return "seed"
	case ViaSitemap:
		return "sitemap"
	case ViaRedirect:
		return "redirect"
	}
	return "link"
}

// Item is a URL with what the frontier keeps about it.
type Item struct {
	URL // from Canonicalize or Resolve; Key must start with Origin

	Kind     Kind
	Via      Via
	Depth    int    // link hops from a seed or sitemap entry
	Referrer string // the page it was found on, if any
	// Priority orders a host's queue, highest first, on the sitemap scale
	// 0.0–1.0 (kept to 4 decimals). 0 means DefaultPriority; a negative
	// value means the lowest, 0.0. An item at the DefaultPriority with a
	// LinkDepth is queued 0.0001 lower per link hop (to 99 hops), so that
	// a host's linked pages go breadth first: an item between 0.4901 and
	// 0.5 is taken as one of those.
	Priority float64
	// NotBefore delays the URL: zero means it is due at once and takes its
	// place in priority order; otherwise it is due at NotBefore, and due
	// delayed URLs go before the host's undelayed ones, earliest first.
	NotBefore time.Time
	// Attempts counts the failed attempts (Retry) since the URL was last
	// done. Add ignores it.
	Attempts  int
	Lastmod   string // the sitemap's lastmod, W3C datetime, as written
	InSitemap bool   // listed in a sitemap
	// LinkDepth is the link hops from a seed, sitemaps ignored and
	// redirects counting none; NoLinkDepth when no chain of links from a
	// seed is known to reach it (a URL only a sitemap lists). Add keeps
	// the least it is given for a URL not yet done, and moves it to its
	// place in its queue by it (see Priority).
	LinkDepth int
	// Requisite marks a page's requisite (an image, a stylesheet, a
	// script): fetched for the page, never crawled from. A URL found
	// first as a requisite stays one when a link to it is found later,
	// and the other way round.
	Requisite bool
}

// NoLinkDepth is the LinkDepth of a URL no chain of links reaches.
const NoLinkDepth = -1

// Lease is a URL handed out by Next. It must be given back exactly once, to
// Done, Retry or Release; until then no other Next hands out the same URL.
// A lease belongs to the Frontier that made it: after Close, or a crash, the
// URL is queued again and the old Lease is void.
type Lease struct {
	Item
	// Revisit is true when the URL was done before and is handed out again
	// by a revisit schedule (Outcome.RevisitAt, Reschedule).
	Revisit bool

	f       *Frontier
	h       *host
	seq     uint64
	qkey    []byte // its queue key when handed out
	delayed bool   // taken from the delayed part of the queue
	state   leaseState
	// elsewhere is the URL's finish by another worker (MarkDone) that
	// came while it was leased here: applied when the lease is given back
	// rather than done (see finishLater). Guarded by Frontier.mu.
	elsewhere *Finished
}

type leaseState uint8

const (
	leaseActive    leaseState = iota // handed out
	leaseFinishing                   // given to Done, Retry or Release, not yet committed
	leaseOver                        // given back
)

// Outcome is how a leased URL ended, for Done. (What was fetched, its
// status included, is the caller's to record, with Hook.)
type Outcome struct {
	// RevisitAt, when not zero, schedules the URL again: it counts as done
	// (and scheduled) until then, and is handed out again once due.
	RevisitAt time.Time
	// Hook, when not nil, runs inside the transaction that completes the
	// lease, so that the caller's own records (in buckets of its own) commit
	// atomically with it. An error from Hook fails Done and changes nothing.
	// Hook may run more than once when another operation of the same group
	// commit fails; it must have no effect outside tx.
	Hook func(tx *bbolt.Tx) error
}

// Stats counts URLs by state. Every URL ever added is in exactly one of
// Queued, Leased and Done.
type Stats struct {
	Queued    int64 // waiting to be handed out (delayed ones included)
	Leased    int64 // handed out and not yet given back
	Done      int64 // finished, revisits scheduled included
	Scheduled int64 // the part of Done due again at a revisit time
}

// HostStats describes one host (origin).
type HostStats struct {
	Origin string
	Stats
	// ReadyAt is when the host may next be handed out, as last set by
	// SetReady; zero since Open.
	ReadyAt time.Time
	// Wait is the persisted wait set by SetHostWait (a Retry-After).
	Wait time.Time
	// Busy is true from Next handing out one of its URLs until SetReady
	// or until that lease is given back.
	Busy       bool
	Parked     bool
	ParkReason string
}

// Idle says why Next handed nothing out.
type Idle struct {
	// Until is the earliest time a host may have a URL ready, if nothing
	// changes; zero when none will become ready by itself (every host with
	// URLs is busy or parked, or there are no URLs).
	Until time.Time
	// Drained is true when nothing is queued, leased or scheduled, parked
	// hosts aside: an ad hoc crawl is over.
	Drained bool
	// Scheduled counts the revisits that are scheduled (parked hosts
	// aside), for a daemon that waits for them.
	Scheduled int64
}
