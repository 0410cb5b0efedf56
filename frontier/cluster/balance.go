package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ReportWeights tells the member how much work is left in each partition
// it holds: an estimate of the time it needs, such as its queued URLs
// times each host's interval, in milliseconds. It is published with the
// next heartbeat, and the balance moves partitions from the busiest
// worker to the idlest by it. It does not move the status's version: the
// weights of a busy crawl change all the time, and only the load says
// whether the crawl is over.
func (m *Member) ReportWeights(w map[int]int64) {
	m.mu.Lock()
	m.weights = w
	m.mu.Unlock()
}

// balanceGap is how far apart, as a share of the mean, the busiest and the
// idlest worker's weights must be before a partition moves: below it,
// moving costs more (a handover, a replay) than it gives.
const balanceGap = 0.2

// readPlan reads the partitions moved for balance: the worker each was moved
// to, by partition.
func (c *conn) readPlan(ctx context.Context) (map[int]string, error) {
	es, err := entries(ctx, c.plan)
	if err != nil {
		return nil, err
	}
	out := make(map[int]string, len(es))
	for k, e := range es {
		if p, err := strconv.Atoi(strings.TrimPrefix(k, "p.")); err == nil {
			out[p] = string(e.Value())
		}
	}
	return out, nil
}

// owners says which worker should hold each partition: the one it was
// last moved to for balance (plan) while that worker is live, else the
// rendezvous owner among live. A join thus takes from the others only
// partitions never moved, and the balance then moves load to it; a leave
// moves only the leaver's.
func owners(live []string, plan map[int]string, partitions int) []string {
	out := make([]string, partitions)
	for p := range partitions {
		if w, ok := plan[p]; ok && slices.Contains(live, w) {
			out[p] = w
			continue
		}
		out[p] = owner(live, p)
	}
	return out
}

// moves picks the partitions that worker self should move for balance,
// and to whom: while self is the busiest of the live workers by the
// weights their statuses report (the moves picked so far counted), and the
// idlest is more than balanceGap of the mean behind, the heaviest of
// self's partitions that is at most half the gap, so that a move never
// makes the receiver busier than the giver. At most most moves.
func moves(self string, live []string, statuses []memberStatus, most int) map[int]string {
	load := map[string]int64{}
	for _, w := range live {
		load[w] = 0
	}
	mine := map[int]int64{}
	var total int64
	for _, s := range statuses {
		if _, ok := load[s.Worker]; !ok {
			continue
		}
		for p, w := range s.Weights {
			load[s.Worker] += w
			total += w
			if s.Worker == self {
				mine[p] = w
			}
		}
	}
	out := map[int]string{}
	if len(live) < 2 || total == 0 {
		return out
	}
	for len(out) < most {
		busiest, idlest := live[0], live[0]
		for _, w := range live { // sorted: ties go to the smaller id
			if load[w] > load[busiest] {
				busiest = w
			}
			if load[w] < load[idlest] {
				idlest = w
			}
		}
		gap := load[busiest] - load[idlest]
		if busiest != self || float64(gap) <= balanceGap*float64(total)/float64(len(live)) {
			break
		}
		p, best := -1, int64(0)
		for q, w := range mine {
			if w <= gap/2 && (w > best || w == best && q < p) {
				p, best = q, w
			}
		}
		if p < 0 {
			break
		}
		out[p] = idlest
		delete(mine, p)
		load[self] -= best
		load[idlest] += best
	}
	return out
}

// movesAtOnce bounds the partitions a worker moves for balance in a turn.
const movesAtOnce = 16

// balance moves some of this worker's partitions to the idlest workers
// when it is the busiest by far (moves): it records each move in the plan
// bucket, where every worker reads who should hold the partition, and
// hands the partition over; the receiver claims it once it is free. The
// next moves wait until these have landed (their receivers report holding
// them) or a lease has passed, so that they are judged on weights that
// count these.
func (m *Member) balance(ctx context.Context, live []string, statuses []memberStatus) {
	m.mu.Lock()
	moving, movedAt := m.moving, m.movedAt
	m.mu.Unlock()
	if !movedAt.IsZero() && time.Since(movedAt) < m.t.lease {
		held := map[int]bool{}
		for _, s := range statuses {
			if s.Worker != m.cfg.Worker {
				for _, p := range s.Held {
					held[p] = true
				}
			}
		}
		for _, p := range moving {
			if !held[p] {
				return
			}
		}
	}
	var moved []int
	for p, to := range moves(m.cfg.Worker, live, statuses, movesAtOnce) {
		m.mu.Lock()
		h := m.holds[p]
		m.mu.Unlock()
		if h == nil {
			continue
		}
		if _, err := m.plan.Put(ctx, leaseKey(p), []byte(to)); err != nil {
			if ctx.Err() == nil {
				m.log.Warn("cluster: move a partition for balance", "partition", p, "to", to, "err", err)
			}
			continue
		}
		m.log.Debug("cluster: partition moved for balance", "partition", p, "to", to)
		m.handover(h)
		moved = append(moved, p)
	}
	if len(moved) > 0 {
		m.mu.Lock()
		m.moving, m.movedAt = moved, time.Now()
		m.mu.Unlock()
		m.log.Info("cluster: partitions moved for balance", "partitions", fmt.Sprint(moved))
	}
}

// liveStatuses reads the live workers' statuses, this one's included.
func (m *Member) liveStatuses(ctx context.Context) ([]memberStatus, error) {
	es, err := entries(ctx, m.members)
	if err != nil {
		return nil, err
	}
	out := make([]memberStatus, 0, len(es))
	for _, e := range es {
		var s memberStatus
		if json.Unmarshal(e.Value(), &s) == nil {
			out = append(out, s)
		}
	}
	return out, nil
}
