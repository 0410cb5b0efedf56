package frontier

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// Done marks. The fairness of Next spreads consecutive Dones over all
// hosts, so moving each URL's queue entry to the done class at once would
// write a random leaf page (and its parent) per Done. Instead Done marks
// the entry: a transaction's marks are appended, as one chunk, to the marks
// bucket, whose keys are sequential; Next skips marked entries as it skips
// leased ones; and a host's marked entries, neighbours on one page, are
// moved to the done class together (flushed) once the host has hostMarks
// of them. A chunk is deleted once none of its marks is live. Flushing a
// host records the marks bucket's sequence in the host (flushedTo), so
// that on open the marks of older chunks are known to be stale. Hosts are
// also flushed in turns, those of the oldest live chunk first, while there
// are more than maxMarks marks or that chunk is more than chunkAge
// chunks old: this bounds both the memory marks take and what opening
// reads. Only Done without a revisit, of an entry that Reschedule did not
// move, is marked; anything that needs a URL's exact state first flushes
// its host.
const (
	defaultHostMarks = 16      // a host is flushed when it has this many marks
	defaultMaxMarks  = 1 << 17 // beyond this many in all, hosts are flushed in turns
	defaultChunkAge  = 4096    // older chunks' hosts are flushed in turns
	flushTurn        = 64      // hosts flushed per transaction in those turns
)

// mark is a done entry still in the ready or delayed class. With its
// host's id and the URL's seq it gives the entry's queue key.
type mark struct {
	chunk   uint64 // the key of its chunk in the marks bucket
	order   uint64 // 10000-priority (undelayed) or due (delayed)
	delayed bool
}

// markAdd is a mark and the seq of its URL.
type markAdd struct {
	seq uint64
	mark
}

func (m *mark) queueKey(b []byte, id uint32, seq uint64) []byte {
	b = binary.BigEndian.AppendUint32(b, id)
	if m.delayed {
		b = append(b, classDelayed)
		b = binary.BigEndian.AppendUint64(b, m.order)
	} else {
		b = append(b, classReady)
		b = binary.BigEndian.AppendUint16(b, uint16(m.order))
	}
	return binary.BigEndian.AppendUint64(b, seq)
}

// markOf returns the mark of a ready or delayed queue key, and its seq.
func markOf(k []byte) (mark, uint64, bool) {
	seq, ok := queueKeySeq(k)
	switch {
	case !ok || k[4] == classDone:
		return mark{}, 0, false
	case k[4] == classDelayed:
		return mark{order: binary.BigEndian.Uint64(k[5:13]), delayed: true}, seq, true
	}
	return mark{order: uint64(binary.BigEndian.Uint16(k[5:7]))}, seq, true
}

// markDone marks the queue entry of lease l, which exists, as done.
func (b *batch) markDone(l *Lease, d *hostDelta) {
	m, seq, _ := markOf(l.qkey)
	d.newMarks = append(d.newMarks, markAdd{seq: seq, mark: m})
}

// marked returns how many marks host h will have after the batch.
func (d *hostDelta) marked() int {
	n := len(d.newMarks)
	if !d.cleared {
		n += len(d.h.marks)
	}
	return n
}

// flushHost moves every marked entry of host h to the done class.
func (b *batch) flushHost(h *host) error {
	d := b.touch(h)
	if !d.cleared {
		for _, m := range h.marks {
			if err := b.flushMark(h, m.seq, &m.mark); err != nil {
				return err
			}
			b.chunks[m.chunk]--
		}
		d.cleared = true
	}
	for _, a := range d.newMarks {
		if err := b.flushMark(h, a.seq, &a.mark); err != nil {
			return err
		}
	}
	d.newMarks = d.newMarks[:0]
	d.rec.flushedTo = b.marks.Sequence()
	return nil
}

func (b *batch) flushMark(h *host, seq uint64, m *mark) error {
	var buf [delayedKeyLen]byte
	qk := m.queueKey(buf[:0], h.id, seq)
	c := b.cursor()
	k, v := c.Seek(qk)
	if string(k) != string(qk) {
		return fmt.Errorf("frontier: marked entry %x: %w", qk, errCorrupt)
	}
	pq := b.keep(func(a []byte) []byte { return append(a, v...) })
	if err := c.Delete(); err != nil {
		return fmt.Errorf("frontier: delete queue: %w", err)
	}
	return b.putDone(h, pq, seq)
}

