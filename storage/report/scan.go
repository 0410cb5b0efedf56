package report

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/politecrawl/crawler/storage"
)

// rawLink is a link graph line's fields that the report reads, as slices
// of the line. A string whose esc is set still holds JSON escapes.
type rawLink struct {
	from, to, kind, anchor, rel            []byte
	fromEsc, toEsc, kindEsc, anEsc, relEsc bool
}

// scanLink reads a link graph line of the shape storage.Link is written
// in, without encoding/json's reflection: at twenty million lines that
// is most of the time a report takes. It reports false for any line it
// is not sure of (another key, a value of another type, bad syntax);
// parseLink then gives the line to encoding/json.
func scanLink(line []byte, l *rawLink) bool {
	*l = rawLink{}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return skipSpace(line, i+1) == len(line)
	}
	for {
		key, _, j, ok := scanString(line, i)
		if !ok {
			return false
		}
		i = skipSpace(line, j)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		switch string(key) {
		case "nofollow":
			switch {
			case hasAt(line, i, "true"):
				i += 4
			case hasAt(line, i, "false"):
				i += 5
			default:
				return false
			}
		case "from", "to", "kind", "rel", "anchor":
			val, esc, j, ok := scanString(line, i)
			if !ok {
				return false
			}
			i = j
			switch string(key) {
			case "from":
				l.from, l.fromEsc = val, esc
			case "to":
				l.to, l.toEsc = val, esc
			case "kind":
				l.kind, l.kindEsc = val, esc
			case "anchor":
				l.anchor, l.anEsc = val, esc
			case "rel":
				l.rel, l.relEsc = val, esc
			}
		default:
			return false
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return false
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			return skipSpace(line, i+1) == len(line)
		default:
			return false
		}
	}
}

// scanString reads the JSON string starting at line[i]: its contents
// between the quotes, whether they hold an escape, and the index after
// the closing quote. A missing quote is not ok. (Control characters,
// which JSON does not allow in a string, are let through: the link
// graph's writer never writes them, and they do no harm here.)
func scanString(line []byte, i int) (val []byte, esc bool, next int, ok bool) {
	if i >= len(line) || line[i] != '"' {
		return nil, false, 0, false
	}
	start := i + 1
	end := bytes.IndexByte(line[start:], '"')
	if end < 0 {
		return nil, false, 0, false
	}
	if bytes.IndexByte(line[start:start+end], '\\') < 0 {
		return line[start : start+end], false, start + end + 1, true
	}
	for j := start; j < len(line); j++ {
		switch line[j] {
		case '"':
			return line[start:j], true, j + 1, true
		case '\\':
			j++ // the escaped byte; a \u's hex digits are plain bytes
		}
	}
	return nil, false, 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

func hasAt(b []byte, i int, s string) bool {
	return len(b)-i >= len(s) && string(b[i:i+len(s)]) == s
}

// link is a link graph line decoded; from, to and anchor are valid only
// until the next line when they are slices of it.
type link struct {
	from, to, kind, anchor, rel string
}

// parseLink decodes a link graph line: with scanLink, or, for a line
// scanLink is not sure of, with encoding/json. Strings with escapes are
// decoded by encoding/json too. It reports false for a malformed line or
// one with no from or to.
func parseLink(line []byte, raw *rawLink, out *link) bool {
	if !scanLink(line, raw) {
		*raw = rawLink{}
		var l storage.Link
		if json.Unmarshal(line, &l) != nil {
			return false
		}
		*out = link{from: l.From, to: l.To, kind: l.Kind, anchor: l.Anchor, rel: l.Rel}
		return out.from != "" && out.to != ""
	}
	var ok bool
	if out.from, ok = str(raw.from, raw.fromEsc); !ok {
		return false
	}
	if out.to, ok = str(raw.to, raw.toEsc); !ok {
		return false
	}
	if out.kind, ok = str(raw.kind, raw.kindEsc); !ok {
		return false
	}
	if out.rel, ok = str(raw.rel, raw.relEsc); !ok {
		return false
	}
	out.anchor = "" // decoded only when needed: see anchorOf
	return out.from != "" && out.to != ""
}

// str is the string a JSON string's contents stand for. Without escapes
// it is the bytes themselves, not copied: the caller must not keep it.
func str(b []byte, esc bool) (string, bool) {
	if !esc {
		return unsafeString(b), true
	}
	q := make([]byte, 0, len(b)+2)
	q = append(append(append(q, '"'), b...), '"')
	var s string
	if json.Unmarshal(q, &s) != nil {
		return "", false
	}
	return s, true
}

// anchorOf is the anchor text of the line raw was scanned from, a copy.
func anchorOf(raw *rawLink, l *link) string {
	if l.anchor != "" || raw.anchor == nil {
		return l.anchor
	}
	s, _ := str(raw.anchor, raw.anEsc)
	return strings.Clone(s)
}
