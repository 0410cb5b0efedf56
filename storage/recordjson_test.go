package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// wireForm is the contract's line of r in encoding/json's terms, which
// appendRecord writes by hand: r itself, or, when there was a response,
// r with bytes and duration_ms written even when zero, last on the line.
func wireForm(r Record) any {
	type plain Record
	if r.Status == 0 {
		return plain(r)
	}
	return struct {
		plain
		Bytes      int64 `json:"bytes"`
		DurationMS int64 `json:"duration_ms"`
	}{plain(r), r.Bytes, r.DurationMS}
}

// encodingJSON is v as an Encoder with HTML escaping off writes it, less
// the newline.
func encodingJSON(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

// jsonHazards are strings that each take a path of encoding/json's own:
// escapes of every kind, HTML characters left as they are, invalid and
// valid UTF-8, the line separators JavaScript cannot hold.
var jsonHazards = []string{
	"", "plain", "https://example.com/a?b=1&c=<2>", `quote " here`, `C:\dir\file`, "tab\tnew\nline\rcr",
	"\x00\x01\x08\x0c\x1f\x7f", "é — ü 日本", "bad \xff\xfe utf-8", "\xe2\x80", "line\u2028para\u2029end",
	"\u0085 c1 \u202e bidi", "emoji 😀", strings.Repeat("x", 300),
	// Longer than a word, the hazard past the first 8 bytes.
	"abcdefghijklmnopqrstuvwx\"yz", "0123456789\\abcdef", "abcdefghijk\x01lmnop", "abcdefghijklmn\xffopq",
	"abcdefghijklmnopq\u2028", "abcdefghi\x7fjklmnop",
}

// TestPlainASCII8 checks the word-at-a-time test against each byte value
// at each place of a word of plain letters: a byte JSON escapes, or that
// starts non-ASCII, is never missed, and a word of plain bytes passes.
func TestPlainASCII8(t *testing.T) {
	for c := range 256 {
		for at := range 8 {
			w := []byte("abcdefgh")
			w[at] = byte(c)
			plain := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
			if got := plainASCII8(binary.LittleEndian.Uint64(w)); got && !plain {
				t.Errorf("byte %#x at %d: passed as plain", c, at)
			}
		}
	}
	for _, w := range []string{"abcdefgh", "        ", "~~~~~~~~", "https://", "a?b=1&c=", "!#$%&'()", "[]^_`{|}"} {
		if !plainASCII8(binary.LittleEndian.Uint64([]byte(w))) {
			t.Errorf("%q: not plain", w)
		}
	}
}

// randomRecord fills every field of a Record from rng, each empty or zero
// now and then, with strings from jsonHazards.
func randomRecord(rng *rand.Rand) Record {
	str := func() string {
		if rng.IntN(3) == 0 {
			return ""
		}
		return jsonHazards[rng.IntN(len(jsonHazards))]
	}
	strs := func() []string {
		var v []string
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		for range rng.IntN(4) + 1 {
			v = append(v, str())
		}
		return v
	}
	num := func() int64 {
		switch rng.IntN(3) {
		case 0:
			return 0
		case 1:
			return -rng.Int64N(1000)
		}
		return rng.Int64()
	}
	when := func() time.Time {
		if rng.IntN(3) == 0 {
			return time.Time{}
		}
		return time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).In(time.FixedZone("", 3600*(rng.IntN(25)-12)))
	}
	r := Record{
		URL: str(), Status: int(num() % 600), FinalURL: str(), ContentType: str(), Bytes: num(), DurationMS: num(),
		FetchedAt: when(), Depth: int(num()), FoundVia: FoundVia(str()), Referrer: str(), Robots: RobotsVerdict(str()),
		InSitemap: rng.IntN(2) == 0, Lastmod: when(), NotModified: rng.IntN(2) == 0, Gone: rng.IntN(2) == 0, Error: str(),
		RedirectChain: strs(), External: rng.IntN(2) == 0, Title: str(), Description: str(), H1: str(), Canonical: str(),
		MetaRobots: strs(), LinksOut: int(num()), LinksCut: int(num()), CanonicalConflict: str(), WordCount: int(num()),
		ContentHash: str(), SimHash: str(), Lang: str(), H1Count: int(num()), ImgNoAlt: int(num()), TTFBMS: num(),
		HSTS: rng.IntN(2) == 0, Anchors: strs(), Rendered: rng.IntN(2) == 0, RenderMS: num(), RenderError: str(),
	}
	if rng.IntN(2) == 0 {
		d := int(num() % 100)
		r.LinkDepth = &d
	}
	for range rng.IntN(3) {
		r.Hreflang = append(r.Hreflang, Hreflang{Lang: str(), URL: str()})
	}
	if rng.IntN(3) == 0 {
		r.Extracted = map[string]any{str(): str(), "list": strs(), "b<&>": []string{str()}}
	}
	return r
}

