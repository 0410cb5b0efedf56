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

// patience bounds every wait of the package's tests for what the members'
// loops, the server's timers or a round trip bring about: long enough
// that only something stuck exceeds it, never a busy machine or the race
// detector (a turn is a quarter of the tests' two-second lease).
const patience = 2 * time.Minute

// join makes a member that the test closes (or stops) in the end.
func join(t testing.TB, cfg Config, opts Options) *Member {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	m, err := Join(ctx, cfg, quietLog(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close %s: %v", m.Worker(), err)
		}
	})
	return m
}

// waitFor polls cond until it holds, failing the test after patience:
// the server's timers (TTL expiry) are real time, and a test waits for
// what they bring about, not for a time.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", patience, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}
