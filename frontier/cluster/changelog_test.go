package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/politecrawl/crawler/frontier"
)

// originIn returns an origin of partition p among n.
func originIn(t *testing.T, p, n int) string {
	t.Helper()
	for i := range 10000 {
		o := fmt.Sprintf("http://h%d.test", i)
		if Partition(o, n) == p {
			return o
		}
	}
	t.Fatalf("no origin in partition %d of %d", p, n)
	return ""
}

func item(t *testing.T, origin, path string) frontier.Item {
	t.Helper()
	u, err := frontier.Canonicalize(origin+path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return frontier.Item{URL: u, Via: frontier.ViaLink, Depth: 2, Referrer: origin + "/", Priority: 0.7,
		NotBefore: time.Unix(1700000000, 5).UTC(), Lastmod: "2026-01-02"}
}

// replayAll returns the entries of partition p after after, and through.
func replayAll(t *testing.T, m *Member, p int, after uint64) ([]Entry, uint64) {
	t.Helper()
	var got []Entry
	var last uint64
	through, err := m.Replay(testContext(t), p, after, func(seq uint64, e Entry) error {
		if seq <= last {
			t.Errorf("sequence %d after %d", seq, last)
		}
		last = seq
		got = append(got, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, through
}

// TestSnapshotRestoreReplay: a new owner that restores the last snapshot
// and replays the stream from it sees exactly the entries written after
// the snapshot, log and routed alike, and the snapshot's purge left only
// those in the stream.
func TestSnapshotRestoreReplay(t *testing.T) {
	const n = 2
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", n), Options{})
	waitFor(t, "a to hold every partition", func() bool { return balanced(n, a) })
	origin := originIn(t, 0, n)
	before := []Entry{
		{Found: []frontier.Item{item(t, origin, "/a"), item(t, origin, "/b?x=1")}},
		{Done: []Done{{Key: origin + "/a", Kind: frontier.KindPage, RevisitAt: time.Unix(1800000000, 0).UTC()}}},
		{Waits: []HostWait{{Origin: origin, Until: time.Unix(1800000001, 0).UTC()}, {Origin: origin, Parked: true, Reason: "robots.txt unavailable"}}},
	}
	for _, e := range before {
		if _, err := a.Append(ctx, 0, e); err != nil {
			t.Fatal(err)
		}
	}
	routed := item(t, origin, "/routed")
	if _, err := a.Route(ctx, []frontier.Item{routed}); err != nil {
		t.Fatal(err)
	}
	got, through := replayAll(t, a, 0, 0)
	if want := append(before, Entry{Found: []frontier.Item{routed}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("replay before the snapshot:\n got %+v\nwant %+v", got, want)
	}
	if err := a.Snapshot(ctx, 0, through, strings.NewReader("state as of the snapshot")); err != nil {
		t.Fatal(err)
	}
	after := []Entry{
		{Done: []Done{{Key: origin + "/b?x=1", Kind: frontier.KindPage}}},
		{Found: []frontier.Item{item(t, origin, "/routed-later")}},
	}
	if _, err := a.Append(ctx, 0, after[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Route(ctx, after[1].Found); err != nil {
		t.Fatal(err)
	}
	if got, _ := replayAll(t, a, 0, 0); !reflect.DeepEqual(got, after) {
		t.Fatalf("the stream after the snapshot's purge holds %+v, want %+v", got, after)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	b := join(t, testConfig(s.ClientURL(), "b", n), Options{})
	waitFor(t, "b to hold every partition", func() bool { return balanced(n, b) })
	var state bytes.Buffer
	seq, err := b.Restore(ctx, 0, func(r io.Reader) error { _, err := io.Copy(&state, r); return err })
	if err != nil {
		t.Fatal(err)
	}
	if seq != through || state.String() != "state as of the snapshot" {
		t.Fatalf("Restore = %d, %q; want %d and the snapshot", seq, state.String(), through)
	}
	if got, _ := replayAll(t, b, 0, seq); !reflect.DeepEqual(got, after) {
		t.Fatalf("b replays %+v, want %+v", got, after)
	}
	if seq, err := b.Restore(ctx, 1, func(io.Reader) error { return errors.New("called") }); err != nil || seq != 0 {
		t.Fatalf("Restore of a partition never snapshotted = %d, %v; want 0, nil", seq, err)
	}
}

// TestFencedSnapshot: a worker whose partition was claimed by another
// cannot point the partition at a snapshot of its own, and does not purge.
func TestFencedSnapshot(t *testing.T) {
	t.Parallel() // it mostly waits for a lease to run out
	const n = 1
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", n), Options{})
	waitFor(t, "a to hold the partition", func() bool { return balanced(n, a) })
	origin := originIn(t, 0, n)
	if _, err := a.Append(ctx, 0, Entry{Found: []frontier.Item{item(t, origin, "/a")}}); err != nil {
		t.Fatal(err)
	}
	_, through := replayAll(t, a, 0, 0)
	a.stop() // a hangs; b takes over once the lease runs out
	b := join(t, testConfig(s.ClientURL(), "b", n), Options{})
	waitFor(t, "b to hold the partition", func() bool { return balanced(n, b) })
	if err := a.Snapshot(ctx, 0, through, strings.NewReader("stale")); !errors.Is(err, ErrFenced) {
		t.Fatalf("a's late Snapshot = %v, want ErrFenced", err)
	}
	if got, _ := replayAll(t, b, 0, 0); len(got) != 1 {
		t.Fatalf("b replays %d entries, want the one a wrote before it hung", len(got))
	}
	if seq, err := b.Restore(ctx, 0, func(io.Reader) error { return errors.New("called") }); err != nil || seq != 0 {
		t.Fatalf("b's Restore = %d, %v; want no snapshot", seq, err)
	}
}

// TestAppendLargeAndConcurrent: an entry larger than the server's
// max_payload is written in parts, found URLs first, and appends from many
// goroutines to one partition are all kept, each once.
func TestAppendLargeAndConcurrent(t *testing.T) {
	s := startServerWith(t, &server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		MaxPayload: 8 << 10,
	})
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", 1), Options{})
	waitFor(t, "a to hold the partition", func() bool { return balanced(1, a) })
	origin := originIn(t, 0, 1)
	big := Entry{Done: []Done{{Key: origin + "/"}}}
	for i := range 300 {
		big.Found = append(big.Found, item(t, origin, fmt.Sprintf("/found/%d", i)))
	}
	if _, err := a.Append(ctx, 0, big); err != nil {
		t.Fatal(err)
	}
	got, _ := replayAll(t, a, 0, 0)
	if len(got) < 2 {
		t.Fatalf("a large entry came back as %d entries, want several", len(got))
	}
	var found []frontier.Item
	for i, e := range got {
		found = append(found, e.Found...)
		if len(e.Done) > 0 && i != len(got)-1 {
			t.Errorf("entry %d of %d holds the done URL; it must come last", i, len(got))
		}
	}
	if !reflect.DeepEqual(found, big.Found) || !reflect.DeepEqual(got[len(got)-1].Done, big.Done) {
		t.Fatalf("the parts hold %d found URLs and %v, want %d and %v", len(found), got[len(got)-1].Done, len(big.Found), big.Done)
	}

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				if _, err := a.Append(ctx, 0, Entry{Done: []Done{{Key: fmt.Sprintf("%s/%d/%d", origin, g, i)}}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, _ = replayAll(t, a, 0, 0)
	seen := map[string]bool{}
	for _, e := range got {
		for _, d := range e.Done {
			if seen[d.Key] {
				t.Errorf("%s written twice", d.Key)
			}
			seen[d.Key] = true
		}
	}
	if len(seen) != 81 {
		t.Fatalf("%d done URLs in the log, want 81", len(seen))
	}
}
