package frontier

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
)

// The frontier has one writer goroutine, which owns every write transaction
// on its buckets. Callers hand it operations and wait for their commit; the
// writer runs all the operations waiting when it becomes free in a single
// transaction (group commit), so that the fsyncs of a commit are shared by
// many callers. A caller whose operation is alone commits it itself, under
// the same lock (see submit). Changes to the in-memory state are staged in a batch and
// applied only once the transaction committed.
//
// Hosts' counts change in almost every transaction. Rather than rewrite the
// record of every host touched (one random page each), a transaction
// appends one log entry with all its changes to the counts; every
// defaultFoldEvery entries a transaction folds the log into the host
// records instead, and empties it. Opening replays at most that many. A
// transaction that changes one host's counts writes its record, one page
// as the log entry is, but a page of fewer entries than the log's last
// (which bbolt reads and writes whole), often without the branch page
// above it, and leaves nothing to fold (BenchmarkDone: 4.9 pages written
// per lone Done before, 3.3 after).

// defaultFoldEvery is how many log entries the writer lets pile up before
// it folds them into the host records.
const defaultFoldEvery = 1024

// op is one operation for the writer.
type op struct {
	weight int                         // URLs it writes, roughly
	run    func(b *batch) (int, error) // stages the operation in b.tx
	done   chan opResult               // receives the outcome after commit
}

type opResult struct {
	n   int
	err error
}

// batch is one write transaction of the writer and what it will change in
// memory once committed.
type batch struct {
	f                              *Frontier
	tx                             *bbolt.Tx
	urls, inbox, hosts, log, marks *bbolt.Bucket
	// arena holds the keys and values given to bbolt, which must stay
	// unchanged until the commit.
	arena   []byte
	touched map[*host]*hostDelta
	chunks  map[uint64]int64 // changes to Frontier.chunks
	oldest  uint64           // Frontier.oldest, after the batch
	order   []*hostDelta
	leases  []*Lease // finished by this batch
	// inboxChunks are changes to Frontier.inbox.chunks, and inboxOldest
	// its oldest after the batch.
	inboxChunks map[uint64]int64
	inboxOldest uint64
	logged      bool // a log entry was written
	folded      bool // the log was folded into the host records
	// cur looks up keys of urls (see get), made at the first look-up.
	cur *bbolt.Cursor
	// deltas are the hostDeltas made by this batch and the earlier ones
	// of the writer: b.order uses the first of them.
	deltas []*hostDelta
}

// get is urls.Get(k) on one cursor of the batch: Bucket.Get makes a
// cursor and its stack for each key, and every link of every page is
// looked up (a third of the frontier's allocations on a crawl of small
// pages). Seek starts from the bucket's root each time, so the puts made
// between two look-ups are seen.
func (b *batch) get(k []byte) []byte {
	key, v := b.cursor().Seek(k)
	if !bytes.Equal(key, k) {
		return nil
	}
	return v
}

// cursor returns the batch's cursor on urls, for a Seek (and a Delete
// there) at a time.
func (b *batch) cursor() *bbolt.Cursor {
	if b.cur == nil {
		b.cur = b.urls.Cursor()
	}
	return b.cur
}

// hostDelta is a host's new persisted state, staged.
type hostDelta struct {
	h     *host
	rec   hostRecord
	hint  int64 // the earliest delayed URL this batch queued
	write bool  // the host record is written, not logged
	// newMarks are the marks the batch adds (and has not flushed);
	// cleared, whether it flushed the host's marks.
	newMarks []markAdd
	cleared  bool
	// newStaged are the URLs the batch stages (and has not flushed);
	// unstaged, whether it flushed the host's staged URLs.
	newStaged []staged
	unstaged  bool
	// wrote is set once the batch writes to the host's part of the urls
	// bucket.
	wrote bool
}

