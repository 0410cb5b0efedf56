package storage

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRecordWorstCase writes a record and a link whose every field is
// far over its cap, in characters JSON writes at their longest (\u0001,
// an invalid byte as \ufffd): each line must stay within MaxLine, or
// crawler report would skip it as torn.
func TestRecordWorstCase(t *testing.T) {
	huge := strings.Repeat("\x01\xff", 2*MaxTextChars)
	hugeURL := "http://h/?" + strings.Repeat("\xff", MaxURLBytes)
	chain := make([]string, 2*MaxChainHops)
	alts := make([]Hreflang, 2*MaxHreflangs)
	dirs := make([]string, 2*MaxDirectives)
	for i := range chain {
		chain[i] = hugeURL
	}
	for i := range alts {
		alts[i] = Hreflang{Lang: huge, URL: hugeURL}
	}
	for i := range dirs {
		dirs[i] = huge
	}
	var buf bytes.Buffer
	inv := NewInventory(&buf)
	rec := Record{URL: hugeURL, Status: 200, FinalURL: hugeURL, ContentType: huge, Referrer: hugeURL,
		Error: huge, RedirectChain: chain, Title: huge, Description: huge, H1: huge,
		Canonical: hugeURL, MetaRobots: dirs, Hreflang: alts, LinksOut: 1 << 30}
	if err := inv.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := inv.WriteLink(Link{From: hugeURL, To: hugeURL, Kind: huge, Rel: huge, Anchor: huge}); err != nil {
		t.Fatal(err)
	}
	if err := inv.Close(); err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.SplitAfter(buf.Bytes(), []byte("\n")) {
		if len(line) > MaxLine {
			t.Errorf("line %d: %d bytes, over MaxLine (%d)", i+1, len(line), MaxLine)
		}
	}
	n := 0
	if err := ReadInventory(bytes.NewReader(buf.Bytes()[:bytes.IndexByte(buf.Bytes(), '\n')+1]), func(r Record) error {
		n++
		if len(r.RedirectChain) == 0 || len(r.Hreflang) == 0 || len(r.MetaRobots) != MaxDirectives {
			t.Errorf("lists cut to nothing: %d hops, %d alternates, %d directives", len(r.RedirectChain), len(r.Hreflang), len(r.MetaRobots))
		}
		return nil
	}); err != nil || n != 1 {
		t.Fatalf("ReadInventory: %d records, %v", n, err)
	}
}

// TestBoundedText: a long title is cut at MaxTextChars characters, on a
// character boundary, and short fields are kept as they are.
func TestBoundedText(t *testing.T) {
	rec := Record{Title: strings.Repeat("€", 1_100_000), H1: "short", URL: "http://h/" + strings.Repeat("é", MaxURLBytes)}
	got := rec.bounded()
	if n := utf8.RuneCountInString(got.Title); n != MaxTextChars || !utf8.ValidString(got.Title) {
		t.Errorf("title: %d characters, valid %v; want %d", n, utf8.ValidString(got.Title), MaxTextChars)
	}
	if got.H1 != "short" {
		t.Errorf("h1 = %q", got.H1)
	}
	if len(got.URL) > MaxURLBytes || !utf8.ValidString(got.URL) {
		t.Errorf("url: %d bytes, valid %v", len(got.URL), utf8.ValidString(got.URL))
	}
	if s := cutBytes(strings.Repeat("\x80", 20), 10); len(s) != 10 {
		t.Errorf("cutBytes of invalid bytes: %d bytes", len(s))
	}
}
