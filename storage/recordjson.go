package storage

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendRecord appends r's line of the inventory to b, without the
// newline: the JSON that encoding/json writes for r with HTML escaping
// off, every field in the struct's order and left out as its tag says,
// except that when there was a response (a status) bytes and duration_ms
// are written even when zero, last on the line. Written by hand because
// it runs for every URL the crawl records, and encoding/json's reflection
// was up to 6% of a crawl's CPU; TestAppendRecordIsJSON holds it to
// encoding/json's bytes. r is passed by pointer: a Record is half a
// kilobyte, and its copies grew the workers' stacks.
func appendRecord(b []byte, r *Record) ([]byte, error) {
	w := recordWriter{b: append(b, '{')}
	w.str("url", r.URL)
	w.int("status", int64(r.Status))
	w.strOmit("final_url", r.FinalURL)
	w.strOmit("content_type", r.ContentType)
	if r.Status == 0 {
		w.intOmit("bytes", r.Bytes)
		w.intOmit("duration_ms", r.DurationMS)
	}
	w.time("fetched_at", r.FetchedAt)
	w.int("depth", int64(r.Depth))
	w.strOmit("found_via", string(r.FoundVia))
	w.strOmit("referrer", r.Referrer)
	w.strOmit("robots", string(r.Robots))
	w.boolOmit("in_sitemap", r.InSitemap)
	w.time("lastmod", r.Lastmod)
	w.boolOmit("not_modified", r.NotModified)
	w.boolOmit("gone", r.Gone)
	w.strOmit("error", r.Error)
	w.strs("redirect_chain", r.RedirectChain)
	if r.LinkDepth != nil {
		w.int("link_depth", int64(*r.LinkDepth))
	}
	w.boolOmit("external", r.External)
	w.strOmit("title", r.Title)
	w.strOmit("description", r.Description)
	w.strOmit("h1", r.H1)
	w.strOmit("canonical", r.Canonical)
	w.strs("meta_robots", r.MetaRobots)
	if len(r.Hreflang) > 0 {
		w.key("hreflang")
		w.b = append(w.b, '[')
		for i, h := range r.Hreflang {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"lang":`...)
			w.b = appendJSONString(w.b, h.Lang)
			w.b = append(w.b, `,"url":`...)
			w.b = appendJSONString(w.b, h.URL)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.intOmit("links_out", int64(r.LinksOut))
	w.intOmit("links_cut", int64(r.LinksCut))
	w.strOmit("canonical_conflict", r.CanonicalConflict)
	w.intOmit("word_count", int64(r.WordCount))
	w.strOmit("content_hash", r.ContentHash)
	w.strOmit("simhash", r.SimHash)
	w.strOmit("lang", r.Lang)
	w.intOmit("h1_count", int64(r.H1Count))
	w.intOmit("img_no_alt", int64(r.ImgNoAlt))
	w.intOmit("ttfb_ms", r.TTFBMS)
	w.boolOmit("hsts", r.HSTS)
	w.strs("anchors", r.Anchors)
	if len(r.Extracted) > 0 {
		w.value("extracted", r.Extracted) // values of any type, rare
	}
	w.boolOmit("rendered", r.Rendered)
	w.intOmit("render_ms", r.RenderMS)
	w.strOmit("render_error", r.RenderError)
	if r.Status != 0 {
		w.int("bytes", r.Bytes)
		w.int("duration_ms", r.DurationMS)
	}
	return append(w.b, '}'), w.err
}

// recordWriter appends the fields of one JSON object.
type recordWriter struct {
	b     []byte
	err   error // the first field that could not be written
	comma bool  // a field was written
}

func (w *recordWriter) key(k string) {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = true
	w.b = append(append(append(w.b, '"'), k...), `":`...)
}

func (w *recordWriter) str(k, v string) {
	w.key(k)
	w.b = appendJSONString(w.b, v)
}

func (w *recordWriter) strOmit(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *recordWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *recordWriter) intOmit(k string, v int64) {
	if v != 0 {
		w.int(k, v)
	}
}

func (w *recordWriter) boolOmit(k string, v bool) {
	if v {
		w.key(k)
		w.b = append(w.b, "true"...)
	}
}

// value writes v as encoding/json does, for what this writer has no
// writing of its own (maps, values of any type); an error is kept as the
// writer's first.
func (w *recordWriter) value(k string, v any) {
	w.key(k)
	var err error
	w.b, err = appendJSONValue(w.b, v)
	w.err = cmp.Or(w.err, err)
}

func (w *recordWriter) strs(k string, v []string) {
	if len(v) == 0 {
		return
	}
	w.key(k)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendJSONString(w.b, s)
	}
	w.b = append(w.b, ']')
}

// time writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, by AppendText, its steps without an allocation), unless
// it is zero (omitzero); a year it cannot write is the error it gives.
func (w *recordWriter) time(k string, t time.Time) {
	if t.IsZero() {
		return
	}
	w.key(k)
	text, err := t.AppendText(append(w.b, '"'))
	if err != nil {
		w.err = cmp.Or(w.err, err)
		return
	}
	w.b = append(text, '"')
}

// appendJSONString appends s as encoding/json writes a string with HTML
// escaping off. '"' and '\\' are escaped here, and a string of printable
// ASCII and valid UTF-8 other than U+2028 and U+2029 — nearly every URL,
// title, ETag and error — is otherwise written as it is; any other is left
// to encoding/json, whose escapes (control characters, invalid UTF-8 as
// U+FFFD) it then has exactly.
func appendJSONString(b []byte, s string) []byte {
	mark := len(b)
	b = append(b, '"')
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plainASCII8(binary.LittleEndian.Uint64([]byte(s[i:i+8]))) {
			i += 8 // a page's anchors and URLs are mostly such runs
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(append(b, s[done:i]...), '\\', c)
				done = i + 1
			case c < 0x20:
				return mustAppendJSON(b[:mark], s)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r == '\u2028' || r == '\u2029' {
			return mustAppendJSON(b[:mark], s)
		}
		i += n
	}
	return append(append(b, s[done:]...), '"')
}

// plainASCII8 reports whether the 8 bytes of x are ASCII that JSON writes
// as they are: none at or above 0x80, below 0x20, '"' or '\\'. (The
// word-at-a-time tests may report a byte that is none of these, never
// miss one: the caller then looks at the bytes one by one.)
func plainASCII8(x uint64) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & high }
	bad := x&high | (x-0x20*ones)&^x&high | hasZero(x^('"'*ones)) | hasZero(x^('\\'*ones))
	return bad == 0
}

// mustAppendJSON appends s as encoding/json writes it; a string always
// encodes.
func mustAppendJSON(b []byte, s string) []byte {
	b, _ = appendJSONValue(b, s)
	return b
}

// appendJSONValue appends v as encoding/json writes it with HTML escaping
// off, without the newline an Encoder ends it with.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
