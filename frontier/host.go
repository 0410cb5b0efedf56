package frontier

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"time"
)

// hintNone is a host's hint when it has no unleased delayed URL, as far as
// the frontier knows.
const hintNone = math.MaxInt64

// host is the in-memory state of one origin. Its fields are guarded by
// Frontier.mu, except that the writer (whoever holds Frontier.w.mu), the
// only one that changes rec, reads rec without it.
type host struct {
	id  uint32
	rec hostRecord // as last committed

	readyAt int64 // Unix ns, from SetReady
	// busyBy is the lease whose hand-out made the host busy, until
	// SetReady or until that lease is given back; nil when not busy.
	busyBy *Lease
	// leases are its leases out, a few; nil when there are none, as for
	// most hosts most of the time, so that they take no memory.
	leases []*Lease
	// Leased URLs of rec.ready, of rec.delayed, and those of them that
	// are scheduled revisits.
	leasedReady, leasedDelayed, leasedSched int64
	// hint is at most the due time of the host's earliest unleased delayed
	// URL (Unix ns), or hintNone. It may be early; Next corrects it.
	hint int64
	// stalled is set when Next found no unleased undelayed URL although
	// the counts promised one; it keeps Next from trying again until the
	// host changes. It never happens unless the counts are wrong.
	stalled bool
	// marks are the host's entries done but still in the ready or
	// delayed class (marks.go), a few. Only the writer changes them.
	marks []markAdd
	// persisted is set once the host record is in the hosts bucket; dirty
	// when rec.counts changed since it was last written there (the log
	// holds the changes, and Frontier.dirty lists the host).
	persisted, dirty bool
	// staged are the host's URLs staged in the inbox (inbox.go), a few.
	// Only the writer changes them.
	staged []staged

	key   int64 // when the host is eligible, the heap's order
	index int   // in Frontier.ready, or -1
}

func newHost(id uint32, rec hostRecord) *host {
	return &host{id: id, rec: rec, hint: hintNone, index: -1}
}

// out reports whether the entry seq is leased or done (marked).
func (h *host) out(seq uint64) bool {
	_, marked := h.mark(seq)
	return marked || h.leased(seq)
}

// leased reports whether entry seq is leased.
func (h *host) leased(seq uint64) bool { return h.lease(seq) != nil }

// lease returns the lease of entry seq, or nil when it is not leased.
func (h *host) lease(seq uint64) *Lease {
	for _, l := range h.leases {
		if l.seq == seq {
			return l
		}
	}
	return nil
}

// mark returns the mark of entry seq, if it is marked.
func (h *host) mark(seq uint64) (mark, bool) {
	for i := range h.marks {
		if h.marks[i].seq == seq {
			return h.marks[i].mark, true
		}
	}
	return mark{}, false
}

// eligibleAt returns when Next may hand out one of the host's URLs, if ever
// without a change.
func (h *host) eligibleAt() (int64, bool) {
	if h.busyBy != nil || h.rec.parked {
		return 0, false
	}
	t := max(h.readyAt, h.rec.wait)
	if h.rec.ready-h.leasedReady > 0 && !h.stalled {
		return t, true
	}
	if h.rec.delayed-h.leasedDelayed > 0 && h.hint != hintNone {
		return max(t, h.hint), true
	}
	return 0, false
}

func (h *host) stats() Stats {
	leased := h.leasedReady + h.leasedDelayed
	return Stats{
		Queued:    max(0, h.rec.ready+h.rec.delayed-h.rec.scheduled-(leased-h.leasedSched)),
		Leased:    leased,
		Done:      max(0, h.rec.done-h.leasedSched),
		Scheduled: max(0, h.rec.scheduled-h.leasedSched),
	}
}

// hostHeap orders the eligible hosts by the time they became (or become)
// eligible, earliest first: the host that has waited longest goes first.
type hostHeap []*host

func (q hostHeap) Len() int { return len(q) }
func (q hostHeap) Less(i, j int) bool {
	if q[i].key != q[j].key {
		return q[i].key < q[j].key
	}
	return q[i].id < q[j].id
}
func (q hostHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *hostHeap) Push(x any) {
	h := x.(*host)
	h.index = len(*q)
	*q = append(*q, h)
}
func (q *hostHeap) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	h.index = -1
	return h
}

// reheap puts h in, moves it within, or takes it out of the heap of
// eligible hosts, after a change. f.mu must be held.
func (f *Frontier) reheap(h *host) {
	key, ok := h.eligibleAt()
	switch {
	case !ok && h.index >= 0:
		heap.Remove(&f.ready, h.index)
	case !ok:
	case h.index >= 0:
		h.key = key
		heap.Fix(&f.ready, h.index)
	default:
		h.key = key
		heap.Push(&f.ready, h)
	}
}

// SetReady says when host origin may next be handed out by Next: it ends
// the busy state that Next began by handing out one of its URLs (at once
// for max_per_host > 1, or when the host's politeness allows its next
// request). A lease given back before SetReady ends that busy state too,
// leaving the host ready as it was, so a caller that never calls it loses
// no host. The time lives in memory only; after Open every host is ready
// (subject to SetHostWait). An unknown origin is ignored.
func (f *Frontier) SetReady(origin string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[origin]
	if h == nil {
		return
	}
	h.busyBy = nil
	h.readyAt = timeNanos(at)
	f.reheap(h)
	f.signal()
}

// SetHostWait makes host origin wait until the given time, which survives a
// restart (a Retry-After): Next hands out none of its URLs before it. A
// zero time ends the wait. The host need not have URLs.
func (f *Frontier) SetHostWait(origin string, until time.Time) error {
	return f.changeHost(origin, func(r *hostRecord) { r.wait = timeNanos(until) })
}

// Park stops Next from handing out any URL of host origin until Unpark,
// across restarts. Its queued URLs stay queued, and do not keep Next from
// reporting the frontier drained.
func (f *Frontier) Park(origin, reason string) error {
	return f.changeHost(origin, func(r *hostRecord) { r.parked, r.parkReason = true, reason })
}

// Unpark undoes Park.
func (f *Frontier) Unpark(origin string) error {
	return f.changeHost(origin, func(r *hostRecord) { r.parked, r.parkReason = false, "" })
}

func (f *Frontier) changeHost(origin string, change func(*hostRecord)) error {
	if origin == "" {
		return errEmptyOrigin
	}
	_, err := f.submit(1, func(b *batch) (int, error) {
		change(&b.touch(b.host(origin)).rec)
		return 0, nil
	})
	return err
}

// Hosts lists every host the frontier knows, by origin.
func (f *Frontier) Hosts() []HostStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]HostStats, 0, len(f.hosts))
	for _, h := range f.hosts {
		out = append(out, h.info())
	}
	slices.SortFunc(out, func(a, b HostStats) int { return cmp.Compare(a.Origin, b.Origin) })
	return out
}

// Host describes host origin, if the frontier knows it.
func (f *Frontier) Host(origin string) (HostStats, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[origin]
	if h == nil {
		return HostStats{}, false
	}
	return h.info(), true
}

func (h *host) info() HostStats {
	return HostStats{
		Origin:     h.rec.origin,
		Stats:      h.stats(),
		ReadyAt:    nanosTime(h.readyAt),
		Wait:       nanosTime(h.rec.wait),
		Busy:       h.busyBy != nil,
		Parked:     h.rec.parked,
		ParkReason: h.rec.parkReason,
	}
}
