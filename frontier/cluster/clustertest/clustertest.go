// Package clustertest runs a NATS server in the test's process, for the
// tests of a crawl shared by several workers (frontier/cluster, the engine,
// the command). Only _test.go files import it, so the crawler binary never
// links nats-server; the import rules (deps_test.go) hold it to that.
package clustertest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server runs a NATS server on a random port of 127.0.0.1 for the test,
// with JetStream (storing in the test's temporary directory) or without,
// and shuts it down when the test ends.
func Server(t testing.TB, jetStream bool) *server.Server {
	t.Helper()
	return ServerWith(t, &server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: jetStream, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true,
	})
}

// ServerWith runs a NATS server with opts for the test.
func ServerWith(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}
