package frontier

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// The inbox. A page's links to other hosts each land in a different host's
// part of the urls bucket, so writing them at once writes a random leaf page
// (and its branch page) per link: most of what adding costs. So does the
// one new link among a documentation page's hundreds to its own host: a
// leaf page for its record and one for its queue entry. Instead Add stages
// a new URL whose host has few (stageBelow) in its batch, or few new ones
// and nothing else written: a transaction's staged URLs are appended, as
// one chunk, to the inbox bucket, whose keys are sequential, and kept in
// memory with their host, where Add's deduplication and Next see them. A
// host's staged URLs are written to the urls bucket together (flushed)
// once it has hostStaged of them, or in a transaction that writes that
// host's part anyway. Hosts are also flushed in turns, those of the oldest
// live chunk first, while there are more than maxStaged staged URLs or
// that chunk is more than stagedAge chunks old: this bounds both the
// memory they take and what opening reads.
// A staged URL is flushed once its record exists, so opening needs no other
// bookkeeping, and a chunk is deleted once none of its URLs is staged.
// Anything that needs a staged URL's record or queue entry on disk (Done,
// Retry, Reschedule, a merge) first flushes its host.
const (
	stageBelow        = 4       // a URL is staged when its batch has fewer of its host, or of its host's new ones
	defaultHostStaged = 8       // a host is flushed when it has this many staged URLs
	defaultMaxStaged  = 1 << 14 // beyond this many in all, hosts are flushed in turns
	defaultStagedAge  = 1024    // older chunks' hosts are flushed in turns
	inboxTurn         = 256     // hosts flushed per transaction in those turns
)

// staged is a URL staged in the inbox: its queue entry and record, to write
// to the urls bucket when its host is flushed. Staged URLs are always
// undelayed.
type staged struct {
	kv    string // the urls key without the hostID, then the record
	split int    // where the record starts in kv
	seq   uint64
	order uint16 // prioScale-priority, as in its queue key
	chunk uint64 // the key of its chunk in the inbox bucket
}

func (s *staged) pq() string     { return s.kv[:s.split] }
func (s *staged) record() string { return s.kv[s.split:] }

// queueKey appends the key of its queue entry for host id.
func (s *staged) queueKey(b []byte, id uint32) []byte {
	b = binary.BigEndian.AppendUint32(b, id)
	b = append(b, classReady)
	b = binary.BigEndian.AppendUint16(b, s.order)
	return binary.BigEndian.AppendUint64(b, s.seq)
}

// is reports whether k is the ready queue key of s.
func (s *staged) is(k []byte) bool {
	return s.order == binary.BigEndian.Uint16(k[5:7]) && s.seq == binary.BigEndian.Uint64(k[7:15])
}

// before reports whether s comes before the ready queue key k.
func (s *staged) before(k []byte) bool {
	o := binary.BigEndian.Uint16(k[5:7])
	return s.order < o || s.order == o && s.seq < binary.BigEndian.Uint64(k[7:15])
}

// inbox is the Frontier's state of the inbox bucket.
type inbox struct {
	n      int              // staged URLs, of all hosts
	chunks map[uint64]int64 // staged URLs per chunk, of chunks that have some
	dead   []uint64         // chunks without any that New found, for the first batch to delete
	oldest uint64           // no chunk before this one has staged URLs
	// hostStaged, maxStaged and age are their defaults, but for tests.
	hostStaged, maxStaged int
	age                   uint64
}

// stage stages the new URL of urls key k and record r, which is undelayed,
// and counts it.
func (b *batch) stage(h *host, d *hostDelta, k []byte, r *record) {
	kv := appendRecord(append(make([]byte, 0, 2*len(k)+24), k[4:]...), r, h.rec.origin)
	d.newStaged = append(d.newStaged, staged{kv: string(kv), split: len(k) - 4, seq: r.seq, order: prioScale - r.prio})
	d.rec.ready++
}

// stagedN returns how many staged URLs host d.h will have after the batch.
func (d *hostDelta) stagedN() int {
	n := len(d.newStaged)
	if !d.unstaged {
		n += len(d.h.staged)
	}
	return n
}

// findStaged reports whether the URL whose urls key without the hostID is
// pq will be staged after the batch.
func (d *hostDelta) findStaged(pq []byte) bool {
	return d.anyStaged(func(s *staged) bool { return s.pq() == string(pq) })
}

