package sitemap

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxURLLength is the longest location accepted, in characters, as the
// protocol sets it.
const MaxURLLength = 2048

// locMode says which location rules apply to an entry.
type locMode uint8

const (
	modePage  locMode = iota // a page: same origin, under the sitemap's folder; relative resolved
	modeChild                // an index's child: same origin; relative resolved
	modeText                 // a line of a text sitemap: like a page, but absolute only
)

// scope holds what the location rules compare entries against: the
// sitemap's origin and folder, normalized.
type scope struct {
	base   *url.URL
	scheme string // lower case
	host   string // lower case, default port removed
	dir    string // normalized escaped path of the sitemap's folder, ending in '/'
	// fastPage and fastSite are the prefixes that the usual well-formed
	// entry starts with, for a check without parsing.
	fastPage, fastSite string
}

var (
	errNotHTTP = errors.New("not an absolute http or https URL")
	errNoHost  = errors.New("no host")
)

func newScope(sitemapURL string) (*scope, error) {
	u, err := url.Parse(sitemapURL)
	if err != nil {
		return nil, err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, errNotHTTP
	}
	if u.Host == "" {
		return nil, errNoHost
	}
	p := scopePath(u.EscapedPath())
	s := &scope{
		base:   u,
		scheme: scheme,
		host:   normHost(scheme, u),
		dir:    p[:strings.LastIndexByte(p, '/')+1],
	}
	s.fastSite = s.scheme + "://" + s.host + "/"
	s.fastPage = s.scheme + "://" + s.host + s.dir
	return s, nil
}

// check applies the location rules to raw, an entry's location with XML
// entities decoded and white space trimmed. It returns the URL to yield,
// or the rule broken (non-empty) and why.
func (s *scope) check(raw []byte, mode locMode) (string, Rule, string) {
	if s.fast(raw, mode) {
		return string(raw), "", ""
	}
	return s.checkSlow(string(raw), mode)
}

// fast reports whether raw passes the rules as it is written, by the
// check without parsing that the usual entry allows.
func (s *scope) fast(raw []byte, mode locMode) bool {
	if mode == modeChild {
		return fastOK(raw, s.fastSite)
	}
	return fastOK(raw, s.fastPage)
}

// fastOK reports whether raw is an absolute URL that starts with prefix
// (scheme, host and folder as normalized) and that the slow path would
// accept unchanged: no control characters, no percent-encoding, and no dot
// segments, backslashes or empty segments that normalization could move
// out of the folder.
func fastOK(raw []byte, prefix string) bool {
	if len(raw) > MaxURLLength || len(raw) < len(prefix) || string(raw[:len(prefix)]) != prefix {
		return false
	}
	rest := raw[len(prefix)-1:] // from the folder's last '/'
	inPath := true
	for i, c := range rest {
		switch {
		case c < 0x20 || c == 0x7f || c == '%' || c == '\\' || c == '/' && inPath && i > 0 && rest[i-1] == '/':
			return false
		case c == '?' || c == '#':
			inPath = false
		case c == '.' && inPath && rest[i-1] == '/':
			// rest[0] is '/', so i > 0. A "." or ".." segment?
			next := rest[i+1:]
			if len(next) > 0 && next[0] == '.' {
				next = next[1:]
			}
			if len(next) == 0 || next[0] == '/' || next[0] == '?' || next[0] == '#' {
				return false
			}
		}
	}
	return true
}

