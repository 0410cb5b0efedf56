package cluster

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/politecrawl/crawler/frontier"
)

// Route publishes items (URLs found for hosts of any partition) to their
// partitions, where the owner reads them with Replay and adds them to its
// frontier (whose Add is idempotent). Items are grouped by partition, made
// unique by key and kind, sorted, and cut into messages that fit the
// server's max_payload; each message carries a Nats-Msg-Id that is a hash
// of its partition and keys, so a batch routed again (a retry after a lost
// reply, or the same page fetched again by a new owner) within the
// stream's duplicate window is stored once. It returns how many messages
// were stored, duplicates not counted. On error some partitions may have
// had theirs: routing the same items again is safe.
func (m *Member) Route(ctx context.Context, items []frontier.Item) (int, error) {
	return m.route(ctx, items)
}

func (c *conn) route(ctx context.Context, items []frontier.Item) (int, error) {
	byPart := map[int][]frontier.Item{}
	for _, it := range items {
		p := Partition(it.Origin, c.cfg.Partitions)
		byPart[p] = append(byPart[p], it)
	}
	parts := make([]int, 0, len(byPart))
	for p := range byPart {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	limit := int(c.nc.MaxPayload()) - 1024 // room for headers
	// Publish every message, then wait for every ack: a page's links to
	// fifty partitions take about one round trip, not fifty.
	type sent struct {
		p   int
		ack jetstream.PubAckFuture
	}
	var pending []sent
	var errs []error
	for _, p := range parts {
		batch := byPart[p]
		slices.SortFunc(batch, func(a, b frontier.Item) int {
			return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Kind, b.Kind))
		})
		batch = slices.CompactFunc(batch, func(a, b frontier.Item) bool { return a.Key == b.Key && a.Kind == b.Kind })
		for len(batch) > 0 && len(errs) == 0 {
			data, n, err := fitEntry(batch, limit)
			if err != nil {
				errs = append(errs, fmt.Errorf("partition %d: %w", p, err))
				break
			}
			f, err := c.js.PublishAsync(c.inSubject(p), data, jetstream.WithMsgID(c.routeID(p, batch[:n])))
			if err != nil {
				errs = append(errs, fmt.Errorf("partition %d: %w", p, err))
				break
			}
			pending = append(pending, sent{p, f})
			batch = batch[n:]
		}
	}
	stored := 0
	for _, s := range pending {
		select {
		case ack := <-s.ack.Ok():
			if !ack.Duplicate {
				stored++
			}
		case err := <-s.ack.Err():
			errs = append(errs, fmt.Errorf("partition %d: %w", s.p, err))
		case <-ctx.Done():
			return stored, fmt.Errorf("cluster: route: %w", ctx.Err())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return stored, fmt.Errorf("cluster: route: %w", err)
	}
	return stored, nil
}

// fitEntry encodes as many of items as fit in limit bytes (at least one)
// and says how many.
func fitEntry(items []frontier.Item, limit int) ([]byte, int, error) {
	n := len(items)
	for {
		data, err := (&Entry{Found: items[:n]}).encode()
		if err != nil {
			return nil, 0, err
		}
		if len(data) <= limit {
			return data, n, nil
		}
		if n == 1 {
			return nil, 0, fmt.Errorf("an item of %d bytes exceeds the server's max_payload", len(data))
		}
		// Shrink in proportion, with a tenth to spare.
		n = max(1, min(n-1, n*limit/len(data)*9/10))
	}
}

// routeID names a routed message by what it holds.
func (c *conn) routeID(p int, items []frontier.Item) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", c.cfg.Name, p)
	for _, it := range items {
		fmt.Fprintf(h, "%s\x00%d\x00", it.Key, it.Kind)
	}
	return "route-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Inbound reads, in one request, the stream's last sequence and how many
// routed messages each partition's inbound subject holds, so that a worker
// polling for routed URLs replays only the partitions whose count moved
// since it last replayed them. Counts only grow, but for a Snapshot's purge
// of the partition, which its owner makes itself. A partition nothing was
// ever routed to is absent.
func (m *Member) Inbound(ctx context.Context) (last uint64, counts map[int]uint64, err error) {
	info, err := m.stream.Info(ctx, jetstream.WithSubjectFilter("crawl."+m.cfg.Name+".p.*.in"))
	if err != nil {
		return 0, nil, fmt.Errorf("cluster: read the routed URLs' counts: %w", err)
	}
	counts = make(map[int]uint64, len(info.State.Subjects))
	prefix := "crawl." + m.cfg.Name + ".p."
	for subj, n := range info.State.Subjects {
		rest, ok := strings.CutPrefix(subj, prefix)
		if !ok {
			continue
		}
		if p, err := strconv.Atoi(strings.TrimSuffix(rest, ".in")); err == nil {
			counts[p] = n
		}
	}
	return info.State.LastSeq, counts, nil
}