// nearerStaged reports whether the URL staged under pq (see findStaged)
// has a link depth greater than ld, or none while ld is one.
func (d *hostDelta) nearerStaged(pq []byte, ld int, origin string) bool {
	if ld < 0 {
		return false
	}
	found := false
	d.anyStaged(func(s *staged) bool {
		if s.pq() != string(pq) {
			return false
		}
		r, err := decodeRecord([]byte(s.record()), origin)
		found = err == nil && nearer(r.linkDepth, ld)
		return true
	})
	return found
}

// isStaged reports whether URL seq will be staged after the batch.
func (d *hostDelta) isStaged(seq uint64) bool {
	return d.anyStaged(func(s *staged) bool { return s.seq == seq })
}

// anyStaged reports whether one of the URLs staged after the batch is
// match's.
func (d *hostDelta) anyStaged(match func(*staged) bool) bool {
	lists := [][]staged{d.newStaged, nil}
	if !d.unstaged {
		lists[1] = d.h.staged
	}
	for _, list := range lists {
		for i := range list {
			if match(&list[i]) {
				return true
			}
		}
	}
	return false
}

// flushStaged writes every staged URL of host h to the urls bucket.
func (b *batch) flushStaged(h *host) error {
	d := b.touch(h)
	if !d.unstaged {
		for i := range h.staged {
			if err := b.writeStaged(h, &h.staged[i]); err != nil {
				return err
			}
			b.inboxChunks[h.staged[i].chunk]--
		}
		d.unstaged = true
	}
	for i := range d.newStaged {
		if err := b.writeStaged(h, &d.newStaged[i]); err != nil {
			return err
		}
	}
	d.newStaged = d.newStaged[:0]
	return nil
}

func (b *batch) writeStaged(h *host, s *staged) error {
	k := b.keep(func(a []byte) []byte { return append(appendUint32(a, h.id), s.pq()...) })
	v := b.keep(func(a []byte) []byte { return append(a, s.record()...) })
	if err := b.urls.Put(k, v); err != nil {
		return fmt.Errorf("frontier: put url: %w", err)
	}
	qk := b.keep(func(a []byte) []byte { return s.queueKey(a, h.id) })
	if err := b.urls.Put(qk, k[4:]); err != nil {
		return fmt.Errorf("frontier: put queue: %w", err)
	}
	b.touch(h).wrote = true
	return nil
}

// writeInbox ends a batch's part in the inbox: it flushes the hosts that
// have hostStaged staged URLs or whose part of the urls bucket the batch
// writes anyway, and while there are more than maxStaged in all or the
// oldest chunk is too old, the hosts of the oldest chunks (so that there
// are never more than maxStaged staged URLs but for those of the last
// transaction, which has at most twice Options.MaxBatch); writes the
// batch's remaining staged URLs as a chunk; and deletes the chunks left
// without staged URLs.
func (b *batch) writeInbox() error {
	f := b.f
	in := &f.inbox
	total := in.n
	for _, d := range b.order {
		total += d.stagedN() - len(d.h.staged)
	}
	for _, d := range b.order {
		if n := d.stagedN(); n > 0 && (d.wrote || n >= in.hostStaged) {
			total -= n
			if err := b.flushStaged(d.h); err != nil {
				return err
			}
		}
	}
	// Turns, as in writeMarks: at most inboxTurn hosts for age, but as
	// many as it takes to be back within maxStaged, so that the staged
	// URLs never exceed it by more than one transaction stages.
	live := func(key uint64) bool { return in.chunks[key]+b.inboxChunks[key] > 0 }
	b.inboxOldest = in.oldest
	for turn, flushed := 0, true; flushed && (turn < inboxTurn || total > in.maxStaged); {
		for b.inboxOldest < b.inbox.Sequence() && !live(b.inboxOldest) {
			b.inboxOldest++
		}
		if !live(b.inboxOldest) || total <= in.maxStaged && b.inbox.Sequence()-b.inboxOldest <= in.age {
			break
		}
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], b.inboxOldest)
		v := b.inbox.Get(k[:])
		if v == nil {
			return fmt.Errorf("frontier: live inbox chunk %d missing: %w", b.inboxOldest, errCorrupt)
		}
		flushed = false
		err := inboxEntries(v, func(id uint32, _, _ []byte) error {
			h := f.byID[id]
			if d := b.touched[h]; h == nil || len(h.staged) == 0 || d != nil && d.unstaged {
				return nil
			}
			total -= b.touch(h).stagedN()
			turn++
			flushed = true
			return b.flushStaged(h)
		})
		if err != nil {
			return err
		}
	}
	var chunk []byte
	for _, d := range b.order {
		for _, s := range d.newStaged {
			chunk = appendUint32(chunk, d.h.id)
			chunk = appendString(chunk, s.pq())
			chunk = appendString(chunk, s.record())
		}
	}
	if len(chunk) > 0 {
		key, err := b.inbox.NextSequence()
		if err != nil {
			return fmt.Errorf("frontier: inbox sequence: %w", err)
		}
		for _, d := range b.order {
			for i := range d.newStaged {
				d.newStaged[i].chunk = key
			}
			b.inboxChunks[key] += int64(len(d.newStaged))
		}
		k := b.keep(func(a []byte) []byte { return binary.BigEndian.AppendUint64(a, key) })
		if err := b.inbox.Put(k, b.keep(func(a []byte) []byte { return append(a, chunk...) })); err != nil {
			return fmt.Errorf("frontier: put inbox: %w", err)
		}
	}
	for key, delta := range b.inboxChunks {
		if in.chunks[key]+delta > 0 {
			continue
		}
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], key)
		if err := b.inbox.Delete(k[:]); err != nil {
			return fmt.Errorf("frontier: delete inbox chunk: %w", err)
		}
	}
	return nil
}

