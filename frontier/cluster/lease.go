package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// claimValue is what a claim holds: the worker, and a nonce that tells
// this process from another with the same worker id (a restart, or a
// misconfiguration).
type claimValue struct {
	Worker string `json:"worker"`
	Nonce  string `json:"nonce"`
}

func (m *Member) claimValue() []byte {
	b, _ := json.Marshal(claimValue{Worker: m.cfg.Worker, Nonce: m.nonce})
	return b
}

// parallel is how many claims the loop writes at once: a turn must renew
// every claim within a quarter lease, and one at a time it would take a
// round trip per partition.
const parallel = 32

// each calls fn for every element of xs, up to parallel at once, and
// returns when all calls have.
func each[T any](xs []T, fn func(T)) {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, x := range xs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(x)
		})
	}
	wg.Wait()
}

// renew writes each claim again, with its revision, and moves Until by the
// send time of each write that succeeded. A claim whose revision moved
// is taken up again if it is still this process's (a renewal landed whose
// reply was lost), and otherwise lost: another worker claimed it after it
// expired.
func (m *Member) renew(ctx context.Context) {
	var mu sync.Mutex
	var lost []*hold
	each(m.snapshotHolds(), func(h *hold) {
		sent := time.Now()
		rev, err := m.leases.Update(ctx, leaseKey(h.p), m.claimValue(), h.rev)
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || wrongLastSeq(err) {
			sent = time.Now()
			if rev, err = m.adopt(ctx, h.p); err == nil && rev == 0 {
				mu.Lock()
				lost = append(lost, h)
				mu.Unlock()
				return
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				m.log.Warn("cluster: renew claim", "partition", h.p, "err", err)
			}
			return
		}
		m.mu.Lock()
		h.rev = rev
		if h.leavingAt.IsZero() {
			h.until = m.t.until(sent)
		}
		m.mu.Unlock()
	})
	slices.SortFunc(lost, func(a, b *hold) int { return a.p - b.p })
	for _, h := range lost {
		m.lose(h, "claim superseded")
	}
}

func (m *Member) snapshotHolds() []*hold {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*hold, 0, len(m.holds))
	for _, h := range m.holds {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b *hold) int { return a.p - b.p })
	return out
}

// expire drops the partitions whose window closed without a renewal (the
// server may let their claims go any moment now) and those a write found
// claimed by another worker.
func (m *Member) expire(now time.Time) {
	for _, h := range m.snapshotHolds() {
		m.mu.Lock()
		over := h.leavingAt.IsZero() && !now.Before(h.until)
		m.mu.Unlock()
		switch {
		case h.fenced.Load():
			m.lose(h, "log written by another worker")
		case over:
			m.lose(h, "lease ran out")
		}
	}
}

// lose forgets h and reports it Lost. Its claim is left to expire: it
// may be ours still, but a delete could race a successor's claim only to
// fail on the revision, so it is not worth a round trip here.
func (m *Member) lose(h *hold, why string) {
	m.mu.Lock()
	if m.holds[h.p] != h {
		m.mu.Unlock()
		return
	}
	delete(m.holds, h.p)
	m.version++
	m.mu.Unlock()
	h.fenced.Store(true)
	m.log.Warn("cluster: partition lost", "partition", h.p, "why", why)
	m.notify(Change{Partition: h.p, Kind: Lost})
}

func (m *Member) notify(c Change) {
	if m.opts.OnChange != nil {
		m.opts.OnChange(c)
	}
}

// assign claims each free partition own (owners) gives this worker, and
// hands over each held one it gives another.
func (m *Member) assign(ctx context.Context, own []string) {
	var want []int
	for p := range m.cfg.Partitions {
		mine := own[p] == m.cfg.Worker
		m.mu.Lock()
		h := m.holds[p]
		m.mu.Unlock()
		switch {
		case mine && h == nil:
			want = append(want, p)
		case !mine && h != nil:
			m.handover(h)
		}
	}
	gained := make([]*hold, len(want))
	each(want, func(p int) {
		h, err := m.claim(ctx, p)
		if err != nil && ctx.Err() == nil {
			m.log.Warn("cluster: claim", "partition", p, "err", err)
		}
		gained[slices.Index(want, p)] = h
	})
	var clean, unclean []int
	for _, h := range gained {
		if h == nil {
			continue
		}
		m.mu.Lock()
		h.since = time.Now()
		m.holds[h.p] = h
		m.version++
		m.mu.Unlock()
		if h.clean {
			clean = append(clean, h.p)
		} else {
			unclean = append(unclean, h.p)
		}
		m.notify(Change{Partition: h.p, Kind: Gained, Clean: h.clean, Tenure: h.claimRev})
	}
	if len(clean)+len(unclean) > 0 {
		// One line a turn: a worker joining gains hundreds at once.
		m.log.Info("cluster: partitions gained", "clean", len(clean), "unclean", len(unclean),
			"from_dead_or_hung_workers", fmt.Sprint(unclean))
	}
}

