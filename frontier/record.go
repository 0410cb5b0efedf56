package frontier

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"time"
)

// The frontier's buckets, in a database it may share with other packages.
var (
	bucketURLs  = []byte("frontier.urls")  // URL key → record, and queue key → the URL key without its hostID (below)
	bucketInbox = []byte("frontier.inbox") // sequence → URLs staged by one transaction (inbox.go)
	bucketHosts = []byte("frontier.hosts") // hostID → host record
	bucketLog   = []byte("frontier.log")   // sequence → the changes of one transaction to hosts' counts
	bucketMarks = []byte("frontier.marks") // sequence → queue key of an entry done (marks.go)
	bucketMeta  = []byte("frontier.meta")  // "version" → schemaVersion
)

var keyVersion = []byte("version")

// schemaVersion 3 has the inbox: a host's ready count includes URLs that
// are only there. Version 2 kept the queue in the urls bucket without an
// inbox; version 1 had the queue in a bucket of its own.
const schemaVersion = 3

// The urls bucket holds, for each host, its queue and its URLs' records,
// all keyed by the hostID first. A URL key is the hostID and the URL's path
// and query, which starts with '/' or '?'. A queue key has a class byte
// below those after the hostID, so that a host's queue is one contiguous
// range, just before the host's records:
//
//	hostID(4) ‖ 0x00 ‖ seq(8)                       done
//	hostID(4) ‖ 0x01 ‖ 10000-priority(2) ‖ seq(8)   undelayed: priority, then FIFO
//	hostID(4) ‖ 0x02 ‖ due(8, Unix ns)   ‖ seq(8)   delayed: by due time
//	hostID(4) ‖ path?query [‖ 0x00]                 a URL's record
//
// Sharing one bucket, a new URL's record and queue entry often land on the
// same page, and the two share one tree's branch pages, so that adding a
// URL writes fewer pages than with a bucket each (BenchmarkFrontier at 1M
// URLs: 0.26 pages per URL added rather than 0.38).
//
// Done moves a URL's entry to the done class rather than deleting it: the
// bucket never shrinks, so the pages a transaction frees are reused at
// once. (Deleted entries would leave bbolt a freelist as long as the queue
// was, which it sorts and writes out on every commit.) The done class sorts
// just before the undelayed one, so that, URLs being done roughly in the
// order they were queued, the entry Done removes and the one it adds are
// usually on the same page.
const (
	classDone    = 0
	classReady   = 1
	classDelayed = 2

	readyKeyLen   = 4 + 1 + 2 + 8
	delayedKeyLen = 4 + 1 + 8 + 8
	doneKeyLen    = 4 + 1 + 8
	prioScale     = 10000
)

// state is a URL's state. It is not stored as such: a URL is queued or
// scheduled while its record's queue entry exists, and done once Done
// moved the entry to the done class, so that Done writes no record. A
// leased URL is queued on disk.
type state uint8

const (
	stateQueued    state = iota // in the queue, never done
	stateDone                   // done, not in the queue
	stateScheduled              // done before, and in the queue again (a revisit)
)

// record is the value of a URL in the urls bucket.
type record struct {
	visited   bool // done at least once: queued again, it is a revisit
	kind      Kind
	via       Via
	inSitemap bool
	delayed   bool   // queued (or last queued) in the delayed class, at due
	prio      uint16 // 0…prioScale
	depth     uint64
	seq       uint64 // FIFO order, and the URL's number in the queue
	due       int64  // Unix ns, ≥ 0, when delayed
	attempts  uint64
	request   string // "" when the request URL is the key
	referrer  string
	lastmod   string
	linkDepth int64 // -1: no chain of links from a seed is known to reach it
	requisite bool  // a page's requisite (Item.Requisite)
}

// state returns the state of a record, inQueue telling whether its queue
// entry exists.
func (r *record) state(inQueue bool) state {
	switch {
	case !inQueue:
		return stateDone
	case r.visited:
		return stateScheduled
	}
	return stateQueued
}

