package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// fence makes a new claim on h.p safe from its previous owner. It writes a
// claim entry to the partition's log expecting the log's last sequence as
// read, so that a late write of the previous owner, which expects the
// sequence it last wrote, fails from now on (and one that got in before is
// part of the log the new owner replays); and it rewrites the snapshot
// pointer with its revision, so that the previous owner's snapshot in
// progress fails too.
func (m *Member) fence(ctx context.Context, h *hold) error {
	data, err := (&Entry{claim: m.cfg.Worker}).encode()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		last, clean, err := m.lastLog(ctx, h.p)
		if err != nil {
			return err
		}
		h.clean = clean
		ack, err := m.js.Publish(ctx, m.logSubject(h.p), data, jetstream.WithExpectLastSequencePerSubject(last))
		if err == nil {
			h.seq = ack.Sequence
			break
		}
		if !wrongLastSeq(err) || attempt == 5 {
			return fmt.Errorf("write claim to log: %w", err)
		}
	}
	for attempt := 0; ; attempt++ {
		ptr, rev, err := m.pointer(ctx, h.p)
		if err != nil {
			return err
		}
		b, _ := json.Marshal(ptr)
		if rev == 0 {
			rev, err = m.state.Create(ctx, snapKey(h.p), b)
		} else {
			rev, err = m.state.Update(ctx, snapKey(h.p), b, rev)
		}
		if err == nil {
			h.snapRev, h.snapObj = rev, ptr.Object
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) || attempt == 5 {
			return fmt.Errorf("fence snapshot pointer: %w", err)
		}
	}
}

// lastLog returns the sequence of the last entry of partition p's log, 0
// when it has none, and whether the partition was left clean: never
// crawled, or given up by its last owner with no request in flight.
func (m *Member) lastLog(ctx context.Context, p int) (seq uint64, clean bool, err error) {
	msg, err := m.stream.GetLastMsgForSubject(ctx, m.logSubject(p))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read partition %d log: %w", p, err)
	}
	e, err := decodeEntry(msg.Data)
	return msg.Sequence, err == nil && e.release != "", nil
}

// markReleased writes to h's log that this owner gives the partition up
// with no request in flight, so that its successor may start at once
// (Change.Clean). A failure only costs the successor its wait.
func (m *Member) markReleased(ctx context.Context, h *hold) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.marked || h.fenced.Load() {
		return
	}
	mark, _ := (&Entry{release: m.cfg.Worker}).encode()
	if _, err := m.appendLocked(ctx, h, mark); err != nil {
		m.log.Warn("cluster: mark partition released", "partition", h.p, "err", err)
		return
	}
	h.marked = true
}

// pointer is the snapshot pointer of a partition: the object holding its
// state as of stream sequence Seq. It is missing (revision 0) until a
// first owner fences it, and empty until a first snapshot.
type pointer struct {
	Seq    uint64 `json:"seq"`
	Object string `json:"object,omitempty"`
}

func (c *conn) pointer(ctx context.Context, p int) (pointer, uint64, error) {
	e, err := c.state.Get(ctx, snapKey(p))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return pointer{}, 0, nil
	}
	if err != nil {
		return pointer{}, 0, fmt.Errorf("read snapshot pointer %d: %w", p, err)
	}
	var ptr pointer
	if err := json.Unmarshal(e.Value(), &ptr); err != nil {
		return pointer{}, 0, fmt.Errorf("snapshot pointer %d: %w", p, err)
	}
	return ptr, e.Revision(), nil
}

// held returns the member's state of p, or ErrNotHeld.
func (m *Member) held(p int) (*hold, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.holds[p]; h != nil {
		return h, nil
	}
	return nil, fmt.Errorf("partition %d: %w", p, ErrNotHeld)
}