func (s *scope) checkSlow(str string, mode locMode) (string, Rule, string) {
	// url.Parse refuses control characters, but not in the fragment; an
	// escape sequence there (#\x1b[2J) would reach whoever prints the URL.
	if i := strings.IndexFunc(str, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		return "", RuleControl, "control character " + strconv.Quote(str[i:i+1]) + " at byte " + strconv.Itoa(i) + "; dropped"
	}
	if utf8.RuneCountInString(str) > MaxURLLength {
		return "", RuleTooLong, "longer than 2048 characters; dropped"
	}
	u, err := url.Parse(str)
	if err != nil {
		return "", RuleInvalidURL, "not a URL; dropped"
	}
	if u.Scheme == "" {
		if mode == modeText {
			return "", RuleInvalidURL, "not an absolute URL (a text sitemap lists absolute URLs only); dropped"
		}
		if s.looksLikeMissingScheme(u) {
			return "", RuleInvalidURL, "no scheme (http:// or https:// missing); dropped"
		}
		u = s.base.ResolveReference(u)
		str = u.String()
		if utf8.RuneCountInString(str) > MaxURLLength {
			return "", RuleTooLong, "resolves to a URL longer than 2048 characters; dropped"
		}
		if rule, why := s.inScope(u, mode); rule != "" {
			return "", rule, "relative URL resolves to " + str + ", " + why
		}
		return str, "", ""
	}
	if rule, why := s.inScope(u, mode); rule != "" {
		return "", rule, why
	}
	return str, "", ""
}

// inScope applies the scheme, origin and folder rules to an absolute u.
func (s *scope) inScope(u *url.URL, mode locMode) (Rule, string) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return RuleScheme, "scheme " + scheme + " is not http or https; dropped"
	}
	if u.Opaque != "" || u.Host == "" {
		return RuleInvalidURL, "no host; dropped"
	}
	if scheme != s.scheme || normHost(scheme, u) != s.host {
		return RuleScope, "not on " + s.fastSite + " (scheme, host and port must be the sitemap's); dropped"
	}
	if mode != modeChild && !strings.HasPrefix(scopePath(u.EscapedPath()), s.dir) {
		return RuleScope, "not under " + s.fastPage + " (the sitemap's folder); dropped"
	}
	return "", ""
}

// looksLikeMissingScheme reports whether a relative reference starts with
// the sitemap's own host name ("www.example.com/page"): a URL whose scheme
// was left out rather than a path to resolve.
func (s *scope) looksLikeMissingScheme(u *url.URL) bool {
	if u.Host != "" || strings.HasPrefix(u.Path, "/") {
		return false
	}
	first, _, _ := strings.Cut(u.Path, "/")
	host := strings.ToLower(s.base.Hostname())
	first = strings.ToLower(first)
	return first == host || first == "www."+host || "www."+first == host
}

// normHost returns u's host in lower case, the default port of scheme
// removed, IPv6 literals in brackets.
func normHost(scheme string, u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	if strings.IndexByte(h, ':') >= 0 {
		h = "[" + h + "]"
	}
	port := u.Port()
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return h
	}
	return h + ":" + port
}

// normPath returns an escaped path in RFC 3986 normal form for comparison:
// percent-encodings of unreserved characters decoded, the others in upper
// case, dot segments removed, and "/" for an empty path.
func normPath(p string) string {
	p = removeDotSegments(normPercent(p))
	if p == "" {
		return "/"
	}
	return p
}

// backslashes turns a backslash, escaped or not, into a slash.
var backslashes = strings.NewReplacer("\\", "/", "%5C", "/", "%5c", "/")

// scopePath returns an escaped path in the form the folder rule compares:
// normPath's, after turning backslashes into slashes and runs of slashes
// into one, as browsers and many servers do, so that "/shop//../x" or
// "/shop/..\x" cannot pass for a path under /shop/.
func scopePath(p string) string {
	if strings.ContainsAny(p, "\\%") {
		p = backslashes.Replace(p)
	}
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	return normPath(p)
}

// canonical returns the identity of a URL for duplicate detection: scheme
// and host in lower case, default port removed, path normalized (see
// normPath), the query kept as written, the fragment dropped. A string that
// does not parse is returned unchanged.
func canonical(raw string) string {
	if c, ok := canonicalFast(raw); ok {
		return c
	}
	return canonicalParsed(raw)
}