// claim tries to create partition p's claim and, when it gets it, fences
// the partition's log and snapshot pointer against the previous owner. It
// returns nil when the partition is held by another. A claim of this
// process that it dropped (its window closed, by a pause, before the
// server let it go) is taken up again with its revision.
func (m *Member) claim(ctx context.Context, p int) (*hold, error) {
	sent := time.Now()
	rev, err := m.leases.Create(ctx, leaseKey(p), m.claimValue())
	if errors.Is(err, jetstream.ErrKeyExists) {
		rev, err = m.adopt(ctx, p)
		if rev == 0 || err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	h := &hold{p: p, claimRev: rev, rev: rev, until: m.t.until(sent)}
	if err := m.fence(ctx, h); err != nil {
		// Give the claim back; the next turn that finds the partition
		// free claims it again.
		_ = m.leases.Delete(ctx, leaseKey(p), jetstream.LastRevision(rev))
		return nil, fmt.Errorf("fence: %w", err)
	}
	return h, nil
}

// adopt writes this process's own claim on p again, with the revision the
// server has, and returns the new revision; 0 when the claim is not this
// process's (or is gone). Nobody else can have held p in between: a
// successor's Create would have replaced the claim's value and nonce.
func (m *Member) adopt(ctx context.Context, p int) (uint64, error) {
	e, err := m.leases.Get(ctx, leaseKey(p))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, nil // gone meanwhile: the next turn creates it
	}
	if err != nil {
		return 0, err
	}
	var v claimValue
	if json.Unmarshal(e.Value(), &v) != nil || v.Worker != m.cfg.Worker || v.Nonce != m.nonce {
		return 0, nil
	}
	rev, err := m.leases.Update(ctx, leaseKey(p), m.claimValue(), e.Revision())
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || wrongLastSeq(err) {
		return 0, nil
	}
	return rev, err
}

// handover begins giving h up: no request may start from now, and the
// claim goes at Release (or, without OnChange, at once).
func (m *Member) handover(h *hold) {
	m.mu.Lock()
	if !h.leavingAt.IsZero() {
		m.mu.Unlock()
		return
	}
	h.leavingAt, h.until = time.Now(), time.Time{}
	h.released = m.opts.OnChange == nil
	m.mu.Unlock()
	m.log.Debug("cluster: partition handed over", "partition", h.p)
	m.notify(Change{Partition: h.p, Kind: Handover})
}

// leave deletes the claims of the partitions released after a handover,
// or handed over a lease ago: an engine that never releases does not keep
// a partition from its owner for longer than a dead worker would.
func (m *Member) leave(ctx context.Context) {
	now := time.Now()
	for _, h := range m.snapshotHolds() {
		m.mu.Lock()
		ready := !h.leavingAt.IsZero() && (h.released || now.Sub(h.leavingAt) >= m.t.lease)
		released, rev := h.released, h.rev
		m.mu.Unlock()
		if !ready {
			continue
		}
		if released { // not when the engine never said its requests were settled
			m.markReleased(ctx, h)
		}
		h.wmu.Lock() // wait for a write under way; none after the claim is gone
		h.fenced.Store(true)
		h.wmu.Unlock()
		err := m.leases.Delete(ctx, leaseKey(h.p), jetstream.LastRevision(rev))
		if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !wrongLastSeq(err) {
			h.fenced.Store(false)
			m.log.Warn("cluster: release claim", "partition", h.p, "err", err)
			continue
		}
		m.mu.Lock()
		if m.holds[h.p] == h {
			delete(m.holds, h.p)
			m.version++
		}
		m.mu.Unlock()
		m.log.Debug("cluster: partition released", "partition", h.p)
	}
}