// writer is the state of whoever writes: the writer goroutine, or a caller
// committing its lone operation itself (see submit). Its mutex is held
// from a batch's begin to its apply, so that batches, and the in-memory
// state that only they change, follow one another.
type writer struct {
	mu sync.Mutex
	// queued is set while the writer goroutine holds an operation it
	// has not yet committed.
	queued atomic.Bool
	arena  []byte
	// peak follows the largest recent group: as many callers as seem to
	// be at work. commitTime is the recent duration of a commit.
	peak       float64
	commitTime time.Duration
	// lone counts the last groups of one operation, up to loneGroups.
	lone int
	// batch is the one batch under way, reused.
	batch batch
}

// loneGroups is how many groups of one in a row make an operation that
// finds nothing queued be committed by its caller (commitAlone).
const loneGroups = 3

// submit hands an operation to the writer and waits for its commit. An
// operation alone (nothing queued or being committed, and the last
// loneGroups groups of one) is committed by the caller itself: it spares
// the hand-off to the writer goroutine and back, two wake-ups of a
// goroutine (and often of a thread) per Done of a crawl whose hosts give
// one request at a time. Where groups form, a lone caller committing would
// take from the writer the ones that arrive meanwhile, and commits would
// be more (BenchmarkFrontier, 16 workers: 5 times as many).
func (f *Frontier) submit(weight int, run func(*batch) (int, error)) (int, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return 0, ErrClosed
	}
	f.sending.Add(1)
	f.mu.Unlock()
	o := &op{weight: weight, run: run, done: make(chan opResult, 1)}
	if f.commitAlone(o) {
		f.sending.Done()
		r := <-o.done
		return r.n, r.err
	}
	f.ops <- o
	f.sending.Done()
	r := <-o.done
	return r.n, r.err
}

// commitAlone commits o, and reports whether it did, if it is alone.
func (f *Frontier) commitAlone(o *op) bool {
	w := &f.w
	if w.queued.Load() || len(f.ops) > 0 || !w.mu.TryLock() {
		return false
	}
	defer w.mu.Unlock()
	if w.lone < loneGroups {
		return false // the writer gathers groups: it takes o
	}
	start := time.Now()
	w.arena = f.commit([]*op{o}, w.arena)
	w.peak = max(1, w.peak*0.99)
	w.commitTime = (w.commitTime*7 + time.Since(start)) / 8
	return true
}

// writeLoop is the writer goroutine. It returns when f.ops is closed and
// every operation sent has been answered.
//
// It opens a transaction for the first operation that arrives and runs
// each operation as it arrives, gathering those that wait, and, if recent
// groups were larger, lingering a little (less than a commit takes) for the
// callers that the last commit answered, who are likely to send again: the
// larger the group, the fewer fsyncs per operation.
func (f *Frontier) writeLoop() {
	defer close(f.writerDone)
	var group []*op
	var results []opResult
	w := &f.w
	for {
		o, ok := <-f.ops
		if !ok {
			return
		}
		w.queued.Store(true)
		w.mu.Lock()
		group, results = f.writeGroup(o, group[:0], results[:0])
		w.mu.Unlock()
		w.queued.Store(false)
	}
}