// Append writes e to the log of partition p, which the member must hold,
// and returns its stream sequence: once it returns, e outlives the worker.
// Write it before acknowledging the change locally. The write expects the
// log's last sequence to be the one this member wrote last, so after
// another worker claimed p it fails with ErrFenced (and the member reports
// p Lost): nothing a superseded worker writes lands after its successor's
// claim. Appends to one partition are serialised; to several, concurrent.
//
// An entry too large for one message (the server's max_payload) is written
// as several: its found URLs first, then the rest, so that a failure part
// way leaves URLs found but not the request done, which a successor redoes.
func (m *Member) Append(ctx context.Context, p int, e Entry) (uint64, error) {
	if e.empty() {
		return 0, nil
	}
	h, err := m.held(p)
	if err != nil {
		return 0, err
	}
	data, err := e.encode()
	if err != nil {
		return 0, err
	}
	h.wmu.Lock()
	defer h.wmu.Unlock()
	limit := int(m.nc.MaxPayload()) - 1024
	if len(data) <= limit {
		return m.appendLocked(ctx, h, data)
	}
	for found := e.Found; len(found) > 0; {
		chunk, n, err := fitEntry(found, limit)
		if err != nil {
			return 0, fmt.Errorf("cluster: append to partition %d: %w", p, err)
		}
		if _, err := m.appendLocked(ctx, h, chunk); err != nil {
			return 0, err
		}
		found = found[n:]
	}
	rest := Entry{Done: e.Done, Waits: e.Waits}
	if rest.empty() {
		return h.seq, nil
	}
	if data, err = rest.encode(); err != nil {
		return 0, err
	}
	if len(data) > limit {
		return 0, fmt.Errorf("cluster: append to partition %d: %d bytes of done URLs and waits exceed the server's max_payload", p, len(data))
	}
	return m.appendLocked(ctx, h, data)
}

// appendLocked writes data to h's log; h.wmu is held. A write whose reply
// is lost is sent again; the server checks the expected sequence before
// its duplicate window, so a first write that did land makes the second
// fail on the sequence, and the log's last entry, carrying this write's
// Nats-Msg-Id, tells that case from a successor's write.
func (m *Member) appendLocked(ctx context.Context, h *hold, data []byte) (uint64, error) {
	if h.fenced.Load() {
		return 0, fmt.Errorf("partition %d: %w", h.p, ErrFenced)
	}
	h.writes++ // a write of its own id: an earlier call's late write is not taken for this one
	id := m.cfg.Worker + "." + strconv.FormatUint(h.claimRev, 10) + "." + strconv.FormatUint(h.writes, 10)
	var err error
	for attempt := range 3 {
		var ack *jetstream.PubAck
		ack, err = m.js.Publish(ctx, m.logSubject(h.p), data,
			jetstream.WithExpectLastSequencePerSubject(h.seq), jetstream.WithMsgID(id))
		if err == nil {
			h.seq = ack.Sequence
			return ack.Sequence, nil
		}
		if wrongLastSeq(err) {
			if attempt > 0 {
				last, lerr := m.stream.GetLastMsgForSubject(ctx, m.logSubject(h.p))
				if lerr == nil && last.Header.Get(jetstream.MsgIDHeader) == id {
					h.seq = last.Sequence
					return last.Sequence, nil
				}
			}
			h.fenced.Store(true) // the loop reports it Lost at its next turn
			m.wake()
			return 0, fmt.Errorf("partition %d: %w", h.p, ErrFenced)
		}
		if ctx.Err() != nil || attempt == 2 {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond << attempt):
		}
	}
	return 0, fmt.Errorf("cluster: append to partition %d: %w", h.p, err)
}

// Replay calls fn with every entry of partition p (its log and the URLs
// routed to it) whose sequence is after after, in order, skipping claim
// marks. It returns through: every entry of p with a sequence up to it has
// been passed to fn, so the next call may start there; tell Applied once
// fn's work is done. Replay stops at fn's first error and returns it.
func (m *Member) Replay(ctx context.Context, p int, after uint64, fn func(seq uint64, e Entry) error) (through uint64, err error) {
	return m.replay(ctx, p, m.partFilter(p), after, fn)
}

// ReplayRouted is Replay of the URLs routed to partition p alone: what an
// owner polls for while it holds p, since it wrote the rest of p's log
// itself.
func (m *Member) ReplayRouted(ctx context.Context, p int, after uint64, fn func(seq uint64, e Entry) error) (through uint64, err error) {
	return m.replay(ctx, p, m.inSubject(p), after, fn)
}

