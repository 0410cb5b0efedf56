package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNoJetStream is returned by Join and Status when the NATS server
// answers but has no JetStream for the account.
var ErrNoJetStream = errors.New("cluster: the NATS server has no JetStream (run nats-server with -js)")

// dupWindow is the stream's deduplication window for Nats-Msg-Id: a routed
// batch published again within it (a retry, or the same page fetched again
// by a new owner soon after) is stored once.
const dupWindow = 10 * time.Minute

// conn is a connection to the crawl's streams and buckets, shared by
// Member and Status.
type conn struct {
	cfg     Config
	nc      *nats.Conn
	js      jetstream.JetStream
	members jetstream.KeyValue // w.<worker>: status, TTL lease
	leases  jetstream.KeyValue // p.<n>: the claim, TTL lease
	state   jetstream.KeyValue // crawl, pages, snap.<n>: no TTL
	robots  jetstream.KeyValue // robots.<hash>: shared robots.txt answers, TTL RobotsKeep
	plan    jetstream.KeyValue // p.<n>: the worker a partition was moved to for balance, no TTL
	stream  jetstream.Stream   // crawl.<name>.p.<n>.{log,in}
	snaps   jetstream.ObjectStore
}

func (c *conn) streamName() string             { return "crawl-" + c.cfg.Name }
func (c *conn) logSubject(p int) string        { return c.partSubject(p) + ".log" }
func (c *conn) inSubject(p int) string         { return c.partSubject(p) + ".in" }
func (c *conn) partFilter(p int) string        { return c.partSubject(p) + ".*" }
func (c *conn) partSubject(p int) string       { return "crawl." + c.cfg.Name + ".p." + strconv.Itoa(p) }
func (c *conn) robotsSubject(p string) string  { return "crawl." + c.cfg.Name + ".robots." + p }
func (c *conn) bucket(kind string) string      { return "crawl-" + c.cfg.Name + "-" + kind }
func leaseKey(p int) string                    { return "p." + strconv.Itoa(p) }
func snapKey(p int) string                     { return "snap." + strconv.Itoa(p) }
func memberKey(worker string) string           { return "w." + worker }
func objectName(p int, seq, rev uint64) string { return fmt.Sprintf("p%d-%d-%d", p, seq, rev) }

// crawlMeta is what the crawl was created with: settings that every worker
// must share.
type crawlMeta struct {
	Partitions int           `json:"partitions"`
	Lease      time.Duration `json:"lease"`
}

// dial connects to the crawl of cfg. With create it makes the streams and
// buckets that are missing and records the crawl's settings, refusing a cfg
// whose partitions or lease differ from them; without, it only opens them
// (for Status). nats.go reconnects for ever after a first success.
//
// The client's own reports (a slow consumer, a permissions violation) go to
// log, which may be nil for none, rather than to stderr as plain text.
func dial(ctx context.Context, cfg Config, name string, create bool, log *slog.Logger) (*conn, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	nc, err := nats.Connect(cfg.NATS,
		nats.Name(name),
		nats.SetCustomDialer(&lineDialer{d: net.Dialer{Timeout: 5 * time.Second}}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				log.Warn("nats", "err", err, "subject", sub.Subject)
				return
			}
			log.Warn("nats", "err", err)
		}),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond),
		nats.Timeout(5*time.Second),
		// A write made while reconnecting fails at once rather than
		// waiting in a buffer to be sent, late, after the caller gave up
		// on it: a renewal or append must land while it still means what
		// it meant, or not at all.
		nats.ReconnectBufSize(-1),
	)
	if err != nil {
		return nil, fmt.Errorf("cluster.nats: connect to %s: %w", cfg.Redacted(), err)
	}
	c := &conn{cfg: cfg, nc: nc}
	if err := c.open(ctx, create); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func (c *conn) open(ctx context.Context, create bool) error {
	// Route publishes a page's batches at once and waits for their acks;
	// an ack that never comes fails after the timeout rather than never.
	js, err := jetstream.New(c.nc, jetstream.WithPublishAsyncTimeout(10*time.Second), jetstream.WithPublishAsyncMaxPending(1024))
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.js = js
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) ||
			errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("cluster.nats: %s: %w", c.cfg.Redacted(), ErrNoJetStream)
		}
		return fmt.Errorf("cluster.nats: %s: jetstream: %w", c.cfg.Redacted(), err)
	}
	if !create {
		return c.bind(ctx)
	}
	kvs := []struct {
		kv  *jetstream.KeyValue
		cfg jetstream.KeyValueConfig
	}{
		{&c.state, jetstream.KeyValueConfig{Bucket: c.bucket("state"), Description: "crawl settings, pages budget, snapshot pointers"}},
		{&c.members, jetstream.KeyValueConfig{Bucket: c.bucket("members"), TTL: c.cfg.Lease, Description: "live workers and their status"}},
		{&c.leases, jetstream.KeyValueConfig{Bucket: c.bucket("leases"), TTL: c.cfg.Lease, Description: "partition claims"}},
		{&c.robots, jetstream.KeyValueConfig{Bucket: c.bucket("robots"), TTL: RobotsKeep, Description: "robots.txt answers shared between workers"}},
		{&c.plan, jetstream.KeyValueConfig{Bucket: c.bucket("plan"), Description: "partitions moved to balance the workers' load"}},
	}
	for _, b := range kvs {
		kv, err := js.CreateKeyValue(ctx, b.cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, b.cfg.Bucket)
		}
		if err != nil {
			return fmt.Errorf("cluster: bucket %s: %w", b.cfg.Bucket, err)
		}
		*b.kv = kv
	}
	if err := c.checkMeta(ctx); err != nil {
		return err
	}
	c.stream, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        c.streamName(),
		Description: "per-partition changelog and routed URLs of crawl " + c.cfg.Name,
		Subjects:    []string{"crawl." + c.cfg.Name + ".p.>"},
		Storage:     jetstream.FileStorage,
		Duplicates:  dupWindow,
		AllowDirect: true,
	})
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		c.stream, err = js.Stream(ctx, c.streamName())
	}
	if err != nil {
		return fmt.Errorf("cluster: stream %s: %w", c.streamName(), err)
	}
	c.snaps, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: c.bucket("snaps"), Description: "partition snapshots"})
	if errors.Is(err, jetstream.ErrBucketExists) {
		c.snaps, err = js.ObjectStore(ctx, c.bucket("snaps"))
	}
	if err != nil {
		return fmt.Errorf("cluster: object store %s: %w", c.bucket("snaps"), err)
	}
	return nil
}

