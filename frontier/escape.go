package frontier

import "strings"

// Character classes of RFC 3986 §2, as bits of charClass.
const (
	classPath       = 1 << iota // may appear in a path: pchar / "/"
	classQuery                  // may appear in a query: pchar / "/" / "?"
	classUnreserved             // ALPHA / DIGIT / "-" / "." / "_" / "~"
)

// charClass holds the classes of every byte. It is computed once and only
// read afterwards.
var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~':
			t[c] = classPath | classQuery | classUnreserved
		case strings.IndexByte("!$&'()*+,;=:@/", byte(c)) >= 0:
			t[c] = classPath | classQuery
		case c == '?':
			t[c] = classQuery
		}
	}
	return t
}()

const upperHex = "0123456789ABCDEF"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// validEscape reports whether s[i] is a '%' that starts a valid escape.
func validEscape(s string, i int) bool {
	return i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
}

// escapeInvalid percent-encodes every byte of a path (or query) that may not
// appear there, a '%' that does not start an escape included. It returns s
// itself, and false, when nothing needed encoding.
func escapeInvalid(s string, query bool) (string, bool) {
	class := uint8(classPath)
	if query {
		class = classQuery
	}
	bad := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if !validEscape(s, i) {
				bad++
			}
			continue
		}
		if charClass[c]&class == 0 {
			bad++
		}
	}
	if bad == 0 {
		return s, false
	}
	b := make([]byte, 0, len(s)+2*bad)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '%' && validEscape(s, i)) || (c != '%' && charClass[c]&class != 0) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', upperHex[c>>4], upperHex[c&15])
	}
	return string(b), true
}

// normPct normalises the escapes of s, in which every '%' starts a valid
// escape: unreserved characters are decoded, the hex of the others
// upper-cased. It returns s itself, and false, when nothing changed.
func normPct(s string) (string, bool) {
	first := -1
	for i := strings.IndexByte(s, '%'); i >= 0 && i+2 < len(s); {
		if escapeChanges(s, i) {
			first = i
			break
		}
		j := strings.IndexByte(s[i+3:], '%')
		if j < 0 {
			break
		}
		i += 3 + j
	}
	if first < 0 {
		return s, false
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:first]...)
	for i := first; i < len(s); i++ {
		if s[i] != '%' || i+2 >= len(s) {
			b = append(b, s[i])
			continue
		}
		c := unhex(s[i+1])<<4 | unhex(s[i+2])
		if charClass[c]&classUnreserved != 0 {
			b = append(b, c)
		} else {
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		}
		i += 2
	}
	return string(b), true
}

// escapeChanges reports whether normPct would rewrite the escape at s[i].
func escapeChanges(s string, i int) bool {
	h, l := s[i+1], s[i+2]
	if 'a' <= h && h <= 'f' || 'a' <= l && l <= 'f' {
		return true
	}
	return charClass[unhex(h)<<4|unhex(l)]&classUnreserved != 0
}

// removeDots removes the "." and ".." segments of an absolute path (RFC 3986
// §5.2.4). It returns p itself, and false, when it has none.
func removeDots(p string) (string, bool) {
	if !hasDotSegment(p) {
		return p, false
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		// p[i] is '/': the segment runs to the next '/' or the end.
		end := strings.IndexByte(p[i+1:], '/')
		if end < 0 {
			end = len(p)
		} else {
			end += i + 1
		}
		seg := p[i+1 : end]
		last := end == len(p)
		switch seg {
		case ".":
			if last {
				out = append(out, '/')
			}
		case "..":
			if k := lastSlash(out); k >= 0 {
				out = out[:k]
			}
			if last {
				out = append(out, '/')
			}
		default:
			out = append(out, '/')
			out = append(out, seg...)
		}
		i = end
	}
	return string(out), true
}

func lastSlash(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			return i
		}
	}
	return -1
}

// hasDotSegment reports whether the path p has a "." or ".." segment.
func hasDotSegment(p string) bool {
	for i := strings.IndexByte(p, '.'); i >= 0; {
		if i > 0 && p[i-1] == '/' {
			j := i + 1
			if j < len(p) && p[j] == '.' {
				j++
			}
			if j == len(p) || p[j] == '/' {
				return true
			}
		}
		k := strings.IndexByte(p[i+1:], '.')
		if k < 0 {
			return false
		}
		i += 1 + k
	}
	return false
}
