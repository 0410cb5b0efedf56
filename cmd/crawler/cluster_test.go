package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/politecrawl/crawler/frontier/cluster/clustertest"

	"github.com/politecrawl/crawler/frontier/cluster"
)

// startNATS runs a NATS server for the test (see clustertest).
func startNATS(t *testing.T, jetStream bool) *server.Server { return clustertest.Server(t, jetStream) }

// clusterYAML is a workers' config: seeds, which status does not need,
// are left out.
func clusterYAML(t *testing.T, natsURL, name string) string {
	t.Helper()
	return writeFile(t, "c.yaml", fmt.Sprintf("cluster:\n  nats: %s\n  name: %s\n  partitions: 8\n  lease: 3s\n", natsURL, name))
}

// A worker that has joined and reported its load is listed with the
// partitions it holds, in the table and in the JSON.
func TestClusterStatus(t *testing.T) {
	srv := startNATS(t, true)
	cfg := cluster.Config{NATS: srv.ClientURL(), Name: "shop", Worker: "w1", Partitions: 8, Lease: 3 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	m, err := cluster.Join(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	m.Report(cluster.Load{Queued: 7, InFlight: 1, Done: 3})
	path := clusterYAML(t, srv.ClientURL(), "shop")

	// The member claims its partitions at its first turn, an eighth of a
	// lease after Join, and heartbeats its load at once: both are the
	// server's real time.
	var out, stderr string
	var code int
	deadline := time.Now().Add(patience)
	for {
		out, stderr, code = runCmd(t, "", "cluster", "status", "-c", path)
		if code == 0 && strings.Contains(out, "0-7") && !strings.Contains(out, "not held") && strings.Contains(out, "  7  ") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "crawl shop: 8 partitions, 1 workers") {
		t.Fatalf("status:\n%s", out)
	}
	worker := strings.Fields(lines[2])
	if want := []string{"w1", "8", "7", "1", "3"}; len(worker) != 7 || strings.Join(worker[:5], " ") != strings.Join(want, " ") || worker[6] != "0-7" {
		t.Errorf("worker line %q, want w1 holding 0-7 with 8 parts, 7 queued, 1 in flight, 3 done\n%s", lines[2], out)
	}
	if total := strings.Fields(lines[3]); strings.Join(total, " ") != "total 8 7 3" {
		t.Errorf("total line %q\n%s", lines[3], out)
	}
	if strings.Contains(out, "not held") {
		t.Errorf("every partition is held:\n%s", out)
	}

	out, stderr, code = runCmd(t, "", "cluster", "status", "--json", "-c", path)
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("--json: exit %d, want one line:\n%s%s", code, out, stderr)
	}
	var got statusJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "shop" || got.Partitions != 8 || len(got.Workers) != 1 || got.Queued != 7 || got.Done != 3 ||
		len(got.Unheld) != 0 || got.Unheld == nil {
		t.Errorf("--json: %+v", got)
	}
	if w := got.Workers[0]; w.Worker != "w1" || len(w.Partitions) != 8 || w.Load != (cluster.Load{Queued: 7, InFlight: 1, Done: 3}) || w.Seen.IsZero() {
		t.Errorf("--json worker: %+v", w)
	}
	for _, key := range []string{`"in_flight":1`, `"pages_taken":0`, `"unheld":[]`} {
		if !strings.Contains(out, key) {
			t.Errorf("--json lacks %s:\n%s", key, out)
		}
	}
}

// What can go wrong between the command and the server is a runtime
// failure (exit 1) that names the key to look at.
func TestClusterStatusServerErrors(t *testing.T) {
	// A port nothing listens on: one just let go of.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "nats://" + l.Addr().String()
	l.Close()
	plain := startNATS(t, false)
	js := startNATS(t, true)

	for _, tt := range []struct {
		name, url, crawl string
		want             []string
	}{
		{"unreachable", closed, "crawl", []string{"cluster.nats: connect to " + closed}},
		{"no JetStream", plain.ClientURL(), "crawl", []string{"cluster.nats: " + plain.ClientURL(), "no JetStream", "-js"}},
		{"no such crawl", js.ClientURL(), "nosuch", []string{`cluster.name: no crawl "nosuch" on ` + js.ClientURL()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := runCmd(t, "", "cluster", "status", "-c", clusterYAML(t, tt.url, tt.crawl))
			if code != 1 || out != "" {
				t.Errorf("exit %d, want 1; stdout: %q", code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

// Bad usage and configs it cannot use exit 2, before any connection.
func TestClusterStatusUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"cluster"}, "give a subcommand"},
		{"unknown subcommand", []string{"cluster", "stats"}, `unknown subcommand "stats"`},
		{"no config", []string{"cluster", "status"}, "-c FILE"},
		{"argument", []string{"cluster", "status", "-c", clusterYAML(t, "nats://127.0.0.1:4222", "a"), "extra"}, "takes no arguments"},
		{"no cluster block", []string{"cluster", "status", "-c", writeFile(t, "one.yaml", "seeds: [https://example.com/]\n")}, "cluster.nats is not set"},
		{"bad cluster block", []string{"cluster", "status", "-c", writeFile(t, "bad.yaml", "cluster:\n  nats: nats://127.0.0.1:4222\n  lease: 1s\n  partitions: 0\n")},
			"bad.yaml:3: cluster.lease: must be ≥ 3s, got 1s"},
		{"unknown key", []string{"cluster", "status", "-c", writeFile(t, "unknown.yaml", "cluster:\n  nats: nats://127.0.0.1:4222\n  replicas: 3\n")},
			"unknown.yaml:3: cluster.replicas: unknown key"},
		{"missing file", []string{"cluster", "status", "-c", "/nonexistent/c.yaml"}, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCmd(t, "", tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want 2 and %q in: %s", code, tt.want, stderr)
			}
		})
	}
	// Other keys are not status's business: a value crawl would refuse,
	// and no seeds, do not stop it (it goes on to connect, and fails there).
	path := writeFile(t, "other.yaml", "politeness:\n  delay: -1s\ncluster:\n  nats: nats://127.0.0.1:1\n")
	if _, stderr, code := runCmd(t, "", "cluster", "status", "-c", path); code != 1 || !strings.Contains(stderr, "cluster.nats: connect") {
		t.Errorf("a config whose other keys crawl would refuse: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"help", "cluster"}, {"cluster", "--help"}, {"cluster", "status", "-h"}} {
		if out, _, code := runCmd(t, "", args...); code != 0 || !strings.Contains(out, "Usage: crawler cluster status -c FILE [--json]") {
			t.Errorf("%q: exit %d:\n%s", args, code, out)
		}
	}
}

// A crawl whose cluster block names a server it cannot use fails at once
// (exit 1) with the key to look at, and sums up no run, since none began.
func TestCrawlClusterUnreachable(t *testing.T) {
	plain := startNATS(t, false)
	cfg := clusterYAML(t, plain.ClientURL(), "shop")
	_, stderr, code := runCmd(t, "", "crawl", "-c", cfg, "--state-dir", t.TempDir(), "http://127.0.0.1:1/")
	if code != 1 || !strings.Contains(stderr, "cluster.nats: "+plain.ClientURL()) || !strings.Contains(stderr, "no JetStream") {
		t.Errorf("exit %d, stderr %q; want 1 and cluster.nats named", code, stderr)
	}
	if strings.Contains(stderr, "crawled 0 URLs") {
		t.Errorf("a crawl that never began is summed up:\n%s", stderr)
	}
}
