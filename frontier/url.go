package frontier

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// DefaultMaxURLLength is the longest URL Canonicalize accepts when it is
// given no limit of its own.
const DefaultMaxURLLength = 2048

// URL is the identity of a URL in three forms. All three are plain ASCII.
type URL struct {
	// Request is the URL to request: the URL as found, made valid (bytes
	// that may not appear in a URL percent-encoded, the host in its
	// canonical ASCII form, an empty path written "/", literal "." and ".."
	// segments resolved, the fragment dropped) but not otherwise rewritten.
	Request string
	// Key is the canonical form that identifies the URL (RFC 3986 §6):
	// Origin followed by the normalised path and the query as written.
	Key string
	// Origin is scheme://host[:port] in canonical form, the port only when
	// it is not the scheme's default: the "host" of politeness and scope.
	Origin string
}

// Reason says why a URL was rejected, in a form meant to be counted.
type Reason string

// The reasons a URL is rejected.
const (
	ReasonScheme   Reason = "scheme"   // not http or https, or no scheme at all (a relative reference)
	ReasonUserinfo Reason = "userinfo" // user:password@ in the authority
	ReasonHost     Reason = "host"     // an empty or invalid host or port
	ReasonTooLong  Reason = "too-long" // longer than the limit
	ReasonParse    Reason = "parse"    // any other malformation, such as http: without //
	ReasonControl  Reason = "control"  // a C0 control character or DEL anywhere, the fragment included
)

// URLError is the error Canonicalize and Resolve return for a rejected URL.
type URLError struct {
	Reason Reason // why, for counting
	URL    string // the URL as given, cut to 200 bytes
	Detail string // a human-readable detail
}

// Error implements error.
func (e *URLError) Error() string {
	return fmt.Sprintf("url %q rejected (%s): %s", Redact(e.URL), e.Reason, e.Detail)
}

func reject(reason Reason, raw, detail string) *URLError {
	if len(raw) > 200 {
		raw = raw[:200]
	}
	return &URLError{Reason: reason, URL: raw, Detail: detail}
}