// Flags of the first byte of an encoded record.
const (
	flagVisited = 1 << iota
	flagSitemap
	flagInSitemap
	flagDelayed
	flagRequest
	flagReferrer
	flagLastmod
)

// Flags of the second byte, above the Via's 2 bits.
const (
	flagRefSuffix = 1 << 2 // the referrer is stored without the URL's origin
	flagLinkDepth = 1 << 3 // a link depth follows the rest
	flagRequisite = 1 << 4 // a page's requisite (Item.Requisite)
)

var errCorrupt = errors.New("frontier: corrupt record")

// appendRecord appends the encoding of r to b. origin is the URL's origin,
// to store a same-origin referrer without it.
func appendRecord(b []byte, r *record, origin string) []byte {
	var f0 byte
	if r.visited {
		f0 |= flagVisited
	}
	if r.kind == KindSitemap {
		f0 |= flagSitemap
	}
	if r.inSitemap {
		f0 |= flagInSitemap
	}
	if r.delayed {
		f0 |= flagDelayed
	}
	if r.request != "" {
		f0 |= flagRequest
	}
	if r.referrer != "" {
		f0 |= flagReferrer
	}
	if r.lastmod != "" {
		f0 |= flagLastmod
	}
	ref := r.referrer
	f1 := byte(r.via) & 3
	if len(ref) > len(origin) && strings.HasPrefix(ref, origin) && ref[len(origin)] == '/' {
		ref = ref[len(origin):]
		f1 |= flagRefSuffix
	}
	if r.linkDepth >= 0 {
		f1 |= flagLinkDepth
	}
	if r.requisite {
		f1 |= flagRequisite
	}
	b = append(b, f0, f1)
	b = binary.AppendUvarint(b, r.depth)
	b = binary.AppendUvarint(b, uint64(r.prio))
	b = binary.AppendUvarint(b, r.seq)
	if r.delayed {
		b = binary.AppendUvarint(b, uint64(r.due))
	}
	b = binary.AppendUvarint(b, r.attempts)
	if r.request != "" {
		b = appendString(b, r.request)
	}
	if r.referrer != "" {
		b = appendString(b, ref)
	}
	if r.lastmod != "" {
		b = appendString(b, r.lastmod)
	}
	if r.linkDepth >= 0 {
		b = binary.AppendUvarint(b, uint64(r.linkDepth))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeRecord decodes a record; the strings are copies, so b may be memory
// of a transaction that ends.
func decodeRecord(b []byte, origin string) (record, error) {
	var r record
	if len(b) < 2 {
		return r, errCorrupt
	}
	f0, f1 := b[0], b[1]
	if f0&0x80 != 0 || f1>>5 != 0 {
		return r, errCorrupt
	}
	r.visited = f0&flagVisited != 0
	if f0&flagSitemap != 0 {
		r.kind = KindSitemap
	}
	r.inSitemap = f0&flagInSitemap != 0
	r.delayed = f0&flagDelayed != 0
	r.via = Via(f1 & 3)
	r.requisite = f1&flagRequisite != 0
	d := decoder{b: b[2:]}
	r.depth = d.uvarint()
	prio := d.uvarint()
	r.seq = d.uvarint()
	if r.delayed {
		due := d.uvarint()
		if due > math.MaxInt64 {
			d.bad = true
		}
		r.due = int64(due)
	}
	r.attempts = d.uvarint()
	if f0&flagRequest != 0 {
		r.request = d.string()
	}
	if f0&flagReferrer != 0 {
		r.referrer = d.string()
		if f1&flagRefSuffix != 0 {
			r.referrer = origin + r.referrer
		}
	}
	if f0&flagLastmod != 0 {
		r.lastmod = d.string()
	}
	r.linkDepth = -1
	if f1&flagLinkDepth != 0 {
		r.linkDepth = int64(min(d.uvarint(), 1<<31))
	}
	if d.bad || len(d.b) != 0 || prio > prioScale {
		return record{}, errCorrupt
	}
	r.prio = uint16(prio)
	return r, nil
}

// recordLinkDepth is the link depth of an encoded record, read without
// decoding (or copying) the rest: -1 when it has none, or when the record
// is corrupt (which decodeRecord then says).
func recordLinkDepth(b []byte) int64 {
	if len(b) < 2 || b[1]&flagLinkDepth == 0 {
		return -1
	}
	f0 := b[0]
	d := decoder{b: b[2:]}
	d.uvarint() // depth
	d.uvarint() // priority
	d.uvarint() // seq
	if f0&flagDelayed != 0 {
		d.uvarint()
	}
	d.uvarint() // attempts
	for _, flag := range [...]byte{flagRequest, flagReferrer, flagLastmod} {
		if f0&flag != 0 {
			d.bytes()
		}
	}
	ld := d.uvarint()
	if d.bad {
		return -1
	}
	return int64(min(ld, 1<<31))
}

// decoder reads varints and strings, remembering the first failure.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes()) }

// bytes returns the next string of d.b, not a copy.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad = true
		d.b = nil
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

// Linked pages' places in their host's queue: an item at the
// DefaultPriority that a chain of links reaches (LinkDepth ≥ 0) is queued
// one step of the stored scale below it per link hop, down to linkBand
// hops, so that a host's linked pages are handed out breadth first, by
// link depth, each hop first-in-first-out; deeper ones share the last
// step. Pages a sitemap lists and no link reaches are queued below the
// band (the engine's listedPriority), so they come after.
const (
	linkedTop = prioScale / 2 // DefaultPriority on the stored scale
	linkBand  = 99            // link hops told apart in the queue
)

// linkedPrio is the stored priority of an item of stored priority p and
// link depth ld: p itself unless p is in the linked pages' band and ld
// is known (see linkBand).
func linkedPrio(p uint16, ld int64) uint16 {
	if ld < 0 || p > linkedTop || p < linkedTop-linkBand {
		return p
	}
	return linkedTop - uint16(min(ld, linkBand))
}

// quantPriority maps an Item's Priority to the stored 0…prioScale.
func quantPriority(p float64) uint16 {
	switch {
	case p == 0 || math.IsNaN(p):
		p = DefaultPriority
	case p < 0:
		p = 0
	case p > 1:
		p = 1
	}
	return uint16(math.Round(p * prioScale))
}

// timeNanos maps a time to the stored Unix nanoseconds: zero, and anything
// before 1970, to 0.
func timeNanos(t time.Time) int64 {
	switch {
	case t.IsZero() || t.Before(time.Unix(0, 0)):
		return 0
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// nanosTime is the inverse of timeNanos: 0 is the zero time.
func nanosTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// urlKey is the key of a URL in the urls bucket.
func urlKey(b []byte, id uint32, pathQuery string, kind Kind) []byte {
	b = binary.BigEndian.AppendUint32(b, id)
	b = append(b, pathQuery...)
	if kind == KindSitemap {
		b = append(b, 0)
	}
	return b
}

// queueKey is the key of a record's queue entry in the urls bucket.
func queueKey(b []byte, id uint32, r *record) []byte {
	b = binary.BigEndian.AppendUint32(b, id)
	if r.delayed {
		b = append(b, classDelayed)
		b = binary.BigEndian.AppendUint64(b, uint64(r.due))
	} else {
		b = append(b, classReady)
		b = binary.BigEndian.AppendUint16(b, prioScale-r.prio)
	}
	return binary.BigEndian.AppendUint64(b, r.seq)
}

// doneKey is the key of a done URL's queue entry in the urls bucket.
func doneKey(b []byte, id uint32, seq uint64) []byte {
	b = binary.BigEndian.AppendUint32(b, id)
	b = append(b, classDone)
	return binary.BigEndian.AppendUint64(b, seq)
}

// queueKeySeq returns the seq of a queue key, and whether the key is well
// formed.
func queueKeySeq(k []byte) (uint64, bool) {
	switch {
	case len(k) == readyKeyLen && k[4] == classReady,
		len(k) == delayedKeyLen && k[4] == classDelayed,
		len(k) == doneKeyLen && k[4] == classDone:
		return binary.BigEndian.Uint64(k[len(k)-8:]), true
	}
	return 0, false
}

// hostRecord is the persisted part of a host. Its counts are written to
// the hosts bucket only now and then: in between, each transaction appends
// its changes to the counts to the log bucket (one sequential write instead
// of one per host), and opening replays the log entries after logPos.
type hostRecord struct {
	origin     string
	counts            // of its URLs
	wait       int64  // Unix ns of the persisted wait, 0 for none
	parked     bool   // parked, for parkReason
	parkReason string //
	logPos     uint64 // the last log entry the counts include
	flushedTo  uint64 // the marks older than this chunk are flushed (marks.go)
}

// counts counts a host's URLs by their place in the queue.
type counts struct {
	ready     int64 // queue entries in the undelayed class
	delayed   int64 // queue entries in the delayed class, scheduled revisits included
	done      int64 // URLs done, scheduled ones included
	scheduled int64 // URLs done and queued again for a revisit
}

func (c *counts) add(o counts, sign int64) {
	c.ready += sign * o.ready
	c.delayed += sign * o.delayed
	c.done += sign * o.done
	c.scheduled += sign * o.scheduled
}

func appendHostRecord(b []byte, h *hostRecord) []byte {
	b = appendString(b, h.origin)
	for _, n := range [...]int64{h.ready, h.delayed, h.done, h.scheduled, h.wait} {
		b = binary.AppendUvarint(b, uint64(max(n, 0)))
	}
	b = binary.AppendUvarint(b, h.logPos)
	b = binary.AppendUvarint(b, h.flushedTo)
	if h.parked {
		b = append(b, 1)
		return appendString(b, h.parkReason)
	}
	return append(b, 0)
}

func decodeHostRecord(b []byte) (hostRecord, error) {
	var h hostRecord
	d := decoder{b: b}
	h.origin = d.string()
	for _, p := range [...]*int64{&h.ready, &h.delayed, &h.done, &h.scheduled, &h.wait} {
		v := d.uvarint()
		if v > math.MaxInt64 {
			d.bad = true
		}
		*p = int64(v)
	}
	h.logPos = d.uvarint()
	h.flushedTo = d.uvarint()
	if !d.bad && len(d.b) > 0 {
		h.parked = d.b[0] == 1
		d.b = d.b[1:]
		if h.parked {
			h.parkReason = d.string()
		}
	} else {
		d.bad = true
	}
	if d.bad || len(d.b) != 0 || h.origin == "" {
		return hostRecord{}, errCorrupt
	}
	return h, nil
}

// A log entry is a list of (hostID, changes to its counts, its flushedTo).
func appendLogEntry(b []byte, id uint32, c counts, flushedTo uint64) []byte {
	b = binary.AppendUvarint(b, uint64(id))
	for _, n := range [...]int64{c.ready, c.delayed, c.done, c.scheduled} {
		b = binary.AppendVarint(b, n)
	}
	return binary.AppendUvarint(b, flushedTo)
}

// decodeLogEntry calls fn for each host of a log entry.
func decodeLogEntry(b []byte, fn func(id uint32, c counts, flushedTo uint64)) error {
	d := decoder{b: b}
	for len(d.b) > 0 && !d.bad {
		id := d.uvarint()
		var c counts
		for _, p := range [...]*int64{&c.ready, &c.delayed, &c.done, &c.scheduled} {
			v, n := binary.Varint(d.b)
			if n <= 0 {
				return errCorrupt
			}
			*p, d.b = v, d.b[n:]
		}
		flushedTo := d.uvarint()
		if d.bad || id > math.MaxUint32 {
			return errCorrupt
		}
		fn(uint32(id), c, flushedTo)
	}
	if d.bad {
		return errCorrupt
	}
	return nil
}
