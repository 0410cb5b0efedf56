package frontier

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// Next hands out a URL that is due at now, of a host that is ready at now
// (SetReady, SetHostWait, not parked, not busy), as a Lease, and makes the
// host busy until SetReady, or until that lease is given back if SetReady
// did not come first. Hosts take turns by the time they became ready,
// earliest first. Within a host, due delayed URLs go first, earliest due
// first; then the others by priority, highest first, then in the order they
// were added.
//
// When nothing is due it returns a nil Lease and says, in Idle, when
// something will be (if nothing changes) and whether the frontier is
// drained. Next reads the database but never writes it.
func (f *Frontier) Next(now time.Time) (*Lease, Idle, error) {
	n := timeNanos(now)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, Idle{}, ErrClosed
	}
	var tx *bbolt.Tx
	defer func() {
		if tx != nil {
			_ = tx.Rollback()
		}
	}()
	for len(f.ready) > 0 {
		h := f.ready[0]
		if h.key > n {
			return nil, f.idle(h.key), nil
		}
		if tx == nil {
			var err error
			if tx, err = f.db.Begin(false); err != nil {
				return nil, Idle{}, fmt.Errorf("frontier: next: %w", err)
			}
		}
		l, err := f.take(tx, h, n)
		if err != nil {
			return nil, Idle{}, err
		}
		if l != nil {
			h.busyBy = l
		}
		f.reheap(h)
		if l != nil {
			return l, Idle{}, nil
		}
	}
	return nil, f.idle(0), nil
}

// idle describes an idle frontier; until is the earliest time a host will
// be eligible, 0 for never. f.mu must be held.
func (f *Frontier) idle(until int64) Idle {
	entries := f.sum.ready + f.sum.delayed - f.parked.ready - f.parked.delayed
	return Idle{
		Until:     nanosTime(until),
		Drained:   f.leasedN == 0 && entries <= 0,
		Scheduled: max(0, f.sum.scheduled-f.parked.scheduled-f.leasedSched),
	}
}

// take leases host h's first URL due at n, or returns nil after noting what
// it learnt (the host's hint, or that it is stalled). f.mu must be held.
func (f *Frontier) take(tx *bbolt.Tx, h *host, n int64) (*Lease, error) {
	c := tx.Bucket(bucketURLs).Cursor()
	var prefix [5]byte
	binary.BigEndian.PutUint32(prefix[:], h.id)
	if h.rec.delayed-h.leasedDelayed > 0 && h.hint <= n {
		prefix[4] = classDelayed
		h.hint = hintNone
		for k, v := c.Seek(prefix[:]); bytes.HasPrefix(k, prefix[:]); k, v = c.Next() {
			seq, ok := queueKeySeq(k)
			if !ok || len(k) != delayedKeyLen {
				return nil, fmt.Errorf("frontier: queue key %x: %w", k, errCorrupt)
			}
			if h.out(seq) {
				continue
			}
			due := int64(binary.BigEndian.Uint64(k[5:13]))
			h.hint = due // the earliest unleased, now or after this lease
			if due > n {
				break
			}
			return f.lease(tx, h, k[4:], seq, v, true)
		}
	}
	if h.rec.ready-h.leasedReady > 0 && !h.stalled {
		// The first of the queue entries and the staged URLs.
		s := h.firstStaged()
		prefix[4] = classReady
		for k, v := c.Seek(prefix[:]); bytes.HasPrefix(k, prefix[:]); k, v = c.Next() {
			seq, ok := queueKeySeq(k)
			if !ok || len(k) != readyKeyLen {
				return nil, fmt.Errorf("frontier: queue key %x: %w", k, errCorrupt)
			}
			if h.out(seq) {
				continue
			}
			if s != nil && s.before(k) {
				break
			}
			return f.lease(tx, h, k[4:], seq, v, false)
		}
		if s != nil {
			return f.leaseStaged(h, s)
		}
		h.stalled = true
	}
	return nil, nil
}

// lease leases host h's queue entry whose key without the hostID is key
// and whose value is v.
func (f *Frontier) lease(tx *bbolt.Tx, h *host, key []byte, seq uint64, v []byte, delayed bool) (*Lease, error) {
	k := append(appendUint32(make([]byte, 0, 4+len(v)), h.id), v...)
	rv := tx.Bucket(bucketURLs).Get(k)
	if rv == nil {
		return nil, fmt.Errorf("frontier: queued %s%s has no record: %w", h.rec.origin, v, errCorrupt)
	}
	r, err := decodeRecord(rv, h.rec.origin)
	if err != nil {
		return nil, fmt.Errorf("frontier: queued %s%s: %w", h.rec.origin, v, err)
	}
	if r.seq != seq || r.delayed != delayed {
		return nil, fmt.Errorf("frontier: queued %s%s: record disagrees: %w", h.rec.origin, v, errCorrupt)
	}
	return f.leaseRecord(h, key, v, &r), nil
}

// leaseStaged leases host h's staged URL s.
func (f *Frontier) leaseStaged(h *host, s *staged) (*Lease, error) {
	r, err := decodeRecord([]byte(s.record()), h.rec.origin)
	if err != nil {
		return nil, fmt.Errorf("frontier: staged %s%s: %w", h.rec.origin, s.pq(), err)
	}
	if r.seq != s.seq || r.delayed {
		return nil, fmt.Errorf("frontier: staged %s%s: record disagrees: %w", h.rec.origin, s.pq(), errCorrupt)
	}
	return f.leaseRecord(h, s.queueKey(nil, h.id)[4:], []byte(s.pq()), &r), nil
}