// TestAppendRecordIsJSON holds the hand-written encoder to encoding/json:
// for records with every field set or not, and strings of every kind,
// the bytes are the same.
func TestAppendRecordIsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		r := randomRecord(rng)
		got, err := appendRecord(nil, &r)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if want := encodingJSON(t, wireForm(r)); !bytes.Equal(got, want) {
			t.Fatalf("record %d %+v:\n got %s\nwant %s", i, r, got, want)
		}
	}
	// Every field set, status 0 and not: the order of every key checked.
	full := randomRecord(rng)
	for _, status := range []int{0, 200} {
		full.Status = status
		got, _ := appendRecord(nil, &full)
		if want := encodingJSON(t, wireForm(full)); !bytes.Equal(got, want) {
			t.Fatalf("status %d:\n got %s\nwant %s", status, got, want)
		}
	}
}

// TestAppendRecordBadTime: a time encoding/json refuses is refused, as
// Write did with encoding/json.
func TestAppendRecordBadTime(t *testing.T) {
	r := Record{URL: "http://h/", FetchedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := appendRecord(nil, &r); err == nil {
		t.Fatal("a fetched_at in year 10000 was written")
	}
	if err := NewInventory(&bytes.Buffer{}).Write(r); err == nil {
		t.Fatal("Write accepted a record it cannot encode")
	}
	// The error stands whatever the fields written after the time.
	r.Extracted = map[string]any{"price": "12"}
	if _, err := appendRecord(nil, &r); err == nil {
		t.Fatal("a fetched_at in year 10000 was written beside an extraction")
	}
}

// BenchmarkInventoryWritePage encodes the record of a docs page with 200
// anchors, as the crawl writes one per page.
func BenchmarkInventoryWritePage(b *testing.B) {
	depth := 2
	r := Record{URL: "http://127.0.0.1:18082/library/os.html", Status: 200, ContentType: "text/html",
		Bytes: 150000, DurationMS: 3, FetchedAt: time.Now(), Depth: 2, FoundVia: FoundLink,
		Referrer: "http://127.0.0.1:18082/library/index.html", Robots: RobotsAllowed, LinkDepth: &depth,
		Title: "os — Miscellaneous operating system interfaces", H1: "os — Miscellaneous operating system interfaces",
		LinksOut: 412, WordCount: 21000, ContentHash: "0123456789abcdef", SimHash: "fedcba9876543210", Lang: "en",
		H1Count: 1, TTFBMS: 1}
	for i := range 200 {
		r.Anchors = append(r.Anchors, "os.path-"+strings.Repeat("x", i%20))
	}
	inv := NewInventory(discard{})
	b.ReportAllocs()
	for b.Loop() {
		if err := inv.Write(r); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// FuzzAppendJSONString holds the string encoder to encoding/json for any
// bytes at all.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonHazards {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), encodingJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s; want %s", s, got, want)
		}
	})
}
