package cluster

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// Compact folds partition p's last snapshot and its entries up to stream
// sequence through into a new snapshot, so that the stream forgets them
// (Snapshot) and a new owner restores one object instead of replaying the
// partition's whole history. through must be a sequence up to which the
// caller has applied every entry of p (its last Replay's): routed URLs
// later than that stay in the stream for its next Replay. It returns how
// many URLs the snapshot holds, which callers use to space compactions
// (each costs a read of the partition's history since the last).
//
// The snapshot is the fold of the facts, in the form ReadSnapshot reads:
// each URL once, found (merged as frontier.Add merges a URL found again:
// the least depth and link depth, listed in a sitemap if any said so) or
// done (with its last revisit time); each host's last wait or parking.
func (m *Member) Compact(ctx context.Context, p int, through uint64) (int, error) {
	f := newFold()
	from, err := m.Restore(ctx, p, func(r io.Reader) error { return ReadSnapshot(r, f.add) })
	if err != nil {
		return 0, err
	}
	if from >= through {
		return f.size(), nil // nothing new to fold
	}
	_, err = m.Replay(ctx, p, from, func(seq uint64, e Entry) error {
		if seq <= through {
			return f.add(e)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	if err := f.write(&buf); err != nil {
		return 0, err
	}
	if err := m.Snapshot(ctx, p, through, &buf); err != nil {
		return 0, err
	}
	return f.size(), nil
}

// ReadSnapshot calls fn with each entry of a snapshot that Compact wrote,
// in order: the URLs found and not done, the URLs done, the hosts' waits.
func ReadSnapshot(r io.Reader, fn func(Entry) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEntry)
	for n := 1; sc.Scan(); n++ {
		e, err := decodeEntry(sc.Bytes())
		if err != nil {
			return fmt.Errorf("cluster: snapshot line %d: %w", n, err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("cluster: read snapshot: %w", err)
	}
	return nil
}

// snapshotChunk is how many facts a line of a snapshot holds.
const snapshotChunk = 500

// fold is the state a partition's entries add up to.
type fold struct {
	found map[urlKey]frontier.Item
	done  map[urlKey]time.Time // revisit time; zero for none
	waits map[string]HostWait
}

type urlKey struct {
	key  string
	kind frontier.Kind
}

func newFold() *fold {
	return &fold{found: map[urlKey]frontier.Item{}, done: map[urlKey]time.Time{}, waits: map[string]HostWait{}}
}

func (f *fold) size() int { return len(f.found) + len(f.done) }

// add applies e as a frontier would: Found, then Done, then Waits.
func (f *fold) add(e Entry) error {
	for _, it := range e.Found {
		k := urlKey{it.Key, it.Kind}
		if _, ok := f.done[k]; ok {
			continue
		}
		if was, ok := f.found[k]; ok {
			it = mergeFound(was, it)
		}
		f.found[k] = it
	}
	for _, d := range e.Done {
		k := urlKey{d.Key, d.Kind}
		delete(f.found, k)
		f.done[k] = d.RevisitAt
	}
	for _, w := range e.Waits {
		if was := f.waits[w.Origin]; was.Parked && !w.Parked {
			// Parking lasts: a wait written after it (a daemon's
			// rest) does not end it.
			w.Parked, w.Reason = true, was.Reason
		}
		f.waits[w.Origin] = w
	}
	return nil
}

// mergeFound is a URL found as was and found again as it: the first, with
// the least depth and link depth of the two, listed in a sitemap if either
// was.
func mergeFound(was, it frontier.Item) frontier.Item {
	was.Depth = min(was.Depth, it.Depth)
	if it.LinkDepth >= 0 && (was.LinkDepth < 0 || it.LinkDepth < was.LinkDepth) {
		was.LinkDepth = it.LinkDepth
	}
	if it.InSitemap && !was.InSitemap {
		was.InSitemap, was.Lastmod = true, it.Lastmod
	}
	return was
}

// write writes the fold as lines of entries, in a stable order: the URLs
// found, cut by size (URLs may be long) so that ReadSnapshot takes each
// line back; then the URLs done and the hosts' waits, snapshotChunk facts
// to a line.
func (f *fold) write(w io.Writer) error {
	line := func(b []byte) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}
	encoded := func(e *Entry) error {
		b, err := e.encode()
		if err != nil {
			return err
		}
		return line(b)
	}
	found := make([]frontier.Item, 0, len(f.found))
	for _, k := range slices.SortedFunc(maps.Keys(f.found), compareURLKeys) {
		found = append(found, f.found[k])
	}
	for len(found) > 0 {
		// At most snapshotChunk to a line, as the other facts: fitEntry
		// encodes all it is given before it cuts.
		b, n, err := fitEntry(found[:min(len(found), snapshotChunk)], maxEntry-1)
		if err != nil {
			return err
		}
		if err := line(b); err != nil {
			return err
		}
		found = found[n:]
	}
	var e Entry
	for _, k := range slices.SortedFunc(maps.Keys(f.done), compareURLKeys) {
		if e.Done = append(e.Done, Done{Key: k.key, Kind: k.kind, RevisitAt: f.done[k]}); len(e.Done) == snapshotChunk {
			if err := encoded(&e); err != nil {
				return err
			}
			e = Entry{}
		}
	}
	for _, o := range slices.Sorted(maps.Keys(f.waits)) {
		if len(e.Done)+len(e.Waits) == snapshotChunk {
			if err := encoded(&e); err != nil {
				return err
			}
			e = Entry{}
		}
		e.Waits = append(e.Waits, f.waits[o])
	}
	if e.facts() {
		return encoded(&e)
	}
	return nil
}

func compareURLKeys(a, b urlKey) int {
	return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.kind, b.kind))
}
