package frontier

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// check verifies every invariant that ties the buckets to each other and to
// the in-memory state. It must be called while no operation is under way.
func check(f *Frontier) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.db.View(func(tx *bbolt.Tx) error {
		byID := map[uint32]*host{}
		for _, h := range f.hosts {
			byID[h.id] = h
		}
		type tally struct{ ready, delayed, done, scheduled int64 }
		got := map[uint32]*tally{}
		for id := range byID {
			got[id] = &tally{}
		}
		urls := tx.Bucket(bucketURLs)
		queue := urls // a host's queue keys come before its URL keys
		// Every record: its state and its queue entry.
		err := urls.ForEach(func(k, v []byte) error {
			switch {
			case isQueueKey(k):
				return nil
			case len(k) < 5 || k[4] != '/' && k[4] != '?':
				return fmt.Errorf("key %x is neither a URL's nor a queue's", k)
			}
			id := binary.BigEndian.Uint32(k)
			h := byID[id]
			if h == nil {
				return fmt.Errorf("record %q of unknown host %d", k[4:], id)
			}
			r, err := decodeRecord(v, h.rec.origin)
			if err != nil {
				return fmt.Errorf("record %q: %v", k[4:], err)
			}
			t := got[id]
			qv := queue.Get(queueKey(nil, id, &r))
			st := stateOf(queue, h, &r)
			if st != stateQueued {
				t.done++
			}
			switch st {
			case stateScheduled:
				t.scheduled++
				if !r.delayed {
					return fmt.Errorf("scheduled %q is not delayed", k[4:])
				}
			case stateDone:
				return nil
			}
			if r.delayed {
				t.delayed++
			} else {
				t.ready++
			}
			if !bytes.Equal(qv, k[4:]) {
				return fmt.Errorf("record %q: queue entry holds %q", k[4:], qv)
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Every queue entry has its record; done entries, a done one.
		var entries, doneEntries, markedEntries int64
		err = queue.ForEach(func(k, v []byte) error {
			if !isQueueKey(k) {
				return nil
			}
			seq, ok := queueKeySeq(k)
			if !ok {
				return fmt.Errorf("queue key %x", k)
			}
			rv := urls.Get(append(bytes.Clone(k[:4]), v...))
			if rv == nil {
				return fmt.Errorf("queue entry %x → %q has no record", k, v)
			}
			h := byID[binary.BigEndian.Uint32(k)]
			if _, marked := h.mark(seq); marked {
				markedEntries++
				return nil
			}
			if k[4] != classDone {
				entries++
				return nil
			}
			doneEntries++
			r, err := decodeRecord(rv, h.rec.origin)
			if err != nil || r.seq != seq || queue.Get(queueKey(nil, h.id, &r)) != nil {
				return fmt.Errorf("done entry %x → %q: record %+v, %v, or still queued", k, v, r, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Every staged URL: no record or queue entry yet, and ready.
		var stagedN int64
		for id, h := range byID {
			for i := range h.staged {
				s := &h.staged[i]
				r, err := decodeRecord([]byte(s.record()), h.rec.origin)
				if err != nil || r.seq != s.seq || r.delayed || prioScale-r.prio != s.order {
					return fmt.Errorf("staged %q: record %+v, %v", s.pq(), r, err)
				}
				if urls.Get(append(binary.BigEndian.AppendUint32(nil, id), s.pq()...)) != nil || queue.Get(s.queueKey(nil, id)) != nil {
					return fmt.Errorf("staged %q has a record or queue entry", s.pq())
				}
				got[id].ready++
				stagedN++
			}
		}
		// The inbox bucket holds the staged URLs, in chunks that have some.
		liveStaged, deadStaged := map[uint64]int64{}, 0
		err = tx.Bucket(bucketInbox).ForEach(func(k, v []byte) error {
			key := binary.BigEndian.Uint64(k)
			err := inboxEntries(v, func(id uint32, pq, rec []byte) error {
				h := byID[id]
				if h == nil {
					return fmt.Errorf("inbox entry of unknown host %d", id)
				}
				if urls.Get(append(binary.BigEndian.AppendUint32(nil, id), pq...)) != nil {
					return nil
				}
				for i := range h.staged {
					if s := &h.staged[i]; s.pq() == string(pq) {
						if s.chunk != key || s.record() != string(rec) {
							return fmt.Errorf("staged %q: chunk %d in memory, %d in the inbox", pq, s.chunk, key)
						}
						liveStaged[key]++
						return nil
					}
				}
				return fmt.Errorf("inbox entry %q of chunk %d is not staged in memory", pq, key)
			})
			if liveStaged[key] == 0 {
				deadStaged++
			}
			return err
		})
		if err != nil {
			return err
		}
		var liveStagedN int64
		for key, n := range liveStaged {
			liveStagedN += n
			if f.inbox.chunks[key] != n {
				return fmt.Errorf("inbox chunk %d: %d staged, counted %d", key, n, f.inbox.chunks[key])
			}
		}
		if liveStagedN != stagedN || stagedN != int64(f.inbox.n) || deadStaged != len(f.inbox.dead) || len(liveStaged)-deadStaged != len(f.inbox.chunks) {
			return fmt.Errorf("%d staged in the inbox (%d dead chunks), %d in memory, counted %d (%d, %d)",
				liveStagedN, deadStaged, stagedN, f.inbox.n, len(f.inbox.dead), len(f.inbox.chunks))
		}
		if most := f.inbox.maxStaged + 2*f.opts.MaxBatch; f.inbox.n > most {
			return fmt.Errorf("%d staged, more than %d", f.inbox.n, most)
		}
		// The host records and the log give the counts in memory.
		persisted := map[uint32]hostRecord{}
		err = tx.Bucket(bucketHosts).ForEach(func(k, v []byte) error {
			rec, err := decodeHostRecord(v)
			persisted[binary.BigEndian.Uint32(k)] = rec
			return err
		})
		if err != nil {
			return err
		}
		logN := 0
		err = tx.Bucket(bucketLog).ForEach(func(k, v []byte) error {
			logN++
			seq := binary.BigEndian.Uint64(k)
			return decodeLogEntry(v, func(id uint32, c counts, flushedTo uint64) {
				if rec, ok := persisted[id]; ok && seq > rec.logPos {
					rec.add(c, 1)
					rec.flushedTo = max(rec.flushedTo, flushedTo)
					persisted[id] = rec
				}
			})
		})
		if err != nil {
			return err
		}
		if logN != f.logN || logN > f.foldEvery {
			return fmt.Errorf("%d log entries, counted %d", logN, f.logN)
		}
		var sum, parked, leasedTotal, leasedSched int64
		var sumEntries, sumDone int64
		for id, h := range byID {
			t := got[id]
			if t.ready != h.rec.ready || t.delayed != h.rec.delayed || t.done != h.rec.done || t.scheduled != h.rec.scheduled {
				return fmt.Errorf("host %s counts %+v, records say %+v", h.rec.origin, h.rec, *t)
			}
			if rec, ok := persisted[id]; ok != h.persisted {
				return fmt.Errorf("host %s: persisted %v, in the bucket %v", h.rec.origin, h.persisted, ok)
			} else if ok {
				rec.logPos = h.rec.logPos
				if rec != h.rec {
					return fmt.Errorf("host %s: persisted and logged %+v; memory %+v", h.rec.origin, rec, h.rec)
				}
			} else if h.rec != (hostRecord{origin: h.rec.origin}) {
				return fmt.Errorf("host %s: not persisted: %+v", h.rec.origin, h.rec)
			}
			sumEntries += t.ready + t.delayed
			sumDone += t.done - t.scheduled
			sum += t.ready + t.delayed + t.done
			if h.rec.parked {
				parked += t.ready + t.delayed + t.done
			}
			// Leases.
			var lr, ld, ls int64
			seqs := map[uint64]bool{}
			for _, l := range h.leases {
				seq := l.seq
				if seqs[seq] || l.h != h || l.state == leaseOver {
					return fmt.Errorf("host %s: bad lease %d", h.rec.origin, seq)
				}
				seqs[seq] = true
				r, err := recordOf(tx, h, urlKey(nil, id, l.Key[len(l.Origin):], l.Kind))
				if err != nil || r.seq != seq || stateOf(queue, h, &r) == stateDone || r.delayed != l.delayed {
					return fmt.Errorf("lease %s: record %+v, %v", l.Key, r, err)
				}
				if l.delayed {
					ld++
				} else {
					lr++
				}
				if l.Revisit {
					ls++
					if !r.visited {
						return fmt.Errorf("lease %s: a revisit of a record never done", l.Key)
					}
				}
			}
			if lr != h.leasedReady || ld != h.leasedDelayed || ls != h.leasedSched {
				return fmt.Errorf("host %s leased %d/%d/%d, counted %d/%d/%d", h.rec.origin, lr, ld, ls, h.leasedReady, h.leasedDelayed, h.leasedSched)
			}
			leasedTotal += lr + ld
			leasedSched += ls
			// The hint is a lower bound of the earliest unleased delayed URL.
			c := queue.Cursor()
			prefix := append(binary.BigEndian.AppendUint32(nil, id), classDelayed)
			for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				seq, _ := queueKeySeq(k)
				if h.out(seq) {
					continue
				}
				if due := int64(binary.BigEndian.Uint64(k[5:13])); h.hint > due {
					return fmt.Errorf("host %s: hint %d after the earliest delayed URL, %d", h.rec.origin, h.hint, due)
				}
				break
			}
			// The heap holds exactly the eligible hosts.
			key, ok := h.eligibleAt()
			if ok != (h.index >= 0) || (ok && key != h.key) || (h.index >= 0 && f.ready[h.index] != h) {
				return fmt.Errorf("host %s: eligible %v at %d, heap index %d key %d", h.rec.origin, ok, key, h.index, h.key)
			}
		}
		if entries+stagedN != sumEntries || doneEntries+markedEntries != sumDone {
			return fmt.Errorf("%d queue, %d done and %d marked entries, records say %d and %d", entries, doneEntries, markedEntries, sumEntries, sumDone)
		}
		// The marks bucket holds the live marks, in chunks that have some.
		live, dead := map[uint64]int64{}, 0
		err = tx.Bucket(bucketMarks).ForEach(func(k, v []byte) error {
			key := binary.BigEndian.Uint64(k)
			for len(v) > 0 {
				n := readyKeyLen
				if v[4] == classDelayed {
					n = delayedKeyLen
				}
				m, seq, ok := markOf(v[:n])
				h := byID[binary.BigEndian.Uint32(v)]
				if !ok || h == nil {
					return fmt.Errorf("mark %x", v[:n])
				}
				v = v[n:]
				if key <= h.rec.flushedTo {
					continue
				}
				m.chunk = key
				if got, _ := h.mark(seq); got != m {
					return fmt.Errorf("mark %d of %s in chunk %d is %+v in memory", seq, h.rec.origin, key, got)
				}
				live[key]++
			}
			if live[key] == 0 {
				dead++
			}
			return nil
		})
		if err != nil {
			return err
		}
		var liveN int64
		for key, n := range live {
			liveN += n
			if f.chunks[key] != n {
				return fmt.Errorf("chunk %d: %d live marks, counted %d", key, n, f.chunks[key])
			}
		}
		if liveN != markedEntries || liveN != int64(f.markN) || dead != len(f.deadChunks) || len(live)-dead != len(f.chunks) {
			return fmt.Errorf("%d live marks (%d dead chunks), %d marked entries, counted %d (%d, %d)", liveN, dead, markedEntries, f.markN, len(f.deadChunks), len(f.chunks))
		}
		if f.markN > f.maxMarks+f.hostMarks*(flushTurn+len(f.hosts)) {
			return fmt.Errorf("%d marks", f.markN)
		}
		if s := f.sum.ready + f.sum.delayed + f.sum.done; s != sum {
			return fmt.Errorf("sum %+v, hosts total %d", f.sum, sum)
		}
		if s := f.parked.ready + f.parked.delayed + f.parked.done; s != parked {
			return fmt.Errorf("parked %+v, hosts total %d", f.parked, parked)
		}
		if leasedTotal != f.leasedN || leasedSched != f.leasedSched {
			return fmt.Errorf("leased %d/%d, counted %d/%d", leasedTotal, leasedSched, f.leasedN, f.leasedSched)
		}
		return nil
	})
}

// isQueueKey reports whether key k of the urls bucket is a queue key, not
// a URL key.
func isQueueKey(k []byte) bool { return len(k) > 4 && k[4] <= classDelayed }

// stateOf returns the state of record r of host h, staged or not.
func stateOf(queue *bbolt.Bucket, h *host, r *record) state {
	_, marked := h.mark(r.seq)
	return r.state((queue.Get(queueKey(nil, h.id, r)) != nil || isStaged(h, r.seq)) && !marked)
}

// isStaged reports whether the URL of sequence number seq is staged in
// host h's inbox, with no record or queue entry yet.
func isStaged(h *host, seq uint64) bool {
	for i := range h.staged {
		if h.staged[i].seq == seq {
			return true
		}
	}
	return false
}

// recordOf returns the record of urls key k of host h, staged or not.
func recordOf(tx *bbolt.Tx, h *host, k []byte) (record, error) {
	if v := tx.Bucket(bucketURLs).Get(k); v != nil {
		return decodeRecord(v, h.rec.origin)
	}
	for i := range h.staged {
		if s := &h.staged[i]; s.pq() == string(k[4:]) {
			return decodeRecord([]byte(s.record()), h.rec.origin)
		}
	}
	return record{}, fmt.Errorf("no record of %q", k)
}

// testDB opens a bbolt file in a temporary directory. Without sync it is
// much faster, for the tests that do not kill anything.
func testDB(t testing.TB, sync bool) *bbolt.DB {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "state.db"), 0o600, &bbolt.Options{
		NoSync: !sync, NoFreelistSync: !sync, FreelistType: bbolt.FreelistMapType, Timeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// item returns the Item of a URL for tests.
func item(t testing.TB, raw string) Item {
	t.Helper()
	u, err := Canonicalize(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	return Item{URL: u}
}
