package frontier

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// This file holds the operations the writer runs inside its transaction.
// They change the buckets and stage the in-memory changes in the batch.

// addItems queues the items never seen before and merges what the others
// bring into their records. It returns how many were new. It stages (see
// inbox.go) a new, undelayed item whose host has fewer than stageBelow
// items in the batch, or of which the batch finds fewer than stageBelow
// new ones and writes nothing else.
func (b *batch) addItems(items []Item) (int, error) {
	added := 0
	var h *host
	var d *hostDelta
	few := fewPerOrigin(items)
	for i := range items {
		it := &items[i]
		if h == nil || it.Origin != h.rec.origin {
			h = b.host(it.Origin)
			d = b.touch(h)
		}
		pq := it.Key[len(it.Origin):]
		start := len(b.arena)
		k := b.keep(func(a []byte) []byte { return urlKey(a, h.id, pq, it.Kind) })
		v := b.get(k)
		if v == nil && d.stagedN() > 0 && d.findStaged(k[4:]) {
			if !(it.InSitemap || it.Lastmod != "" || d.nearerStaged(k[4:], it.LinkDepth, h.rec.origin)) {
				b.arena = b.arena[:start]
				continue
			}
			// Seen, and staged: merge into its record, written first.
			if err := b.flushStaged(h); err != nil {
				return 0, err
			}
			v = b.get(k)
		}
		if v != nil {
			if err := b.merge(h, k, v, it); err != nil {
				return 0, err
			}
			// k is not kept by bbolt unless merge wrote it.
			if len(b.arena) == start+len(k) {
				b.arena = b.arena[:start]
			}
			continue
		}
		seq, err := b.urls.NextSequence()
		if err != nil {
			return 0, fmt.Errorf("frontier: sequence: %w", err)
		}
		r := record{
			kind: it.Kind, via: it.Via & 3, inSitemap: it.InSitemap,
			prio: linkedPrio(quantPriority(it.Priority), int64(it.LinkDepth)), depth: uint64(max(it.Depth, 0)), seq: seq,
			referrer: it.Referrer, lastmod: it.Lastmod, linkDepth: int64(max(it.LinkDepth, NoLinkDepth)),
			requisite: it.Requisite,
		}
		if it.Request != it.Key && it.Request != "" {
			r.request = it.Request
		}
		if !it.NotBefore.IsZero() {
			r.delayed, r.due = true, timeNanos(it.NotBefore)
		}
		if !r.delayed && (few(it.Origin) || !d.wrote && len(d.newStaged) < stageBelow-1) {
			b.stage(h, d, k, &r)
			added++
			continue
		}
		if err := b.putRecord(h, k, &r); err != nil {
			return 0, err
		}
		if err := b.putQueue(h, d, k, &r); err != nil {
			return 0, err
		}
		added++
	}
	return added, nil
}

// fewPerOrigin returns a function that reports whether items have fewer
// than stageBelow items of an origin.
func fewPerOrigin(items []Item) func(origin string) bool {
	if len(items) < stageBelow {
		return func(string) bool { return true }
	}
	n := make(map[string]int, 8)
	for i := range items {
		n[items[i].Origin]++
	}
	return func(origin string) bool { return n[origin] < stageBelow }
}

// merge records what an item seen before brings: InSitemap, and a Lastmod
// later than the one recorded, which makes a done URL due again. A sitemap
// entry also brings its depth: a URL first found by a link and then listed
// in a sitemap is at the sitemap's depth (0) from then on, with the sitemap
// as how it was found, so that max_depth counts from it as the README
// says however the two were ordered. A link brings a LinkDepth less than
// the one recorded, and with it the URL's place in its queue (see
// nearer).
func (b *batch) merge(h *host, k, v []byte, it *Item) error {
	if !(it.InSitemap || it.Lastmod != "" || nearer(recordLinkDepth(v), it.LinkDepth)) {
		return nil // most links to a URL seen before: nothing decoded
	}
	r, err := decodeRecord(v, h.rec.origin)
	if err != nil {
		return fmt.Errorf("frontier: record of %s: %w", it.Key, err)
	}
	if nearer(r.linkDepth, it.LinkDepth) {
		if err := b.nearer(h, k, &r, it.LinkDepth); err != nil {
			return err
		}
	}
	changed := it.InSitemap && !r.inSitemap
	r.inSitemap = r.inSitemap || it.InSitemap
	if depth := uint64(max(it.Depth, 0)); it.InSitemap && depth < r.depth {
		r.depth, r.via, r.referrer = depth, it.Via&3, it.Referrer
		changed = true
	}
	moved := false
	if it.Lastmod != "" && it.Lastmod != r.lastmod && (r.lastmod == "" || lastmodLater(it.Lastmod, r.lastmod)) {
		moved = r.lastmod != ""
		r.lastmod = it.Lastmod
		changed = true
	}
	switch {
	case moved:
		inQueue, err := b.queued(h, &r)
		if err != nil {
			return err
		}
		return b.reschedule(h, k, &r, inQueue, timeNanos(it.NotBefore))
	case changed:
		return b.putRecord(h, k, &r)
	}
	return nil
}

