package robots

import "strings"

const upperHex = "0123456789ABCDEF"

// normalizePattern normalises an allow or disallow value as RFC 9309 §2.2.2
// asks (see appendNormalized). It returns v itself when nothing changes.
func normalizePattern(v string) string {
	if !needsNormalizing(v) {
		return v
	}
	return string(appendNormalized(make([]byte, 0, len(v)+16), v, false))
}

func needsNormalizing(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// appendNormalized appends s to dst with octets outside US-ASCII
// percent-encoded, the hex digits of percent-encodings upper-cased, and
// percent-encoded unreserved characters decoded; every other octet, the
// reserved characters included, is kept as written. In a URL (inURL), %2A
// and %24 are decoded too: they are the octets "*" and "$", which a pattern
// can only match literally by spelling them %2A and %24 (RFC 9309 §2.2.3).
// A "%" that does not start a percent-encoding is encoded as %25, as RFC
// 3986 would have it (Google keeps it as it is); this makes normalising
// idempotent: "%%61b" becomes "%25ab", not "%ab", which would read "%AB".
func appendNormalized(dst []byte, s string, inURL bool) []byte {
	for i := 0; i < len(s); i++ {
		// Copy the run of octets that stay as they are in one append.
		j := i
		for j < len(s) && s[j] != '%' && s[j] < 0x80 {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		// s[i] is a "%" or an octet outside US-ASCII.
		c := s[i]
		switch {
		case c >= 0x80:
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&0xF])
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) || inURL && (v == '*' || v == '$') {
				dst = append(dst, v)
			} else {
				dst = append(dst, '%', upperHex[v>>4], upperHex[v&0xF])
			}
			i += 2
		default: // a "%" that starts no percent-encoding
			dst = append(dst, "%25"...)
		}
	}
	return dst
}

// isUnreserved reports whether c is an RFC 3986 unreserved character.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
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
	}
	return c - 'a' + 10
}

// appendPath appends the normalised path, params and query of target to
// dst. Target is an absolute URL ("https://example.com/a?b"), a URL without
// a scheme ("example.com/a", "//example.com/a") or a path ("/a?b"). The
// result always starts with "/"; it is "/" when target has no path, as in
// Google's GetPathParamsQuery, which this follows: the scheme and authority
// are dropped, and so is the fragment.
func appendPath(dst []byte, target string) []byte {
	path, slash := pathOf(target)
	if slash {
		dst = append(dst, '/')
	}
	return appendNormalized(dst, path, true)
}

// pathOf returns the path, params and query of target, and whether a "/"
// must go before them (when they start with "?" or ";").
func pathOf(target string) (path string, slash bool) {
	start := 0 // two leading slashes start an authority, not a path
	if strings.HasPrefix(target, "//") {
		start = 2
	}
	rest := target[start:]
	early := strings.IndexAny(rest, "/?;")
	afterScheme := strings.Index(rest, "://")
	if afterScheme < 0 || early >= 0 && early < afterScheme {
		// No scheme, or "://" comes after the path has begun.
		afterScheme = 0
	} else {
		afterScheme += len("://")
	}
	i := strings.IndexAny(rest[afterScheme:], "/?;")
	if i < 0 {
		return "", true
	}
	i += afterScheme
	end := len(rest)
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		if h < i {
			return "", true
		}
		end = h
	}
	path = rest[i:end]
	// Google's matcher takes the path as a C string: a NUL ends it.
	if n := strings.IndexByte(path, 0); n >= 0 {
		path = path[:n]
	}
	return path, rest[i] != '/'
}
