package cluster

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/politecrawl/crawler/frontier/cluster/clustertest"
)

// startServer runs a NATS server for the test (see clustertest).
func startServer(t testing.TB, jetStream bool) *server.Server {
	return clustertest.Server(t, jetStream)
}

// startServerWith runs a NATS server with opts for the test.
func startServerWith(t testing.TB, opts *server.Options) *server.Server {
	return clustertest.ServerWith(t, opts)
}

// testConfig is a crawl of p partitions with a lease of two seconds.
func testConfig(url, worker string, p int) Config {
	return Config{NATS: url, Name: "t", Worker: worker, Partitions: p, Lease: 2 * time.Second, minLease: time.Second}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// join makes a member that the test closes (or stops) in the end.
func join(t testing.TB, cfg Config, opts Options) *Member {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := Join(ctx, cfg, quietLog(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close %s: %v", m.Worker(), err)
		}
	})
	return m
}

// waitFor polls cond until it holds, failing the test after timeout: the
// server's timers (TTL expiry) are real time.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