// nearer reports whether a link depth found (≥ 0 when known) is less than
// the one recorded.
func nearer(recorded int64, found int) bool {
	return found >= 0 && (recorded < 0 || int64(found) < recorded)
}

// nearer gives record r (key k) link depth ld, found by a link, and
// stores it. One still queued takes the place of its new link depth in
// its queue (see linkedPrio), which undelayed it takes at once; one only a
// sitemap listed goes up among the links first. One done keeps it for its
// next visit, and for the links to come, which then need not decode it.
// (A lease out keeps the depth it was handed out with; its entry may
// move, as Reschedule moves one, and finish finds it.)
func (b *batch) nearer(h *host, k []byte, r *record, ld int) error {
	inQueue, err := b.queued(h, r)
	if err != nil {
		return err
	}
	if !inQueue {
		r.linkDepth = int64(ld)
		return b.putRecord(h, k, r)
	}
	prio := r.prio
	if r.linkDepth < 0 && prio < linkedTop-linkBand {
		prio = linkedTop // listed only, and now linked
	}
	r.linkDepth = int64(ld)
	prio = linkedPrio(prio, r.linkDepth)
	if prio != r.prio && !r.delayed {
		d := b.touch(h)
		if err := b.deleteQueue(h, d, r); err != nil {
			return err
		}
		r.prio = prio
		if err := b.putQueue(h, d, k, r); err != nil {
			return err
		}
	}
	r.prio = prio
	return b.putRecord(h, k, r)
}

// queued reports whether record r has its queue entry: whether it is
// queued (or scheduled) rather than done. It flushes the host's marks
// first, if it has any.
func (b *batch) queued(h *host, r *record) (bool, error) {
	if b.touch(h).marked() > 0 {
		if err := b.flushHost(h); err != nil {
			return false, err
		}
	}
	var buf [delayedKeyLen]byte
	return b.get(queueKey(buf[:0], h.id, r)) != nil, nil
}

// lastmodLater reports whether lastmod a is later than b: as times when both
// are W3C datetimes, else whenever they differ.
func lastmodLater(a, b string) bool {
	ta, errA := parseW3C(a)
	tb, errB := parseW3C(b)
	if errA != nil || errB != nil {
		return a != b
	}
	return ta.After(tb)
}

