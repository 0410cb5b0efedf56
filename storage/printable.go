package storage

import (
	"encoding/binary"
	"io"
	"strings"
	"unicode/utf8"
)

// A crawled site writes what it likes into its sitemaps, titles and
// anchors: an 8-bit CSI (U+009B) drives a terminal as ESC [ does, and a
// bidi override (U+202E) makes a line read otherwise than it is. Nothing
// of it may reach a person's terminal raw (README, "Outputs").

// hazard reports whether r may not be shown raw to a person: a C1
// control, a bidi embedding, override, isolate or mark, or a line or
// paragraph separator. C0 controls and DEL, which encoding/json escapes
// itself, are left to the callers that print text.
func hazard(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
	case r == 0x061c, r == 0x200e, r == 0x200f: // ALM, LRM, RLM
	case r >= 0x2028 && r <= 0x202e: // LS, PS, LRE, RLE, PDF, LRO, RLO
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
	default:
		return false
	}
	return true
}

// Hazard reports whether r may not be printed raw for a person: a C0
// or C1 control, DEL, a bidi embedding, override, isolate or mark, or a
// line or paragraph separator.
func Hazard(r rune) bool { return r < 0x20 || r == 0x7f || hazard(r) }

const hexDigits = "0123456789abcdef"

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// EscapeJSON returns b, encoded JSON, with every hazard rune (a C1
// control, a bidi control, U+2028 or U+2029) written as a \uXXXX escape,
// which is the same JSON: these runes can only be inside strings. b is
// returned as it is when it holds none, which is the usual case.
func EscapeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8 // eight ASCII bytes, and every hazard is non-ASCII
			continue
		}
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if hazard(r) {
			if out == nil {
				out = make([]byte, 0, len(b)+16)
			}
			out = appendU(append(out, b[last:i]...), r)
			last = i + n
		}
		i += n
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// JSONWriter returns a writer that passes each Write, which must hold
// whole JSON values (as json.Encoder and slog's JSON handler write
// them), through EscapeJSON to w.
func JSONWriter(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(EscapeJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Printable returns s for a person to read on a terminal: every control
// character (C0, DEL, C1), bidi control, U+2028 and U+2029 written as a
// visible \uXXXX escape. s is returned as it is when it holds none.
func Printable(s string) string {
	i := strings.IndexFunc(s, Hazard)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for _, r := range s[i:] {
		if Hazard(r) {
			b = appendU(b, r)
		} else {
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}