// replay is Replay of the entries of partition p on subject (a filter).
func (m *Member) replay(ctx context.Context, p int, subject string, after uint64, fn func(seq uint64, e Entry) error) (through uint64, err error) {
	info, err := m.stream.Info(ctx)
	if err != nil {
		return after, fmt.Errorf("cluster: replay partition %d: %w", p, err)
	}
	through = max(after, info.State.LastSeq)
	// Nothing new (the common case for an idle worker polling): one direct
	// read rather than a consumer made and deleted.
	last, err := m.stream.GetLastMsgForSubject(ctx, subject)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return through, nil
	case err != nil:
		return after, fmt.Errorf("cluster: replay partition %d: %w", p, err)
	case last.Sequence <= after:
		return through, nil
	}
	cons, err := m.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    after + 1,
	})
	if err != nil {
		return after, fmt.Errorf("cluster: replay partition %d: %w", p, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = m.stream.DeleteConsumer(dctx, cons.CachedInfo().Name)
		cancel()
	}()
	// Ask for no more than is pending, so that a fetch ends as soon as the
	// last entry arrives rather than at its timeout.
	pending := cons.CachedInfo().NumPending
	for pending > 0 {
		batch, err := cons.Fetch(int(min(pending, 256)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return after, fmt.Errorf("cluster: replay partition %d: %w", p, err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			md, err := msg.Metadata()
			if err != nil {
				return after, fmt.Errorf("cluster: replay partition %d: %w", p, err)
			}
			e, err := decodeEntry(msg.Data())
			if err != nil {
				return after, fmt.Errorf("cluster: replay partition %d, sequence %d: %w", p, md.Sequence.Stream, err)
			}
			if e.facts() { // marks are not passed on
				if err := fn(md.Sequence.Stream, e); err != nil {
					return after, err
				}
			}
			after, pending = md.Sequence.Stream, md.NumPending
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return after, fmt.Errorf("cluster: replay partition %d: %w", p, err)
		}
		if err := ctx.Err(); err != nil {
			return after, err
		}
		if n == 0 {
			return after, fmt.Errorf("cluster: replay partition %d: %d entries pending and none delivered", p, pending)
		}
	}
	return max(through, after), nil
}

// Snapshot saves the state of partition p as of stream sequence through
// (every entry of p up to through applied, as Replay reported it), read
// from r, so that the stream can forget those entries: it puts the object,
// points the partition's snapshot pointer at it (failing with ErrFenced
// when another worker claimed p since), writes a mark to the log so that
// the log is never empty of this owner's last write, and purges p's
// entries up to through. The previous snapshot object is deleted.
func (m *Member) Snapshot(ctx context.Context, p int, through uint64, r io.Reader) error {
	h, err := m.held(p)
	if err != nil {
		return err
	}
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.fenced.Load() {
		return fmt.Errorf("partition %d: %w", p, ErrFenced)
	}
	name := objectName(p, through, h.claimRev)
	if name == h.snapObj {
		return nil
	}
	if _, err := m.snaps.Put(ctx, jetstream.ObjectMeta{Name: name}, r); err != nil {
		return fmt.Errorf("cluster: snapshot partition %d: %w", p, err)
	}
	b, _ := json.Marshal(pointer{Seq: through, Object: name})
	rev, err := m.state.Update(ctx, snapKey(p), b, h.snapRev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || wrongLastSeq(err) {
		h.fenced.Store(true)
		m.wake()
		_ = m.snaps.Delete(ctx, name) // nobody points at it
		return fmt.Errorf("partition %d: %w", p, ErrFenced)
	}
	if err != nil {
		return fmt.Errorf("cluster: snapshot partition %d: point at %s: %w", p, name, err)
	}
	prev := h.snapObj
	h.snapRev, h.snapObj = rev, name
	mark, _ := (&Entry{claim: m.cfg.Worker}).encode()
	if _, err := m.appendLocked(ctx, h, mark); err != nil {
		return err
	}
	if err := m.stream.Purge(ctx, jetstream.WithPurgeSubject(m.partFilter(p)), jetstream.WithPurgeSequence(through+1)); err != nil {
		return fmt.Errorf("cluster: snapshot partition %d: purge: %w", p, err)
	}
	if prev != "" {
		if err := m.snaps.Delete(ctx, prev); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			m.log.Warn("cluster: delete old snapshot", "object", prev, "err", err)
		}
	}
	return nil
}

// Restore calls fn with the last snapshot of partition p, if there is one,
// and returns the sequence it is as of: Replay from there. It returns 0
// without calling fn when p has no snapshot.
func (m *Member) Restore(ctx context.Context, p int, fn func(r io.Reader) error) (uint64, error) {
	ptr, _, err := m.pointer(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("cluster: restore: %w", err)
	}
	if ptr.Object == "" {
		return 0, nil
	}
	obj, err := m.snaps.Get(ctx, ptr.Object)
	if err != nil {
		return 0, fmt.Errorf("cluster: restore partition %d from %s: %w", p, ptr.Object, err)
	}
	defer obj.Close()
	if err := fn(obj); err != nil {
		return 0, err
	}
	return ptr.Seq, nil
}
