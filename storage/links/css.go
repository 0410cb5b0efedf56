package links

import (
	"bytes"
	"strings"
)

// walkCSS visits the url() and @import references of css, decoded, and,
// when out is set, writes css with the replacements fn gives.
func walkCSS(css []byte, fn func(ref string) (string, bool), out *bytes.Buffer) {
	last := 0
	scanCSS(css, func(start, end int, quote byte) {
		val := css[start:end]
		if quote != 0 {
			val = val[1 : len(val)-1]
		}
		nv, changed := fn(cssUnescape(val))
		if !changed || out == nil {
			return
		}
		out.Write(css[last:start])
		writeCSSURL(out, nv, quote)
		last = end
	})
	if out != nil {
		out.Write(css[last:])
	}
}

// scanCSS finds the URLs of a stylesheet as CSS Syntax Level 3 tokenizes
// them: url(...) unquoted or with a string, and the string after @import.
// It calls visit with the span to replace: a string with its quotes, or the
// text of an unquoted url() without the white space around it (an unclosed
// url( at the end counts, as in CSS). Comments and other strings are passed
// over; bad URLs and strings cut by a newline or the end are left alone.
func scanCSS(css []byte, visit func(start, end int, quote byte)) {
	n := len(css)
	importing := false // after @import, before anything but space and comments
	for i := 0; i < n; {
		c := css[i]
		switch {
		case c == '/' && i+1 < n && css[i+1] == '*':
			if e := bytes.Index(css[i+2:], []byte("*/")); e >= 0 {
				i += e + 4
			} else {
				i = n
			}
			continue
		case isHTMLSpace(c):
			i++
			continue
		case c == '"' || c == '\'':
			end, closed := scanCSSString(css, i)
			if importing && closed {
				visit(i, end, c)
			}
			i = end
		case c == '@':
			j := scanCSSName(css, i+1)
			importing = equalFold(css[i+1:j], "import")
			i = j
			continue
		case c == '\\' || c == '-' || c == '_' || isCSSNameChar(c):
			j := scanCSSName(css, i)
			if j == i {
				i++ // a backslash before a newline or at the end
			} else if j < n && css[j] == '(' && equalFold(css[i:j], "url") {
				i = scanCSSURL(css, j+1, visit)
			} else {
				i = j
			}
		default:
			i++
		}
		importing = false
	}
}

// scanCSSString returns the end of the string starting with the quote at
// i, and whether it was closed (not cut by a newline or the end).
func scanCSSString(css []byte, i int) (int, bool) {
	q := css[i]
	for j := i + 1; j < len(css); j++ {
		switch css[j] {
		case q:
			return j + 1, true
		case '\\':
			if j+2 < len(css) && css[j+1] == '\r' && css[j+2] == '\n' {
				j++
			}
			j++
		case '\n', '\r', '\f':
			return j, false
		}
	}
	return len(css), false
}

// scanCSSURL reads the argument of url( starting at p, visits it, and
// returns where scanning goes on.
func scanCSSURL(css []byte, p int, visit func(start, end int, quote byte)) int {
	n := len(css)
	k := p
	for k < n && isHTMLSpace(css[k]) {
		k++
	}
	if k < n && (css[k] == '"' || css[k] == '\'') {
		end, closed := scanCSSString(css, k)
		if closed {
			visit(k, end, css[k])
		}
		return end
	}
	for j := k; j < n; j++ {
		switch c := css[j]; {
		case c == ')':
			if j > k {
				visit(k, j, 0)
			}
			return j + 1
		case isHTMLSpace(c):
			m := j
			for m < n && isHTMLSpace(css[m]) {
				m++
			}
			if m == n || css[m] == ')' {
				if j > k {
					visit(k, j, 0)
				}
				return min(m+1, n)
			}
			return skipBadURL(css, m)
		case c == '"' || c == '\'' || c == '(' || c < 0x20 || c == 0x7F:
			return skipBadURL(css, j)
		case c == '\\':
			if j+1 == n || css[j+1] == '\n' || css[j+1] == '\r' || css[j+1] == '\f' {
				return skipBadURL(css, j)
			}
			j = cssEscapeEnd(css, j) - 1
		}
	}
	if n > k {
		visit(k, n, 0) // unclosed at the end, as at the end of a style attribute
	}
	return n
}

// skipBadURL passes the rest of a bad url( up to its ')'.
func skipBadURL(css []byte, j int) int {
	for ; j < len(css); j++ {
		switch css[j] {
		case ')':
			return j + 1
		case '\\':
			j++
		}
	}
	return len(css)
}