// Canonicalize checks an absolute http or https URL and returns its request
// form, its canonical key and its origin. maxLen bounds the URL as given
// (without its fragment) and the request form; maxLen ≤ 0 means
// DefaultMaxURLLength. A rejected URL yields a *URLError.
//
// The key is the RFC 3986 §6 normal form: scheme and host lower-cased, an
// internationalised host converted to punycode (IDNA, UTS #46 lookup
// rules), the default port (80 for http, 443 for https) dropped, an empty
// path written "/", percent-encoded unreserved characters decoded and the
// other escapes' hex upper-cased (in the path and the query), dot-segments
// removed, the fragment dropped; the query is kept as written, in its order.
// URLs with userinfo are rejected (RFC 3986 §3.2.1 deprecates it; a crawler
// should not send credentials it found in a page).
//
// Like a browser, Canonicalize first strips leading and trailing spaces and
// control characters and removes tabs, line feeds and carriage returns (an
// href wrapped over lines is one URL). Any other C0 control character or
// DEL left, anywhere, the fragment included, rejects the URL (ReasonControl):
// a browser would percent-encode it, but no real page needs one, and a
// URL that carries an ANSI escape is an attack on whoever prints it. A
// port is written in decimal without leading zeros in every form. It
// allocates nothing when the URL is already in canonical form, and is
// safe for concurrent use.
func Canonicalize(raw string, maxLen int) (URL, error) {
	if maxLen <= 0 {
		maxLen = DefaultMaxURLLength
	}
	s := cleanRaw(raw)
	if i := indexControl(s); i >= 0 {
		return URL{}, reject(ReasonControl, raw, fmt.Sprintf("control character %q at byte %d", s[i], i))
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if len(s) > maxLen {
		return URL{}, reject(ReasonTooLong, raw, "longer than "+strconv.Itoa(maxLen)+" bytes")
	}
	rawScheme, rest, ok := splitScheme(s)
	if !ok {
		return URL{}, reject(ReasonScheme, raw, "not an absolute URL")
	}
	var scheme, defaultPort string
	switch {
	case strings.EqualFold(rawScheme, "http"):
		scheme, defaultPort = "http", "80"
	case strings.EqualFold(rawScheme, "https"):
		scheme, defaultPort = "https", "443"
	default:
		return URL{}, reject(ReasonScheme, raw, "scheme is not http or https")
	}
	if !strings.HasPrefix(rest, "//") {
		return URL{}, reject(ReasonParse, raw, "no // after the scheme")
	}
	rest = rest[2:]
	authEnd := strings.IndexAny(rest, "/?")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, tail := rest[:authEnd], rest[authEnd:]
	if strings.IndexByte(auth, '@') >= 0 {
		return URL{}, reject(ReasonUserinfo, raw, "userinfo in the authority")
	}
	rawHost, rawPort, hasColon, ok := splitHostPort(auth)
	if !ok {
		return URL{}, reject(ReasonHost, raw, "malformed authority")
	}
	host, ok := canonHost(rawHost)
	if !ok {
		return URL{}, reject(ReasonHost, raw, "invalid host")
	}
	port, ok := canonPort(rawPort, defaultPort)
	if !ok {
		return URL{}, reject(ReasonHost, raw, "invalid port")
	}
	// The request keeps a port as given, default or not, but in
	// decimal: "018001" is 18001 to us and would be dialled as such, but
	// the Host header and the inventory would show it otherwise.
	reqPort := strings.TrimLeft(rawPort, "0")

	rawPath, rawQuery, hasQuery := strings.Cut(tail, "?")
	reqPath, pathEsc := escapeInvalid(rawPath, false)
	reqPath, pathDots := removeDots(reqPath)
	if reqPath == "" {
		reqPath, pathEsc = "/", true
	}
	keyPath, keyPathNorm := normPct(reqPath)
	keyPath, keyPathDots := removeDots(keyPath)
	reqQuery, queryEsc := escapeInvalid(rawQuery, true)
	keyQuery, keyQueryNorm := normPct(reqQuery)

	reqSame := rawScheme == scheme && rawHost == host && (rawPort != "" || !hasColon) &&
		reqPort == rawPort && !pathEsc && !pathDots && !queryEsc
	request := s
	if !reqSame {
		request = join(scheme, host, reqPort, reqPath, reqQuery, hasQuery)
		if len(request) > maxLen {
			return URL{}, reject(ReasonTooLong, raw, "longer than "+strconv.Itoa(maxLen)+" bytes once made valid")
		}
	}
	key := request
	if !reqSame || rawPort != port || keyPathNorm || keyPathDots || keyQueryNorm {
		key = join(scheme, host, port, keyPath, keyQuery, hasQuery)
	}
	originLen := len(scheme) + 3 + len(host)
	if port != "" {
		originLen += 1 + len(port)
	}
	return URL{Request: request, Key: key, Origin: key[:originLen]}, nil
}

// Resolve resolves ref, a reference as found in a page (an href), against
// base, the page's URL (or its <base href>), following RFC 3986 §5.2 in its
// non-strict form (an "http:path" reference on an http base is relative),
// and canonicalises the result as Canonicalize does.
func Resolve(base URL, ref string, maxLen int) (URL, error) {
	r := cleanRaw(ref)
	if i := indexControl(r); i >= 0 {
		return URL{}, reject(ReasonControl, ref, fmt.Sprintf("control character %q at byte %d", r[i], i))
	}
	if i := strings.IndexByte(r, '#'); i >= 0 {
		r = r[:i]
	}
	b := base.Request
	bScheme, bRest, ok := splitScheme(b)
	if !ok || !strings.HasPrefix(bRest, "//") {
		return URL{}, reject(ReasonParse, ref, "base is not an absolute URL")
	}
	if scheme, rest, ok := splitScheme(r); ok {
		if !strings.EqualFold(scheme, bScheme) || strings.HasPrefix(rest, "//") {
			return Canonicalize(r, maxLen)
		}
		r = rest
	}
	// The base's authority ends at its path, which Canonicalize made non-empty.
	pathStart := len(bScheme) + 3 + strings.IndexAny(bRest[2:], "/?")
	if pathStart < len(bScheme)+3 {
		pathStart = len(b)
	}
	basePath, _, _ := strings.Cut(b[pathStart:], "?")
	switch {
	case strings.HasPrefix(r, "//"):
		return Canonicalize(bScheme+":"+r, maxLen)
	case r == "":
		return Canonicalize(b, maxLen)
	case r[0] == '/':
		return Canonicalize(b[:pathStart]+r, maxLen)
	case r[0] == '?':
		return Canonicalize(b[:pathStart]+basePath+r, maxLen)
	}
	dir := basePath[:strings.LastIndexByte(basePath, '/')+1]
	if dir == "" {
		dir = "/"
	}
	return Canonicalize(b[:pathStart]+dir+r, maxLen)
}

// cleanRaw strips leading and trailing C0 controls and spaces and removes
// tabs and newlines, as the WHATWG URL parser does before parsing.
func cleanRaw(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	s = s[i:j]
	for k := 0; k < len(s); k++ {
		if c := s[k]; c == '\t' || c == '\n' || c == '\r' {
			return strings.Map(func(r rune) rune {
				if r == '\t' || r == '\n' || r == '\r' {
					return -1
				}
				return r
			}, s)
		}
	}
	return s
}

// indexControl returns the index of the first C0 control character or DEL
// in s, or -1.
func indexControl(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return i
		}
	}
	return -1
}

