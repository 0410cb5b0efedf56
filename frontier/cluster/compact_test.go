package cluster

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// TestCompact: a compaction folds the snapshot before it and the entries
// up to the sequence given, leaves later ones in the stream, and a new
// owner that restores it and replays from it rebuilds the same facts.
func TestCompact(t *testing.T) {
	const n = 1
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", n), Options{})
	waitFor(t, "a to hold the partition", func() bool { return balanced(n, a) })
	o := originIn(t, 0, n)
	deep := item(t, o, "/a")
	deep.Depth, deep.LinkDepth = 3, frontier.NoLinkDepth
	near := deep
	near.Depth, near.LinkDepth, near.InSitemap = 1, 1, true
	revisit := time.Unix(1800000000, 0).UTC()
	for _, e := range []Entry{
		{Found: []frontier.Item{deep, item(t, o, "/b"), item(t, o, "/c")}},
		{Found: []frontier.Item{near}, Done: []Done{{Key: o + "/b", RevisitAt: revisit}}},
		{Waits: []HostWait{{Origin: o, Until: revisit}}},
	} {
		if _, err := a.Append(ctx, 0, e); err != nil {
			t.Fatal(err)
		}
	}
	_, through := replayAll(t, a, 0, 0)
	if urls, err := a.Compact(ctx, 0, through); err != nil || urls != 3 {
		t.Fatalf("first Compact = %d, %v; want 3 URLs", urls, err)
	}
	// More after the first compaction: /c done, a routed URL; then one
	// routed after the sequence the second compaction is given.
	if _, err := a.Append(ctx, 0, Entry{Done: []Done{{Key: o + "/c"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Route(ctx, []frontier.Item{item(t, o, "/d")}); err != nil {
		t.Fatal(err)
	}
	_, through = replayAll(t, a, 0, 0)
	later := item(t, o, "/later")
	if _, err := a.Route(ctx, []frontier.Item{later}); err != nil {
		t.Fatal(err)
	}
	if urls, err := a.Compact(ctx, 0, through); err != nil || urls != 4 {
		t.Fatalf("second Compact = %d, %v; want 4 URLs", urls, err)
	}

	var restored []Entry
	seq, err := a.Restore(ctx, 0, func(r io.Reader) error {
		return ReadSnapshot(r, func(e Entry) error { restored = append(restored, e); return nil })
	})
	if err != nil || seq != through {
		t.Fatalf("Restore = %d, %v; want %d", seq, err, through)
	}
	merged := deep
	merged.Depth, merged.LinkDepth, merged.InSitemap = 1, 1, true
	want := []Entry{
		{Found: []frontier.Item{merged, item(t, o, "/d")}},
		{Done: []Done{{Key: o + "/b", RevisitAt: revisit}, {Key: o + "/c"}}, Waits: []HostWait{{Origin: o, Until: revisit}}},
	}
	if !reflect.DeepEqual(restored, want) {
		t.Errorf("snapshot:\n got %+v\nwant %+v", restored, want)
	}
	if rest, _ := replayAll(t, a, 0, seq); !reflect.DeepEqual(rest, []Entry{{Found: []frontier.Item{later}}}) {
		t.Errorf("the stream after the snapshot holds %+v; want only the URL routed after it", rest)
	}
}

// TestSnapshotOfLongURLs: a snapshot of URLs as long as the config allows
// cuts its lines by size, so that ReadSnapshot takes every one back (by
// count alone, 500 such URLs made a line over its limit).
func TestSnapshotOfLongURLs(t *testing.T) {
	f := newFold()
	long := strings.Repeat("x", 16<<10)
	var e Entry
	for i := range 600 {
		u := fmt.Sprintf("http://h.test/%d/%s", i, long) // as scope.max_url_length allows, past frontier's default
		e.Found = append(e.Found, frontier.Item{URL: frontier.URL{Request: u, Key: u, Origin: "http://h.test"}, Referrer: u})
	}
	if err := f.add(e); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.write(&buf); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := ReadSnapshot(&buf, func(e Entry) error { n += len(e.Found); return nil }); err != nil || n != 600 {
		t.Fatalf("ReadSnapshot = %d URLs, %v; want 600", n, err)
	}
}
