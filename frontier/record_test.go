package frontier

import (
	"bytes"
	"math"
	"testing"
	"time"
)

func TestRecordRoundTrip(t *testing.T) {
	origin := "https://example.com"
	for _, r := range []record{
		{},
		{visited: true, kind: KindSitemap, via: ViaRedirect, inSitemap: true, delayed: true, prio: prioScale,
			depth: 7, seq: 1 << 40, due: math.MaxInt64, attempts: 3,
			request: "https://example.com:443/a%7e", referrer: "https://example.com/from", lastmod: "2024-01-02", linkDepth: 12, requisite: true},
		{linkDepth: -1},
		{via: ViaSeed, referrer: "http://other.test/x", lastmod: "x"},
		{referrer: origin}, // no path: kept whole
	} {
		b := appendRecord(nil, &r, origin)
		got, err := decodeRecord(b, origin)
		if err != nil || got != r {
			t.Errorf("round trip of %+v: %+v, %v", r, got, err)
		}
		if ld := recordLinkDepth(b); ld != got.linkDepth {
			t.Errorf("recordLinkDepth of %+v = %d; want %d", r, ld, got.linkDepth)
		}
	}
	h := hostRecord{origin: origin, counts: counts{1, 2, 3, 1}, wait: 5, parked: true, parkReason: "robots", logPos: 9, flushedTo: 4}
	if got, err := decodeHostRecord(appendHostRecord(nil, &h)); err != nil || got != h {
		t.Errorf("host round trip: %+v, %v", got, err)
	}
	entry := appendLogEntry(appendLogEntry(nil, 1, counts{1, -1, 0, 0}, 0), 1<<31, counts{-5, 0, 5, 2}, 7)
	var ids []uint32
	err := decodeLogEntry(entry, func(id uint32, c counts, flushedTo uint64) { ids = append(ids, id) })
	if err != nil || len(ids) != 2 || ids[1] != 1<<31 {
		t.Errorf("log entry: %v, %v", ids, err)
	}
}

func TestQuantAndTime(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		want uint16
	}{{0, 5000}, {0.5, 5000}, {-1, 0}, {1, 10000}, {7, 10000}, {0.12345, 1235}, {math.NaN(), 5000}} {
		if got := quantPriority(tt.p); got != tt.want {
			t.Errorf("quantPriority(%v) = %d, want %d", tt.p, got, tt.want)
		}
	}
	for _, tt := range []struct {
		t    time.Time
		want int64
	}{
		{time.Time{}, 0},
		{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxInt64},
		{time.Unix(0, 42), 42},
	} {
		if got := timeNanos(tt.t); got != tt.want {
			t.Errorf("timeNanos(%v) = %d, want %d", tt.t, got, tt.want)
		}
	}
}

// FuzzDecode feeds arbitrary bytes, as a damaged database would, to the
// decoders of what the frontier stores: they must fail cleanly, and what
// they accept must encode back to the same bytes.
func FuzzDecode(f *testing.F) {
	r := record{visited: true, delayed: true, seq: 9, due: 12, referrer: "https://h/x", lastmod: "2024"}
	f.Add(appendRecord(nil, &r, "https://h"))
	h := hostRecord{origin: "https://h", counts: counts{1, 2, 3, 4}, parked: true, parkReason: "r"}
	f.Add(appendHostRecord(nil, &h))
	f.Add(appendLogEntry(nil, 3, counts{1, -1, 1, 0}, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := decodeRecord(b, "https://h"); err == nil {
			if r.referrer != "" && len(b) > 1 && b[1]&flagRefSuffix != 0 && !bytes.HasPrefix([]byte(r.referrer), []byte("https://h")) {
				t.Fatalf("referrer %q lost its origin", r.referrer)
			}
			if r2, err := decodeRecord(appendRecord(nil, &r, "https://h"), "https://h"); err != nil || r2 != r {
				t.Fatalf("record %+v does not survive a round trip: %+v, %v", r, r2, err)
			}
			if ld := recordLinkDepth(b); ld != r.linkDepth {
				t.Fatalf("recordLinkDepth = %d of a record whose link depth is %d", ld, r.linkDepth)
			}
		}
		_ = recordLinkDepth(b)
		if h, err := decodeHostRecord(b); err == nil {
			if h2, err := decodeHostRecord(appendHostRecord(nil, &h)); err != nil || h2 != h {
				t.Fatalf("host record %+v does not survive a round trip: %+v, %v", h, h2, err)
			}
		}
		_ = decodeLogEntry(b, func(uint32, counts, uint64) {})
		_, _, _ = markOf(b)
		_, _ = queueKeySeq(b)
	})
}