// bind opens what Join made, for a reader.
func (c *conn) bind(ctx context.Context) error {
	var err error
	for _, b := range []struct {
		kv   *jetstream.KeyValue
		name string
	}{{&c.state, "state"}, {&c.members, "members"}, {&c.leases, "leases"}} {
		if *b.kv, err = c.js.KeyValue(ctx, c.bucket(b.name)); err != nil {
			if errors.Is(err, jetstream.ErrBucketNotFound) {
				return fmt.Errorf("cluster.name: no crawl %q on %s", c.cfg.Name, c.cfg.Redacted())
			}
			return fmt.Errorf("cluster: bucket %s: %w", c.bucket(b.name), err)
		}
	}
	if c.stream, err = c.js.Stream(ctx, c.streamName()); err != nil {
		return fmt.Errorf("cluster: stream %s: %w", c.streamName(), err)
	}
	return nil
}

// checkMeta records the crawl's partitions and lease the first time, and
// refuses a worker configured otherwise: a host's partition and the
// buckets' TTL depend on them.
func (c *conn) checkMeta(ctx context.Context) error {
	want := crawlMeta{Partitions: c.cfg.Partitions, Lease: c.cfg.Lease}
	b, _ := json.Marshal(want)
	_, err := c.state.Create(ctx, "crawl", b)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("cluster: record the crawl's settings: %w", err)
	}
	e, err := c.state.Get(ctx, "crawl")
	if err != nil {
		return fmt.Errorf("cluster: read the crawl's settings: %w", err)
	}
	var got crawlMeta
	if err := json.Unmarshal(e.Value(), &got); err != nil {
		return fmt.Errorf("cluster: the crawl's settings: %w", err)
	}
	var ps []Problem
	if got.Partitions != want.Partitions {
		ps = append(ps, Problem{"cluster.partitions", fmt.Sprintf("crawl %q was created with %d, got %d", c.cfg.Name, got.Partitions, want.Partitions)})
	}
	if got.Lease != want.Lease {
		ps = append(ps, Problem{"cluster.lease", fmt.Sprintf("crawl %q was created with %v, got %v", c.cfg.Name, got.Lease, want.Lease)})
	}
	if ps != nil {
		return &ConfigError{Problems: ps}
	}
	return nil
}

// entries returns the live entries of kv by key.
func entries(ctx context.Context, kv jetstream.KeyValue) (map[string]jetstream.KeyValueEntry, error) {
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()
	out := map[string]jetstream.KeyValueEntry{}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("watch ended")
			}
			if e == nil {
				return out, nil
			}
			out[e.Key()] = e
		}
	}
}

// wrongLastSeq reports whether err is JetStream's refusal of a write whose
// expected last sequence (or revision) is not the subject's.
func wrongLastSeq(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) &&
		(api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