// writeGroup commits operation o and those that arrive while it gathers,
// and returns group and results for reuse. f.w.mu must be held.
func (f *Frontier) writeGroup(o *op, group []*op, results []opResult) ([]*op, []opResult) {
	w := &f.w
	b, err := f.begin(w.arena[:0])
	failed, weight := err != nil, 0
	take := func(o *op) {
		group = append(group, o)
		weight += o.weight
		if !failed {
			n, err := runOp(o, b)
			results = append(results, opResult{n: n})
			failed = err != nil
		}
	}
	take(o)
	var linger <-chan time.Time
gather:
	for weight < f.opts.MaxBatch {
		select {
		case o, ok := <-f.ops:
			if !ok {
				break gather
			}
			take(o)
			continue
		default:
		}
		if w.commitTime == 0 || float64(len(group)) >= w.peak-0.5 {
			break
		}
		if linger == nil {
			linger = time.After(min(w.commitTime*3/4, 2*time.Millisecond))
		}
		select {
		case o, ok := <-f.ops:
			if !ok {
				break gather
			}
			take(o)
		case <-linger:
			break gather
		}
	}
	w.peak = max(float64(len(group)), w.peak*0.99)
	if len(group) == 1 {
		w.lone = min(w.lone+1, loneGroups)
	} else {
		w.lone = 0
	}
	if b != nil && cap(b.arena) <= 1<<20 {
		w.arena = b.arena
	}
	start := time.Now()
	switch {
	case failed:
		// Start again, one way or another, without the failing ones.
		if b != nil {
			_ = b.tx.Rollback()
		}
		w.arena = f.commit(group, w.arena)
	default:
		if err := b.end(); err != nil {
			for _, o := range group {
				o.done <- opResult{err: err}
			}
			break
		}
		f.apply(b)
		for i, o := range group {
			o.done <- results[i]
		}
	}
	w.commitTime = (w.commitTime*7 + time.Since(start)) / 8
	clear(group)
	return group, results
}

// commit runs a group of operations in one transaction. An operation that
// fails is answered with its error and the others are run again without it.
func (f *Frontier) commit(group []*op, arena []byte) []byte {
	results := make([]opResult, len(group))
	for len(group) > 0 {
		b, failed, err := f.try(group, results, arena[:0])
		if b != nil && cap(b.arena) <= 1<<20 {
			arena = b.arena
		}
		switch {
		case failed >= 0:
			group[failed].done <- opResult{err: err}
			group = append(group[:failed], group[failed+1:]...)
			results = results[:len(group)]
			continue
		case err != nil:
			for _, o := range group {
				o.done <- opResult{err: err}
			}
			return arena
		}
		f.apply(b)
		for i, o := range group {
			o.done <- results[i]
		}
		return arena
	}
	return arena
}

// try stages the group in a new transaction and commits it. On an
// operation's error it rolls back and returns the operation's index.
func (f *Frontier) try(group []*op, results []opResult, arena []byte) (b *batch, failed int, err error) {
	if b, err = f.begin(arena); err != nil {
		return nil, -1, err
	}
	for i, o := range group {
		n, err := runOp(o, b)
		if err != nil {
			_ = b.tx.Rollback()
			return b, i, err
		}
		results[i] = opResult{n: n}
	}
	return b, -1, b.end()
}

// reuseBatch is the most hosts (and chunks) of a batch whose maps and
// deltas the next batch reuses.
const reuseBatch = 64

// begin opens the write transaction of a batch.
func (f *Frontier) begin(arena []byte) (*batch, error) {
	tx, err := f.db.Begin(true)
	if err != nil {
		return nil, fmt.Errorf("frontier: begin: %w", err)
	}
	// The writer's batch, made again from what the last one allocated,
	// unless that was large (a map keeps its size, and clear takes
	// time in proportion).
	b := &f.w.batch
	old := *b
	clear(old.order)
	clear(old.leases)
	*b = batch{
		f: f, tx: tx, arena: arena, order: old.order[:0], leases: old.leases[:0],
		urls: tx.Bucket(bucketURLs), inbox: tx.Bucket(bucketInbox), hosts: tx.Bucket(bucketHosts),
		log: tx.Bucket(bucketLog), marks: tx.Bucket(bucketMarks),
	}
	if old.touched == nil || len(old.touched) > reuseBatch || len(old.chunks) > reuseBatch || len(old.inboxChunks) > reuseBatch {
		b.touched, b.chunks, b.inboxChunks = map[*host]*hostDelta{}, map[uint64]int64{}, map[uint64]int64{}
		b.order, b.leases = nil, nil
	} else {
		clear(old.touched)
		clear(old.chunks)
		clear(old.inboxChunks)
		b.touched, b.chunks, b.inboxChunks, b.deltas = old.touched, old.chunks, old.inboxChunks, old.deltas
	}
	if b.urls == nil || b.inbox == nil || b.hosts == nil || b.log == nil || b.marks == nil {
		_ = tx.Rollback()
		return nil, errNoBuckets
	}
	for _, key := range f.deadChunks {
		b.chunks[key] = 0
	}
	for _, key := range f.inbox.dead {
		b.inboxChunks[key] = 0
	}
	return b, nil
}