// writeMarks ends a batch's part in the marks: it flushes the hosts that
// have hostMarks marks, and while there are more than maxMarks in all, up
// to flushTurn other hosts; writes the batch's remaining marks as a chunk;
// and deletes the chunks left without live marks.
func (b *batch) writeMarks() error {
	f := b.f
	total := f.markN
	for _, d := range b.order {
		total += d.marked() - len(d.h.marks)
	}
	for _, d := range b.order {
		if n := d.marked(); n >= f.hostMarks {
			total -= n
			if err := b.flushHost(d.h); err != nil {
				return err
			}
		}
	}
	// Turns: flush the hosts of the oldest live chunk. The writer alone
	// (under f.w.mu) changes the hosts and their marks: it reads them
	// without f.mu.
	live := func(key uint64) bool { return f.chunks[key]+b.chunks[key] > 0 }
	b.oldest = f.oldest
	for turn, flushed := 0, true; turn < flushTurn && flushed; {
		for b.oldest < b.marks.Sequence() && !live(b.oldest) {
			b.oldest++
		}
		if !live(b.oldest) || total <= f.maxMarks && b.marks.Sequence()-b.oldest <= f.chunkAge {
			break
		}
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], b.oldest)
		v := b.marks.Get(k[:])
		if v == nil {
			return fmt.Errorf("frontier: live marks chunk %d missing: %w", b.oldest, errCorrupt)
		}
		ids, err := chunkHosts(v)
		if err != nil {
			return err
		}
		flushed = false
		for _, id := range ids {
			h := f.byID[id]
			if d := b.touched[h]; h == nil || len(h.marks) == 0 || d != nil && d.cleared {
				continue
			}
			total -= b.touch(h).marked()
			if err := b.flushHost(h); err != nil {
				return err
			}
			turn++
			flushed = true
		}
	}
	var chunk []byte
	var count int64
	for _, d := range b.order {
		count += int64(len(d.newMarks))
		for _, a := range d.newMarks {
			chunk = a.queueKey(chunk, d.h.id, a.seq)
		}
	}
	if count > 0 {
		key, err := b.marks.NextSequence()
		if err != nil {
			return fmt.Errorf("frontier: marks sequence: %w", err)
		}
		for _, d := range b.order {
			for i := range d.newMarks {
				d.newMarks[i].chunk = key
			}
		}
		b.chunks[key] += count
		k := b.keep(func(a []byte) []byte { return binary.BigEndian.AppendUint64(a, key) })
		if err := b.marks.Put(k, b.keep(func(a []byte) []byte { return append(a, chunk...) })); err != nil {
			return fmt.Errorf("frontier: put marks: %w", err)
		}
	}
	for key, delta := range b.chunks {
		if f.chunks[key]+delta > 0 {
			continue
		}
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], key)
		if err := b.marks.Delete(k[:]); err != nil {
			return fmt.Errorf("frontier: delete marks: %w", err)
		}
	}
	return nil
}

// chunkHosts returns the ids of the hosts of a chunk's marks.
func chunkHosts(v []byte) ([]uint32, error) {
	var ids []uint32
	err := chunkMarks(v, func(qk []byte) error {
		if id := binary.BigEndian.Uint32(qk); len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, err
}

// chunkMarks calls fn with the queue key of each mark of a chunk.
func chunkMarks(v []byte, fn func(qk []byte) error) error {
	for len(v) > 0 {
		n := readyKeyLen
		if len(v) > 4 && v[4] == classDelayed {
			n = delayedKeyLen
		}
		if len(v) < n {
			return fmt.Errorf("frontier: marks chunk: %w", errCorrupt)
		}
		if err := fn(v[:n]); err != nil {
			return err
		}
		v = v[n:]
	}
	return nil
}

// loadMarks reads the live marks back. New calls it before anyone else
// sees f.
func (f *Frontier) loadMarks(marks, urls *bbolt.Bucket) error {
	if k, _ := marks.Cursor().First(); len(k) == 8 {
		f.oldest = binary.BigEndian.Uint64(k)
	}
	return marks.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("frontier: marks key %x: %w", k, errCorrupt)
		}
		key := binary.BigEndian.Uint64(k)
		live := f.markN
		err := chunkMarks(v, func(qk []byte) error {
			m, seq, ok := markOf(qk)
			h := f.byID[binary.BigEndian.Uint32(qk)]
			if !ok || h == nil {
				return fmt.Errorf("frontier: mark %x: %w", qk, errCorrupt)
			}
			if key <= h.rec.flushedTo {
				return nil // flushed since
			}
			if urls.Get(qk) == nil {
				return fmt.Errorf("frontier: marked entry %x missing: %w", qk, errCorrupt)
			}
			m.chunk = key
			h.marks = append(h.marks, markAdd{seq: seq, mark: m})
			f.chunks[key]++
			f.markN++
			return nil
		})
		if err != nil {
			return err
		}
		if f.markN == live {
			f.deadChunks = append(f.deadChunks, key) // for the first batch to delete
		}
		return nil
	})
}