// leaseRecord leases the URL of record r, whose queue key without the
// hostID is key and whose urls key without the hostID is v.
func (f *Frontier) leaseRecord(h *host, key, v []byte, r *record) *Lease {
	seq, delayed := r.seq, r.delayed
	l := &Lease{
		Item:    itemOf(h.rec.origin, v, r),
		Revisit: r.visited,
		f:       f, h: h, seq: seq, delayed: delayed,
	}
	l.qkey = append(appendUint32(make([]byte, 0, delayedKeyLen), h.id), key...)
	if delayed {
		h.leasedDelayed++
	} else {
		h.leasedReady++
	}
	if l.Revisit {
		h.leasedSched++
		f.leasedSched++
	}
	f.leasedN++
	h.leases = append(h.leases, l)
	return l
}

// itemOf is the Item of record r, whose queue entry's value (its URL key
// without the hostID) is v.
func itemOf(origin string, v []byte, r *record) Item {
	pq := v
	if r.kind == KindSitemap {
		pq = v[:len(v)-1]
	}
	it := Item{
		URL:       URL{Key: origin + string(pq), Origin: origin},
		Kind:      r.kind,
		Via:       r.via,
		Depth:     int(min(r.depth, 1<<31)),
		Referrer:  r.referrer,
		Priority:  float64(r.prio) / prioScale,
		Attempts:  int(min(r.attempts, 1<<31)),
		Lastmod:   r.lastmod,
		InSitemap: r.inSitemap,
		LinkDepth: NoLinkDepth,
		Requisite: r.requisite,
	}
	if r.linkDepth >= 0 {
		it.LinkDepth = int(r.linkDepth)
	}
	it.Request = it.Key
	if r.request != "" {
		it.Request = r.request
	}
	if r.delayed {
		it.NotBefore = nanosTime(r.due)
	}
	return it
}

// Done completes a lease with its outcome and the links it yielded, in one
// transaction (with Outcome.Hook, if any): the URL is done (or scheduled
// again, with Outcome.RevisitAt) and the new links are queued as Add
// queues them. It returns how many links were new. Once Done returns nil
// the change is on disk; if it fails, nothing changed and the lease is
// still out.
//
// With more than Options.MaxBatch links, the first ones are added in
// transactions of their own before the last one completes the lease: a
// crash in between leaves the lease to be done again, its links deduplicated.
func (f *Frontier) Done(l *Lease, o Outcome, links []Item) (int, error) {
	if err := checkItems(links); err != nil {
		return 0, err
	}
	if err := f.claim(l); err != nil {
		return 0, err
	}
	added := 0
	for len(links) > f.opts.MaxBatch {
		chunk := links[:f.opts.MaxBatch]
		links = links[len(chunk):]
		n, err := f.submit(len(chunk), func(b *batch) (int, error) { return b.addItems(chunk) })
		added += n
		if err != nil {
			f.unclaim(l)
			return added, err
		}
	}
	a := action{done: true, revisitAt: timeNanos(o.RevisitAt)}
	if a.revisitAt == 0 && !o.RevisitAt.IsZero() {
		a.revisitAt = 1 // a revisit before 1970: due at once
	}
	n, err := f.submit(len(links)+1, func(b *batch) (int, error) {
		if err := b.finish(l, a); err != nil {
			return 0, err
		}
		n, err := b.addItems(links)
		if err != nil {
			return 0, err
		}
		if o.Hook != nil {
			if err := o.Hook(b.tx); err != nil {
				return 0, fmt.Errorf("frontier: done hook: %w", err)
			}
		}
		return n, nil
	})
	if err != nil {
		f.unclaim(l)
	}
	return added + n, err
}

// Retry gives a lease back for another attempt: the URL is due again at
// `at` (at once if zero) and its Attempts grow by one.
func (f *Frontier) Retry(l *Lease, at time.Time) error {
	if err := f.putBack(l, action{at: timeNanos(at), attempt: true}); err != nil {
		return err
	}
	return f.finishLater(l)
}

// Release gives a lease back without counting an attempt, for when the URL
// was not tried (politeness said "not now", or the crawl is stopping). With
// a zero time the URL takes its place again and nothing is written; with a
// time it is due at that time.
func (f *Frontier) Release(l *Lease, at time.Time) error {
	if !at.IsZero() {
		if err := f.putBack(l, action{at: timeNanos(at)}); err != nil {
			return err
		}
		return f.finishLater(l)
	}
	if err := f.claim(l); err != nil {
		return err
	}
	f.mu.Lock()
	if l.delayed {
		l.h.hint = min(l.h.hint, timeNanos(l.NotBefore))
	}
	f.endLease(l)
	f.signal()
	f.mu.Unlock()
	return f.finishLater(l)
}

// finishLater marks l's URL done as MarkDone said while it was leased
// (another worker of a shared crawl did it), now that l is given back
// without being done here: MarkDone leaves a leased URL alone, and
// without this the URL would stay queued and be fetched again.
func (f *Frontier) finishLater(l *Lease) error {
	f.mu.Lock()
	fin := l.elsewhere
	f.mu.Unlock()
	if fin == nil {
		return nil
	}
	_, err := f.MarkDone([]Finished{*fin})
	return err
}

func (f *Frontier) putBack(l *Lease, a action) error {
	if err := f.claim(l); err != nil {
		return err
	}
	_, err := f.submit(1, func(b *batch) (int, error) { return 0, b.finish(l, a) })
	if err != nil {
		f.unclaim(l)
	}
	return err
}

// claim marks a lease as being given back, so that only one call does.
func (f *Frontier) claim(l *Lease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return ErrClosed
	case l == nil || l.f != f || l.state != leaseActive:
		return ErrLease
	}
	l.state = leaseFinishing
	return nil
}

func (f *Frontier) unclaim(l *Lease) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.state == leaseFinishing {
		l.state = leaseActive
	}
}