// parseW3C parses the W3C datetime profile of ISO 8601 that sitemaps use.
func parseW3C(s string) (time.Time, error) {
	var err error
	for _, layout := range [...]string{time.RFC3339, "2006-01-02T15:04Z07:00", "2006-01-02", "2006-01", "2006"} {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// reschedule makes the URL of record r (key k) due at `at` (Unix ns) if that
// is earlier than it is now, and stores r, which the caller may have changed.
func (b *batch) reschedule(h *host, k []byte, r *record, inQueue bool, at int64) error {
	d := b.touch(h)
	switch {
	case !inQueue: // done: it becomes a revisit
		var buf [doneKeyLen]byte
		if err := b.urls.Delete(doneKey(buf[:0], h.id, r.seq)); err != nil {
			return fmt.Errorf("frontier: delete done entry: %w", err)
		}
		r.visited, r.attempts, r.delayed, r.due = true, 0, true, at
		d.rec.scheduled++
		if err := b.putQueue(h, d, k, r); err != nil {
			return err
		}
	case r.delayed && r.due > at:
		if err := b.deleteQueue(h, d, r); err != nil {
			return err
		}
		r.due = at
		if err := b.putQueue(h, d, k, r); err != nil {
			return err
		}
	}
	return b.putRecord(h, k, r)
}

// action is what finish does with a lease.
type action struct {
	done      bool  // Done; otherwise Retry or Release
	revisitAt int64 // Done's, Unix ns, 0 for none
	at        int64 // Retry's and Release's due time, Unix ns
	attempt   bool  // Retry: count an attempt
}

// finish gives back lease l. The record, not the lease, says where the URL
// is queued now: a Reschedule may have moved it while it was out.
func (b *batch) finish(l *Lease, a action) error {
	h := l.h
	d := b.touch(h)
	if !l.delayed && d.isStaged(l.seq) {
		if err := b.flushStaged(h); err != nil {
			return err
		}
	}
	if a.done && a.revisitAt == 0 && b.finishInPlace(l, d) {
		return nil
	}
	k := b.keep(func(x []byte) []byte { return urlKey(x, h.id, l.Key[len(l.Origin):], l.Kind) })
	v := b.get(k)
	if v == nil {
		return fmt.Errorf("frontier: leased %s: %w", l.Key, errCorrupt)
	}
	r, err := decodeRecord(v, h.rec.origin)
	if err != nil {
		return fmt.Errorf("frontier: leased %s: %w", l.Key, err)
	}
	if r.seq != l.seq {
		return fmt.Errorf("frontier: leased %s: record disagrees: %w", l.Key, errCorrupt)
	}
	if err := b.deleteQueue(h, d, &r); err != nil {
		return fmt.Errorf("frontier: leased %s: %w", l.Key, err)
	}
	if !a.done {
		if a.attempt {
			r.attempts++
		}
		r.delayed, r.due = true, a.at
		if err := b.putQueue(h, d, k, &r); err != nil {
			return err
		}
		b.leases = append(b.leases, l)
		return b.putRecord(h, k, &r)
	}
	b.leases = append(b.leases, l)
	if !r.visited {
		d.rec.done++
	}
	if a.revisitAt == 0 {
		// Done for good: its entry in the done class says so, and the
		// record is not written. It keeps its attempts, which a revisit
		// resets.
		if r.visited {
			d.rec.scheduled--
		}
		return b.putDone(h, k[4:], r.seq)
	}
	if !r.visited {
		d.rec.scheduled++
	}
	r.visited, r.attempts, r.delayed, r.due = true, 0, true, a.revisitAt
	if err := b.putQueue(h, d, k, &r); err != nil {
		return err
	}
	return b.putRecord(h, k, &r)
}

// finishInPlace completes lease l for good with a done mark, without
// reading its record, if its queue entry is still where Next found it (no
// Reschedule moved it). The lease's class and whether it is a revisit do
// not change while it is out.
func (b *batch) finishInPlace(l *Lease, d *hostDelta) bool {
	if b.get(l.qkey) == nil {
		return false
	}
	b.markDone(l, d)
	if l.delayed {
		d.rec.delayed--
	} else {
		d.rec.ready--
	}
	if l.Revisit {
		d.rec.scheduled--
	} else {
		d.rec.done++
	}
	b.leases = append(b.leases, l)
	return true
}

func (b *batch) putRecord(h *host, k []byte, r *record) error {
	v := b.keep(func(a []byte) []byte { return appendRecord(a, r, h.rec.origin) })
	if err := b.urls.Put(k, v); err != nil {
		return fmt.Errorf("frontier: put url: %w", err)
	}
	b.touch(h).wrote = true
	return nil
}

// putQueue queues record r, of urls key k, and counts it.
func (b *batch) putQueue(h *host, d *hostDelta, k []byte, r *record) error {
	qk := b.keep(func(a []byte) []byte { return queueKey(a, h.id, r) })
	if err := b.urls.Put(qk, k[4:]); err != nil {
		return fmt.Errorf("frontier: put queue: %w", err)
	}
	d.wrote = true
	if r.delayed {
		d.rec.delayed++
		d.hint = min(d.hint, r.due)
	} else {
		d.rec.ready++
	}
	return nil
}

// putDone puts the done entry of URL seq, whose urls key without the
// hostID is pq.
func (b *batch) putDone(h *host, pq []byte, seq uint64) error {
	dk := b.keep(func(a []byte) []byte { return doneKey(a, h.id, seq) })
	if err := b.urls.Put(dk, pq); err != nil {
		return fmt.Errorf("frontier: put done entry: %w", err)
	}
	b.touch(h).wrote = true
	return nil
}

// deleteQueue takes record r out of the queue and uncounts it. The entry
// must exist.
func (b *batch) deleteQueue(h *host, d *hostDelta, r *record) error {
	var buf [delayedKeyLen]byte
	qk := queueKey(buf[:0], h.id, r)
	c := b.cursor()
	if k, _ := c.Seek(qk); !bytes.Equal(k, qk) {
		return fmt.Errorf("frontier: not queued: %w", errCorrupt)
	}
	if err := c.Delete(); err != nil {
		return fmt.Errorf("frontier: delete queue: %w", err)
	}
	d.wrote = true
	if r.delayed {
		d.rec.delayed--
	} else {
		d.rec.ready--
	}
	return nil
}

// rescheduleDone reschedules at `at` up to most of host h's done URLs, the
// first of its done class, and returns how many.
func (b *batch) rescheduleDone(h *host, at int64, most int) (int, error) {
	if b.touch(h).marked() > 0 {
		if err := b.flushHost(h); err != nil {
			return 0, err
		}
	}
	var prefix [5]byte
	binary.BigEndian.PutUint32(prefix[:], h.id)
	prefix[4] = classDone
	var keys [][]byte
	c := b.urls.Cursor()
	for k, v := c.Seek(prefix[:]); bytes.HasPrefix(k, prefix[:]) && len(keys) < most; k, v = c.Next() {
		keys = append(keys, b.keep(func(a []byte) []byte { return append(appendUint32(a, h.id), v...) }))
	}
	for _, k := range keys {
		v := b.get(k)
		if v == nil {
			return 0, fmt.Errorf("frontier: done entry without its URL %x: %w", k, errCorrupt)
		}
		r, err := decodeRecord(v, h.rec.origin)
		if err != nil {
			return 0, fmt.Errorf("frontier: record %x: %w", k, err)
		}
		if err := b.reschedule(h, k, &r, false, at); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// finishedElsewhere makes the URL of fin done, or scheduled at its
// RevisitAt, as MarkDone says, and reports whether it changed anything.
func (b *batch) finishedElsewhere(fin *Finished) (bool, error) {
	u, err := Canonicalize(fin.Key, max(3*len(fin.Key), DefaultMaxURLLength))
	if err != nil {
		return false, err
	}
	at := timeNanos(fin.RevisitAt)
	if at == 0 && !fin.RevisitAt.IsZero() {
		at = 1 // a revisit before 1970: due at once
	}
	h := b.host(u.Origin)
	d := b.touch(h)
	if d.stagedN() > 0 {
		if err := b.flushStaged(h); err != nil {
			return false, err
		}
	}
	k := b.keep(func(a []byte) []byte { return urlKey(a, h.id, u.Key[len(u.Origin):], fin.Kind) })
	v := b.get(k)
	if v == nil {
		seq, err := b.urls.NextSequence()
		if err != nil {
			return false, fmt.Errorf("sequence: %w", err)
		}
		r := record{kind: fin.Kind, seq: seq, linkDepth: NoLinkDepth}
		if u.Request != u.Key {
			r.request = u.Request
		}
		d.rec.done++
		return true, b.doneOrScheduled(h, d, k, &r, at)
	}
	r, err := decodeRecord(v, h.rec.origin)
	if err != nil {
		return false, fmt.Errorf("record of %s: %w", u.Key, err)
	}
	b.f.mu.Lock()
	l := h.lease(r.seq)
	if l != nil {
		// Leased here: marked done once the lease is given back, unless
		// its own Done comes first (finishLater).
		fin := *fin
		l.elsewhere = &fin
	}
	b.f.mu.Unlock()
	if l != nil {
		return false, nil
	}
	inQueue, err := b.queued(h, &r)
	switch {
	case err != nil:
		return false, err
	case !inQueue && at == 0:
		return false, nil // done here too
	case !inQueue:
		return true, b.reschedule(h, k, &r, false, at)
	}
	if err := b.deleteQueue(h, d, &r); err != nil {
		return false, err
	}
	if r.visited {
		d.rec.scheduled-- // counted again if it stays scheduled
	} else {
		d.rec.done++
	}
	return true, b.doneOrScheduled(h, d, k, &r, at)
}

// doneOrScheduled files record r (key k), out of the queue and counted
// done, as done for good (at 0) or scheduled at `at`.
func (b *batch) doneOrScheduled(h *host, d *hostDelta, k []byte, r *record, at int64) error {
	if at == 0 {
		if err := b.putRecord(h, k, r); err != nil {
			return err
		}
		return b.putDone(h, k[4:], r.seq)
	}
	d.rec.scheduled++
	r.visited, r.attempts, r.delayed, r.due = true, 0, true, at
	if err := b.putQueue(h, d, k, r); err != nil {
		return err
	}
	return b.putRecord(h, k, r)
}
