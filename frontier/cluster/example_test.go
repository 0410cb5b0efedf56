package cluster_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/frontier/cluster"
)

func ExamplePartition() {
	u, _ := frontier.Canonicalize("https://Example.com:443/a", 0)
	fmt.Println(u.Origin, cluster.Partition(u.Origin, cluster.DefaultPartitions))
	// Output: https://example.com 32
}

// ExampleJoin shows a worker's life in a crawl: join, recover each
// partition gained, start requests only within the window, write what
// happened before acknowledging it, and leave.
func ExampleJoin() {
	ctx := context.Background()
	cfg := cluster.DefaultConfig()
	cfg.NATS = "nats://127.0.0.1:4222"
	changes := make(chan cluster.Change, 1024)
	m, err := cluster.Join(ctx, cfg, slog.Default(), cluster.Options{
		OnChange: func(c cluster.Change) { changes <- c }, // must not block
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // e.g. "cluster.nats: connect to nats://127.0.0.1:4222: nats: no servers available for connection"
		return
	}
	defer m.Close(ctx)

	for c := range changes {
		switch c.Kind {
		case cluster.Gained:
			if !c.Clean {
				// Its last owner died: its requests may still be in flight.
				// Start none in this partition for fetch.timeout.
			}
			seq, _ := m.Restore(ctx, c.Partition, func(r io.Reader) error { return nil /* load the frontier */ })
			through, _ := m.Replay(ctx, c.Partition, seq, func(seq uint64, e cluster.Entry) error {
				return nil // add e.Found, mark e.Done, set e.Waits
			})
			m.Applied(c.Partition, c.Tenure, through)
		case cluster.Handover:
			m.Release(c.Partition) // once its requests in flight are settled
		}
		if m.MayStart(c.Partition, time.Now()) {
			// fetch, then m.Append(ctx, c.Partition, cluster.Entry{Done: ...}) before frontier.Done
		}
	}
}