// splitScheme splits s at the colon after an RFC 3986 scheme.
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return "", s, false
			}
		case c == ':' && i > 0:
			return s[:i], s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// splitHostPort splits an authority without userinfo into host and port.
func splitHostPort(auth string) (host, port string, hasColon, ok bool) {
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return "", "", false, false
		}
		host, rest := auth[:end+1], auth[end+1:]
		if rest == "" {
			return host, "", false, true
		}
		if rest[0] != ':' {
			return "", "", false, false
		}
		return host, rest[1:], true, true
	}
	if i := strings.LastIndexByte(auth, ':'); i >= 0 {
		return auth[:i], auth[i+1:], true, true
	}
	return auth, "", false, true
}

// canonPort returns the port in canonical decimal, or "" for none or the
// scheme's default.
func canonPort(p, defaultPort string) (string, bool) {
	if p == "" {
		return "", true
	}
	n := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return "", false
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return "", false
		}
	}
	if n == 0 {
		return "", false
	}
	if p[0] == '0' {
		p = strconv.Itoa(n)
	}
	if p == defaultPort {
		return "", true
	}
	return p, true
}

// canonHost returns the canonical form of a host: a lower-case ASCII name
// (internationalised names in punycode) or a bracketed IPv6 literal.
func canonHost(h string) (string, bool) {
	if strings.HasPrefix(h, "[") {
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", false
		}
		c := "[" + a.String() + "]"
		if c == h {
			return h, true
		}
		return c, true
	}
	lower, ok := checkASCIIHost(h)
	if ok {
		if lower {
			return strings.ToLower(h), true
		}
		return h, true
	}
	// Percent-encoded or non-ASCII: decode, map with IDNA, check again.
	dec := h
	if strings.IndexByte(h, '%') >= 0 {
		var good bool
		if dec, good = unescapeHost(h); !good {
			return "", false
		}
	}
	a, err := idna.Lookup.ToASCII(dec)
	if err != nil {
		return "", false
	}
	if lower, ok = checkASCIIHost(a); !ok {
		return "", false
	}
	if lower {
		a = strings.ToLower(a)
	}
	return a, true
}

// checkASCIIHost reports whether h is a valid ASCII host name (letters,
// digits, '-', '_', dot-separated labels of 1–63 bytes, at most 253 bytes
// plus an optional trailing dot) and whether it has upper-case letters.
func checkASCIIHost(h string) (hasUpper, ok bool) {
	if h == "" || len(h) > 254 || (len(h) == 254 && h[253] != '.') {
		return false, false
	}
	label := 0
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_':
			label++
		case 'A' <= c && c <= 'Z':
			hasUpper = true
			label++
		case c == '.':
			if label == 0 {
				return false, false
			}
			label = 0
		default:
			return false, false
		}
		if label > 63 {
			return false, false
		}
	}
	return hasUpper, true
}

// unescapeHost decodes the percent-escapes of a host.
func unescapeHost(h string) (string, bool) {
	b := make([]byte, 0, len(h))
	for i := 0; i < len(h); i++ {
		if h[i] != '%' {
			b = append(b, h[i])
			continue
		}
		if i+2 >= len(h) || !isHex(h[i+1]) || !isHex(h[i+2]) {
			return "", false
		}
		c := unhex(h[i+1])<<4 | unhex(h[i+2])
		if c == '%' {
			return "", false
		}
		b = append(b, c)
		i += 2
	}
	return string(b), true
}

// join assembles scheme://host[:port]path[?query].
func join(scheme, host, port, path, query string, hasQuery bool) string {
	n := len(scheme) + 3 + len(host) + len(path)
	if port != "" {
		n += 1 + len(port)
	}
	if hasQuery {
		n += 1 + len(query)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteString(path)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String()
}

// MustParse parses a URL the frontier made valid (a URL's Request, a
// lease's Referrer); it cannot fail, and an empty URL stands in if it ever
// did.
func MustParse(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		return &url.URL{}
	}
	return u
}