// end writes the hosts' changes and commits the batch's transaction.
func (b *batch) end() error {
	if err := b.writeMarks(); err != nil {
		_ = b.tx.Rollback()
		return err
	}
	if err := b.writeInbox(); err != nil {
		_ = b.tx.Rollback()
		return err
	}
	if err := b.writeCounts(); err != nil {
		_ = b.tx.Rollback()
		return err
	}
	if err := b.tx.Commit(); err != nil {
		return fmt.Errorf("frontier: commit: %w", err)
	}
	return nil
}

// runOp runs an operation, turning a panic (in a caller's Hook) into an
// error so that the writer survives it.
func runOp(o *op, b *batch) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("frontier: panic in operation: %v", r)
		}
	}()
	return o.run(b)
}

// keep returns what build appends to the arena, which stays unchanged
// until the batch is over.
func (b *batch) keep(build func([]byte) []byte) []byte {
	start := len(b.arena)
	b.arena = build(b.arena)
	return b.arena[start:len(b.arena):len(b.arena)]
}

// host returns the host of origin, creating it in memory if it is new; the
// batch persists it when it touches it.
func (b *batch) host(origin string) *host {
	f := b.f
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[origin]
	if h == nil {
		f.lastID++
		h = newHost(f.lastID, hostRecord{origin: origin})
		f.hosts[origin] = h
		f.byID[h.id] = h
	}
	return h
}

// touch returns the staged state of h, to change.
func (b *batch) touch(h *host) *hostDelta {
	d := b.touched[h]
	if d == nil {
		// One of the deltas of earlier batches, whose lists apply
		// copied, or a new one.
		if len(b.order) < len(b.deltas) {
			d = b.deltas[len(b.order)]
			clear(d.newStaged)
			*d = hostDelta{h: h, rec: h.rec, hint: hintNone, newMarks: d.newMarks[:0], newStaged: d.newStaged[:0]}
		} else {
			d = &hostDelta{h: h, rec: h.rec, hint: hintNone}
			b.deltas = append(b.deltas, d)
		}
		b.touched[h] = d
		b.order = append(b.order, d)
	}
	return d
}

