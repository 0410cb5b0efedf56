package sitemap

import (
	"bytes"
	"unicode/utf8"
)

// decodeEntities replaces, in place, the five predefined XML entities and
// numeric character references in b. An ampersand that starts no reference
// (a raw & in a query string) is kept as written. A reference that cannot
// be decoded — an entity a DOCTYPE may have declared, which is never
// expanded, or a character reference to no character — is kept too, and
// the first one is returned as bad, so the caller can refuse the value.
func decodeEntities(b []byte) (out, bad []byte) {
	i := bytes.IndexByte(b, '&')
	if i < 0 {
		return b, nil
	}
	w := i
	for i < len(b) {
		c := b[i]
		if c != '&' {
			b[w] = c
			w++
			i++
			continue
		}
		r, n := entityAt(b[i:])
		if n <= 0 {
			if n < 0 && bad == nil {
				// Copy: b is rewritten in place below.
				bad = bytes.Clone(b[i : i-n])
			}
			b[w] = '&'
			w++
			i++
			continue
		}
		// A reference is never shorter than the UTF-8 it stands for, so
		// writing at w never overtakes reading at i.
		w += utf8.EncodeRune(b[w:], r)
		i += n
	}
	return b[:w], bad
}

// entityAt decodes the reference at the start of s (which starts with '&')
// and returns the character and the reference's length. n is 0 when s
// starts with no reference (a raw ampersand), and minus the length of the
// reference when s starts with one that cannot be decoded.
func entityAt(s []byte) (r rune, n int) {
	end := min(len(s), 34) // room for a long entity name; "&#x0010FFFF;" is the longest reference decoded
	semi := bytes.IndexByte(s[1:end], ';')
	if semi <= 0 {
		return 0, 0
	}
	name := s[1 : 1+semi]
	n = semi + 2
	switch string(name) {
	case "amp":
		return '&', n
	case "lt":
		return '<', n
	case "gt":
		return '>', n
	case "quot":
		return '"', n
	case "apos":
		return '\'', n
	}
	if name[0] != '#' {
		if isName(name) {
			return 0, -n
		}
		return 0, 0
	}
	digits, base := name[1:], rune(10)
	if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 || len(digits) > 8 {
		return 0, -n
	}
	for _, c := range digits {
		var d rune
		switch {
		case '0' <= c && c <= '9':
			d = rune(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0, -n
		}
		r = r*base + d
	}
	if r == 0 || r > utf8.MaxRune || !utf8.ValidRune(r) {
		return 0, -n
	}
	return r, n
}

// isName reports whether b is an XML name (ASCII letters, digits, '_', '-',
// '.', ':', and any non-ASCII byte; not starting with a digit, '-' or '.').
func isName(b []byte) bool {
	if !isNameStart(b[0]) {
		return false
	}
	for _, c := range b[1:] {
		if !isNameStart(c) && !('0' <= c && c <= '9') && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
