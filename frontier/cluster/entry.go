package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// maxEntry bounds the size of an entry read back from the stream: the
// server's max_payload bounds what it stores (1 MiB by default), and a
// changed server setting should not let one message take a worker's memory.
const maxEntry = 8 << 20

// entryVersion is written in every entry; a reader refuses a later one.
const entryVersion = 1

// Entry is one fact about a partition's frontier that must outlive the
// worker holding it, as the changelog and routing carry it: URLs found
// (Found), URLs finished (Done), and host waits and parking that outlast a
// lease (Waits). One entry may hold several facts, as one settled request
// produces them; they are applied in that order.
type Entry struct {
	Found []frontier.Item
	Done  []Done
	Waits []HostWait

	// claim names the worker whose claim this entry marks: the fence a new
	// owner writes before anything else (see Member.fence); release, the
	// worker that gave the partition up with no request in flight. Replay
	// does not pass such marks on.
	claim, release string
}

// Done is a URL finished: its canonical key and kind, and when it is due
// again for a revisit (zero: never).
type Done struct {
	Key       string
	Kind      frontier.Kind
	RevisitAt time.Time
}

// HostWait is a host's persisted state: a wait until a time (a Retry-After,
// a long Crawl-delay) and its parking. A zero Until ends a wait.
type HostWait struct {
	Origin string
	Until  time.Time
	Parked bool
	Reason string // why it is parked
}

// empty reports whether e holds no fact.
func (e *Entry) empty() bool {
	return !e.facts() && e.claim == "" && e.release == ""
}

// facts reports whether e holds a fact for the frontier, not only a mark.
func (e *Entry) facts() bool {
	return len(e.Found) > 0 || len(e.Done) > 0 || len(e.Waits) > 0
}

// The wire form: JSON with short names and omitted zero values, so that a
// found link costs little more than its URL and origin; the key is written
// only when it differs from the request form.
type wireEntry struct {
	V       int        `json:"v"`
	Claim   string     `json:"claim,omitempty"`
	Release string     `json:"release,omitempty"`
	Found   []wireItem `json:"found,omitempty"`
	Done    []wireDone `json:"done,omitempty"`
	Waits   []wireWait `json:"waits,omitempty"`
}

type wireItem struct {
	Request   string  `json:"u"`
	Key       string  `json:"k,omitempty"` // omitted when it equals Request
	Origin    string  `json:"o"`
	Kind      uint8   `json:"t,omitempty"`
	Via       uint8   `json:"via,omitempty"`
	Depth     int     `json:"d,omitempty"`
	Referrer  string  `json:"ref,omitempty"`
	Priority  float64 `json:"pri,omitempty"`
	NotBefore int64   `json:"nb,omitempty"` // Unix nanoseconds
	Attempts  int     `json:"att,omitempty"`
	Lastmod   string  `json:"lm,omitempty"`
	InSitemap bool    `json:"sm,omitempty"`
	// LinkDepth is the item's LinkDepth plus one, so that the common
	// "no chain of links known" (frontier.NoLinkDepth) is left out.
	LinkDepth int  `json:"ld,omitempty"`
	Requisite bool `json:"rq,omitempty"`
}

type wireDone struct {
	Key       string `json:"k"`
	Kind      uint8  `json:"t,omitempty"`
	RevisitAt int64  `json:"at,omitempty"`
}

type wireWait struct {
	Origin string `json:"o"`
	Until  int64  `json:"until,omitempty"`
	Parked bool   `json:"parked,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// encode returns the wire form of e.
func (e *Entry) encode() ([]byte, error) {
	w := wireEntry{V: entryVersion, Claim: e.claim, Release: e.release}
	for _, it := range e.Found {
		wi := wireItem{
			Request: it.Request, Key: it.Key, Origin: it.Origin, Kind: uint8(it.Kind), Via: uint8(it.Via),
			Depth: it.Depth, Referrer: it.Referrer, Priority: it.Priority, NotBefore: nanos(it.NotBefore),
			Attempts: it.Attempts, Lastmod: it.Lastmod, InSitemap: it.InSitemap, LinkDepth: max(it.LinkDepth, frontier.NoLinkDepth) + 1,
			Requisite: it.Requisite,
		}
		if wi.Key == wi.Request {
			wi.Key = ""
		}
		w.Found = append(w.Found, wi)
	}
	for _, d := range e.Done {
		w.Done = append(w.Done, wireDone{Key: d.Key, Kind: uint8(d.Kind), RevisitAt: nanos(d.RevisitAt)})
	}
	for _, h := range e.Waits {
		w.Waits = append(w.Waits, wireWait{Origin: h.Origin, Until: nanos(h.Until), Parked: h.Parked, Reason: h.Reason})
	}
	return json.Marshal(&w)
}

var errEntry = errors.New("cluster: malformed entry")

// decodeEntry reads an entry's wire form. It checks the shape a frontier
// will rely on (every item's key starts with its origin), not more.
func decodeEntry(b []byte) (Entry, error) {
	if len(b) > maxEntry {
		return Entry{}, fmt.Errorf("%w: %d bytes", errEntry, len(b))
	}
	var w wireEntry
	if err := json.Unmarshal(b, &w); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", errEntry, err)
	}
	if w.V != entryVersion {
		return Entry{}, fmt.Errorf("%w: version %d, this worker reads %d", errEntry, w.V, entryVersion)
	}
	e := Entry{claim: w.Claim, release: w.Release}
	for i, wi := range w.Found {
		if wi.Key == "" {
			wi.Key = wi.Request
		}
		if wi.Origin == "" || len(wi.Key) <= len(wi.Origin) || wi.Key[:len(wi.Origin)] != wi.Origin {
			return Entry{}, fmt.Errorf("%w: item %d: key %q is not of origin %q", errEntry, i, wi.Key, wi.Origin)
		}
		e.Found = append(e.Found, frontier.Item{
			URL:  frontier.URL{Request: wi.Request, Key: wi.Key, Origin: wi.Origin},
			Kind: frontier.Kind(wi.Kind), Via: frontier.Via(wi.Via), Depth: wi.Depth, Referrer: wi.Referrer,
			Priority: wi.Priority, NotBefore: fromNanos(wi.NotBefore), Attempts: wi.Attempts,
			Lastmod: wi.Lastmod, InSitemap: wi.InSitemap, LinkDepth: max(wi.LinkDepth, 0) - 1,
			Requisite: wi.Requisite,
		})
	}
	for _, d := range w.Done {
		e.Done = append(e.Done, Done{Key: d.Key, Kind: frontier.Kind(d.Kind), RevisitAt: fromNanos(d.RevisitAt)})
	}
	for _, h := range w.Waits {
		e.Waits = append(e.Waits, HostWait{Origin: h.Origin, Until: fromNanos(h.Until), Parked: h.Parked, Reason: h.Reason})
	}
	return e, nil
}