// applyInbox makes a committed batch's changes to host d.h's staged URLs
// in memory. f.mu must be held.
func (f *Frontier) applyInbox(d *hostDelta) {
	h := d.h
	if d.unstaged {
		f.inbox.n -= len(h.staged)
		h.staged = nil // most hosts have none most of the time
	}
	h.staged = append(h.staged, d.newStaged...)
	f.inbox.n += len(d.newStaged)
}

// inboxEntries calls fn with each staged URL of a chunk: its host, its urls
// key without the hostID and its record.
func inboxEntries(v []byte, fn func(id uint32, pq, rec []byte) error) error {
	for len(v) > 0 {
		if len(v) < 4 {
			return fmt.Errorf("frontier: inbox chunk: %w", errCorrupt)
		}
		id := binary.BigEndian.Uint32(v)
		d := decoder{b: v[4:]}
		pq, rec := d.bytes(), d.bytes()
		if d.bad || len(pq) == 0 {
			return fmt.Errorf("frontier: inbox chunk: %w", errCorrupt)
		}
		if err := fn(id, pq, rec); err != nil {
			return err
		}
		v = d.b
	}
	return nil
}

// loadInbox reads the staged URLs back: those whose record is not in urls.
// New calls it before anyone else sees f.
func (f *Frontier) loadInbox(inbox, urls *bbolt.Bucket) error {
	if k, _ := inbox.Cursor().First(); len(k) == 8 {
		f.inbox.oldest = binary.BigEndian.Uint64(k)
	}
	return inbox.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("frontier: inbox key %x: %w", k, errCorrupt)
		}
		key := binary.BigEndian.Uint64(k)
		n := f.inbox.n
		err := inboxEntries(v, func(id uint32, pq, rec []byte) error {
			h := f.byID[id]
			if h == nil {
				return fmt.Errorf("frontier: inbox entry of unknown host %d: %w", id, errCorrupt)
			}
			if urls.Get(append(appendUint32(nil, id), pq...)) != nil {
				return nil // flushed
			}
			r, err := decodeRecord(rec, h.rec.origin)
			if err != nil || r.delayed || pq[0] != '/' && pq[0] != '?' {
				return fmt.Errorf("frontier: inbox entry %x%s: %w", k, pq, errCorrupt)
			}
			h.staged = append(h.staged, staged{
				kv: string(pq) + string(rec), split: len(pq), seq: r.seq, order: prioScale - r.prio, chunk: key,
			})
			f.inbox.chunks[key]++
			f.inbox.n++
			return nil
		})
		if err != nil {
			return err
		}
		if f.inbox.n == n {
			f.inbox.dead = append(f.inbox.dead, key) // for the first batch to delete
		}
		return nil
	})
}

// firstStaged returns host h's staged URL that Next hands out first, or
// nil: the first in queue order that is not leased. f.mu must be held.
func (h *host) firstStaged() *staged {
	var first *staged
	for i := range h.staged {
		s := &h.staged[i]
		if h.leased(s.seq) {
			continue
		}
		if first == nil || s.order < first.order || s.order == first.order && s.seq < first.seq {
			first = s
		}
	}
	return first
}