// writeCounts persists what the batch changed in its hosts: the record of
// a host that is new or whose wait or parking changed, and one log entry
// with the changes to the others' counts. When the log is long enough, it
// folds it instead: it writes the record of every host whose counts
// changed since its record was written, and empties the log.
func (b *batch) writeCounts() error {
	f := b.f
	if b.folded = f.logN+1 >= f.foldEvery; b.folded {
		for _, h := range f.dirty {
			b.touch(h)
		}
		c := b.log.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.First() {
			if err := c.Delete(); err != nil {
				return fmt.Errorf("frontier: fold log: %w", err)
			}
		}
	}
	var entry []byte
	var lone *hostDelta // the only host to log, if one
	for _, d := range b.order {
		if d.write = b.folded || !d.h.persisted || d.rec.wait != d.h.rec.wait ||
			d.rec.parked != d.h.rec.parked || d.rec.parkReason != d.h.rec.parkReason; d.write {
			continue
		}
		if delta := d.delta(); delta != (counts{}) || d.rec.flushedTo != d.h.rec.flushedTo {
			lone = d
			if len(entry) > 0 {
				lone = nil
			}
			entry = appendLogEntry(entry, d.h.id, delta, d.rec.flushedTo)
		}
	}
	if lone != nil {
		// One host's changes (a lone Done): its record's leaf is no
		// larger than the log's last one, which bbolt would read and
		// write whole, and the log then grows no entry to fold.
		lone.write, entry = true, nil
	}
	if len(entry) > 0 {
		seq, err := b.log.NextSequence()
		if err != nil {
			return fmt.Errorf("frontier: log sequence: %w", err)
		}
		b.logged = true
		k := b.keep(func(a []byte) []byte { return binary.BigEndian.AppendUint64(a, seq) })
		if err := b.log.Put(k, b.keep(func(a []byte) []byte { return append(a, entry...) })); err != nil {
			return fmt.Errorf("frontier: write log: %w", err)
		}
	}
	for _, d := range b.order {
		if d.write {
			if err := b.putHost(d.h.id, &d.rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// delta is the change the batch makes to the host's counts.
func (d *hostDelta) delta() counts {
	c := d.rec.counts
	c.add(d.h.rec.counts, -1)
	return c
}

// putHost writes a host record, whose counts then include every log entry.
func (b *batch) putHost(id uint32, rec *hostRecord) error {
	rec.logPos = b.log.Sequence()
	k := b.keep(func(a []byte) []byte { return appendUint32(a, id) })
	v := b.keep(func(a []byte) []byte { return appendHostRecord(a, rec) })
	if err := b.hosts.Put(k, v); err != nil {
		return fmt.Errorf("frontier: write host: %w", err)
	}
	return nil
}

// apply makes the committed batch's changes in memory.
func (f *Frontier) apply(b *batch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range b.leases {
		f.endLease(l)
	}
	for _, d := range b.order {
		h := d.h
		f.sum.add(h.rec.counts, -1)
		f.sum.add(d.rec.counts, 1)
		if h.rec.parked {
			f.parked.add(h.rec.counts, -1)
		}
		if d.rec.parked {
			f.parked.add(d.rec.counts, 1)
		}
		if d.write {
			h.persisted, h.dirty = true, false
		} else if (d.rec.counts != h.rec.counts || d.rec.flushedTo != h.rec.flushedTo) && !h.dirty {
			h.dirty = true
			f.dirty = append(f.dirty, h)
		}
		h.rec = d.rec
		if d.cleared {
			f.markN -= len(h.marks)
			h.marks = h.marks[:0]
		}
		h.marks = append(h.marks, d.newMarks...)
		f.markN += len(d.newMarks)
		f.applyInbox(d)
		h.hint = min(h.hint, d.hint)
		h.stalled = false
		f.reheap(h)
	}
	for key, delta := range b.chunks {
		if n := f.chunks[key] + delta; n > 0 {
			f.chunks[key] = n
		} else {
			delete(f.chunks, key)
		}
	}
	f.deadChunks = nil
	f.oldest = max(f.oldest, b.oldest)
	for key, delta := range b.inboxChunks {
		if n := f.inbox.chunks[key] + delta; n > 0 {
			f.inbox.chunks[key] = n
		} else {
			delete(f.inbox.chunks, key)
		}
	}
	f.inbox.dead = nil
	f.inbox.oldest = max(f.inbox.oldest, b.inboxOldest)
	switch {
	case b.folded:
		f.logN, f.dirty = 0, f.dirty[:0]
	case b.logged:
		f.logN++
	}
	f.signal()
}

// endLease forgets a lease given back. f.mu must be held.
func (f *Frontier) endLease(l *Lease) {
	h := l.h
	if i := slices.Index(h.leases, l); i >= 0 {
		h.leases = slices.Delete(h.leases, i, i+1)
	}
	if len(h.leases) == 0 {
		h.leases = nil
	}
	n := &h.leasedReady
	if l.delayed {
		n = &h.leasedDelayed
	}
	*n--
	f.leasedN--
	if l.Revisit {
		h.leasedSched--
		f.leasedSched--
	}
	l.state = leaseOver
	if h.busyBy == l {
		h.busyBy = nil // given back before SetReady: ready as it was
	}
	h.stalled = false
	f.reheap(h)
}
