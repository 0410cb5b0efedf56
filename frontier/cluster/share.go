package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ShareRobots publishes data, what the worker that fetched robots.txt URL
// key made of it, for the other workers: a host's robots.txt may redirect
// to another host's, which only the worker holding that host may ask
// (robots.txt redirects, RFC 9309 §2.3.1.2). The last one written wins;
// readers judge its age from what data says. It is kept in the crawl's
// robots bucket, a key per robots.txt URL, for RobotsKeep after its last
// write: the server forgets it then, so the bucket holds only the answers
// of the last day rather than every one the crawl ever shared.
func (m *Member) ShareRobots(ctx context.Context, key string, data []byte) error {
	if _, err := m.robots.Put(ctx, robotsShareKey(key), data); err != nil {
		return fmt.Errorf("cluster: share robots.txt %s: %w", key, err)
	}
	return nil
}

// SharedRobots returns what ShareRobots last published for robots.txt URL
// key; ok is false when nothing was.
func (m *Member) SharedRobots(ctx context.Context, key string) (data []byte, ok bool, err error) {
	e, err := m.robots.Get(ctx, robotsShareKey(key))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("cluster: read shared robots.txt %s: %w", key, err)
	}
	return e.Value(), true, nil
}

// WantRobots asks the worker holding origin's partition to fetch origin's
// robots.txt and share its answer (ShareRobots): another host's
// robots.txt redirects there, and that worker may have no URL of origin,
// so would never fetch it of its own accord. The want is a plain NATS
// message, not stored: one that finds no holder (the partition between
// workers) is lost, and the asker asks again while it waits.
func (m *Member) WantRobots(origin string) error {
	p := Partition(origin, m.cfg.Partitions)
	if err := m.nc.Publish(m.robotsSubject(strconv.Itoa(p)), []byte(origin)); err != nil {
		return fmt.Errorf("cluster: want robots.txt of %s: %w", origin, err)
	}
	return nil
}

// robotsWanted passes a want to Options.OnRobotsWanted when the member
// holds its partition (and is not handing it over).
func (m *Member) robotsWanted(msg *nats.Msg) {
	origin := string(msg.Data)
	if h, ok := m.Hold(Partition(origin, m.cfg.Partitions)); ok && !h.Leaving {
		m.opts.OnRobotsWanted(origin)
	}
}

// RobotsKeep is how long the robots bucket keeps a shared answer: the
// longest a worker may use one (robots.CacheMax, 24 h, RFC 9309 §2.4). A
// reader still judges an answer's freshness itself, as one may ask to be
// kept for less.
const RobotsKeep = 24 * time.Hour

// robotsShareKey is the robots bucket's key for robots.txt URL key, whose
// characters a key may not all hold.
func robotsShareKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "robots." + hex.EncodeToString(sum[:20])
}