// scanCSSName returns the end of the name (identifier characters and
// escapes) starting at i.
func scanCSSName(css []byte, i int) int {
	for i < len(css) {
		c := css[i]
		switch {
		case isCSSNameChar(c) || c == '-' || c == '_':
			i++
		case c == '\\' && i+1 < len(css) && css[i+1] != '\n' && css[i+1] != '\r' && css[i+1] != '\f':
			i = cssEscapeEnd(css, i)
		default:
			return i
		}
	}
	return i
}

// cssEscapeEnd returns the end of the valid escape whose backslash is at
// i: up to six hex digits and one white space after them, or one character.
func cssEscapeEnd(css []byte, i int) int {
	j := i + 1
	if j == len(css) || !isHex(css[j]) {
		return min(j+1, len(css))
	}
	for j < len(css) && j-i <= 6 && isHex(css[j]) {
		j++
	}
	switch {
	case j+1 < len(css) && css[j] == '\r' && css[j+1] == '\n':
		j += 2
	case j < len(css) && isHTMLSpace(css[j]):
		j++
	}
	return j
}

func isCSSNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}

// cssUnescape decodes the escapes of a CSS string or url() value, and
// reads a NUL as U+FFFD, as CSS Syntax §3.3 preprocesses its input (and as
// the escape \0, which is how writeCSSURL writes a NUL, reads).
func cssUnescape(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 && bytes.IndexByte(b, 0) < 0 {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0 {
			sb.WriteRune(0xFFFD)
			i++
			continue
		}
		if c != '\\' {
			sb.WriteByte(c)
			i++
			continue
		}
		i++
		if i == len(b) {
			break
		}
		switch c = b[i]; {
		case c == '\n' || c == '\f':
			i++ // a line continuation
		case c == '\r':
			i++
			if i < len(b) && b[i] == '\n' {
				i++
			}
		case isHex(c):
			r := rune(0)
			j := i
			for j < len(b) && j-i < 6 && isHex(b[j]) {
				r = r<<4 | rune(unhex(b[j]))
				j++
			}
			if r == 0 || 0xD800 <= r && r <= 0xDFFF || r > 0x10FFFF {
				r = 0xFFFD
			}
			sb.WriteRune(r)
			i = j
			if i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
				i += 2
			} else if i < len(b) && isHTMLSpace(b[i]) {
				i++
			}
		case c == 0:
			sb.WriteRune(0xFFFD)
			i++
		default:
			sb.WriteByte(c)
			i++
		}
	}
	return sb.String()
}

// writeCSSURL writes v as a CSS string in quotes q, or as the text of an
// unquoted url() when q is 0, escaping what would end it (and '<', so that
// it cannot close a <style> element).
func writeCSSURL(b *bytes.Buffer, v string, q byte) {
	const digits = "0123456789abcdef"
	if q != 0 {
		b.WriteByte(q)
	}
	last := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		special := c < 0x20 || c == 0x7F || c == '\\' || c == '<'
		if q == 0 {
			special = special || c == ' ' || c == '"' || c == '\'' || c == '(' || c == ')'
		} else {
			special = special || c == q
		}
		if !special {
			continue
		}
		b.WriteString(v[last:i])
		b.WriteByte('\\')
		if c >= 0x10 {
			b.WriteByte(digits[c>>4])
		}
		b.WriteByte(digits[c&15])
		b.WriteByte(' ')
		last = i + 1
	}
	b.WriteString(v[last:])
	if q != 0 {
		b.WriteByte(q)
	}
}

// equalFold reports whether b equals the lower-case ASCII s, ignoring the
// case of ASCII letters.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if c|lowerBit(c) != s[i] {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

// ScanCSS calls fn with the URL of each url() and @import of a stylesheet,
// escapes decoded, in order. Comments and other strings are passed over.
func ScanCSS(css []byte, fn func(url string)) {
	walkCSS(css, func(u string) (string, bool) { fn(u); return "", false }, nil)
}

// RewriteCSS returns css with the URLs of its url() and @import replaced by
// what fn returns when it returns true, written as CSS strings or url()
// text again (escaped so that they cannot end early or close a <style>);
// the rest is kept byte for byte.
func RewriteCSS(css []byte, fn func(url string) (string, bool)) []byte {
	var out bytes.Buffer
	out.Grow(len(css) + len(css)/16)
	walkCSS(css, fn, &out)
	return out.Bytes()
}
