package frontier

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// Pending calls fn with each URL that is queued and was never visited,
// leased ones excepted, host by host, each host's in the order Next would
// hand them out within a class: what a crawl stopped by a limit leaves
// undone. It stops at fn's first error and returns it. Nothing changes:
// the URLs stay queued for a later run.
//
// Pending holds the Frontier for the whole walk, so fn must not call its
// methods; it is meant for the end of a crawl.
func (f *Frontier) Pending(fn func(Item) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	tx, err := f.db.Begin(false)
	if err != nil {
		return fmt.Errorf("frontier: pending: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	urls := tx.Bucket(bucketURLs)
	ids := make([]uint32, 0, len(f.byID))
	for id := range f.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		h := f.byID[id]
		// The staged URLs, all undelayed, go in their place among the
		// ready class.
		stagedURLs := make([]*staged, 0, len(h.staged))
		for i := range h.staged {
			if s := &h.staged[i]; !h.out(s.seq) {
				stagedURLs = append(stagedURLs, s)
			}
		}
		slices.SortFunc(stagedURLs, func(a, b *staged) int {
			return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(a.seq, b.seq))
		})
		emitStaged := func(until []byte) error {
			for len(stagedURLs) > 0 && (until == nil || stagedURLs[0].before(until)) {
				s := stagedURLs[0]
				stagedURLs = stagedURLs[1:]
				r, err := decodeRecord([]byte(s.record()), h.rec.origin)
				if err != nil {
					return fmt.Errorf("frontier: staged %s%s: %w", h.rec.origin, s.pq(), err)
				}
				if err := fn(itemOf(h.rec.origin, []byte(s.pq()), &r)); err != nil {
					return err
				}
			}
			return nil
		}
		for _, class := range []byte{classReady, classDelayed} {
			prefix := append(appendUint32(nil, id), class)
			c := urls.Cursor()
			for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
				seq, ok := queueKeySeq(k)
				if !ok {
					return fmt.Errorf("frontier: queue key %x: %w", k, errCorrupt)
				}
				if h.out(seq) {
					continue
				}
				if class == classReady {
					if err := emitStaged(k); err != nil {
						return err
					}
					// A host flushed by a commit not yet applied
					// has its staged URLs on disk too.
					if len(stagedURLs) > 0 && stagedURLs[0].is(k) {
						stagedURLs = stagedURLs[1:]
					}
				}
				rv := urls.Get(append(appendUint32(nil, id), v...))
				if rv == nil {
					return fmt.Errorf("frontier: queued %s%s has no record: %w", h.rec.origin, v, errCorrupt)
				}
				r, err := decodeRecord(rv, h.rec.origin)
				if err != nil {
					return fmt.Errorf("frontier: queued %s%s: %w", h.rec.origin, v, err)
				}
				if r.visited {
					continue // a revisit: done once already
				}
				if err := fn(itemOf(h.rec.origin, v, &r)); err != nil {
					return err
				}
			}
			if class == classReady {
				if err := emitStaged(nil); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