// canonicalParsed is canonical for any URL, by parsing it.
func canonicalParsed(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return raw
	}
	scheme := strings.ToLower(u.Scheme)
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(normHost(scheme, u))
	b.WriteString(normPath(u.EscapedPath()))
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(u.RawQuery)
	}
	return b.String()
}

// canonicalFast is canonical without parsing, for the usual URL: a lower
// case http or https scheme and host name, no user info, no default port,
// a path of characters that need no escaping with no percent-encoding and
// no dot segment, and a query and fragment of printable ASCII. ok is false
// for any other URL, which canonical parses. Such a URL is its own
// canonical form, less its fragment and with "/" for an empty path.
func canonicalFast(raw string) (c string, ok bool) {
	var rest, defPort string
	switch {
	case strings.HasPrefix(raw, "https://"):
		rest, defPort = raw[len("https://"):], "443"
	case strings.HasPrefix(raw, "http://"):
		rest, defPort = raw[len("http://"):], "80"
	default:
		return "", false
	}
	i := 0
	for i < len(rest) && ('a' <= rest[i] && rest[i] <= 'z' || '0' <= rest[i] && rest[i] <= '9' || rest[i] == '.' || rest[i] == '-') {
		i++
	}
	if i == 0 {
		return "", false
	}
	if i < len(rest) && rest[i] == ':' {
		j := i + 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		if j == i+1 || j-i-1 > 5 || rest[i+1:j] == defPort {
			return "", false
		}
		i = j
	}
	if i < len(rest) && rest[i] != '/' && rest[i] != '?' && rest[i] != '#' {
		return "", false
	}
	hostEnd := len(raw) - len(rest) + i
	p := i
	for p < len(rest) && pathSafe(rest[p]) {
		p++
	}
	if hasDotSegment(rest[i:p]) {
		return "", false
	}
	end := p // the end of the query, where the fragment starts
	for ; end < len(rest) && rest[end] != '#'; end++ {
		if c := rest[end]; c <= ' ' || c >= 0x7f || end == p && c != '?' {
			return "", false
		}
	}
	for k := end + 1; k < len(rest); k++ {
		if c := rest[k]; c <= ' ' || c >= 0x7f || c == '%' {
			return "", false
		}
	}
	c = raw[:len(raw)-len(rest)+end]
	if p == i {
		c = raw[:hostEnd] + "/" + rest[p:end]
	}
	return c, true
}

// pathSafe reports whether c stands for itself in an escaped path: an
// unreserved character, a sub-delimiter, ':', '@' or '/'.
func pathSafe(c byte) bool {
	return isUnreserved(c) || c == '/' || c == ':' || c == '@' ||
		c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' || c == ')' ||
		c == '*' || c == '+' || c == ',' || c == ';' || c == '='
}

// normPercent decodes percent-encoded unreserved characters and upper-cases
// the hex digits of the rest.
func normPercent(p string) string {
	if strings.IndexByte(p, '%') < 0 {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]) {
			v := unhex(p[i+1])<<4 | unhex(p[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upper(p[i+1]))
				b.WriteByte(upper(p[i+2]))
			}
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// hasDotSegment reports whether path has a "." or ".." segment.
func hasDotSegment(p string) bool {
	for {
		i := strings.IndexByte(p, '.')
		if i < 0 {
			return false
		}
		if i == 0 || p[i-1] == '/' {
			rest := p[i+1:]
			if rest == "" || rest[0] == '/' || rest == "." || strings.HasPrefix(rest, "./") {
				return true
			}
		}
		p = p[i+1:]
	}
}

// removeDotSegments is RFC 3986 section 5.2.4.
func removeDotSegments(p string) string {
	if !hasDotSegment(p) {
		return p
	}
	abs := strings.HasPrefix(p, "/")
	segs := strings.Split(p, "/")
	if abs {
		segs = segs[1:]
	}
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if abs {
		r = "/" + r
	}
	return r
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

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
