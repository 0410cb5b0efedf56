package robots

import (
	"strconv"
	"strings"
	"time"
)

// MaxSize is how much of a robots.txt body is read: 500 KiB, the least RFC
// 9309 §2.5 allows and what Google reads. Bytes beyond it are ignored.
const MaxSize = 500 * 1024

// MaxLineLength is how many bytes of a line are kept; the rest of the line is
// ignored. It is Google's kMaxLineLen (8 × 2083, eight of the longest URLs
// browsers accept) less the terminating NUL its C buffer keeps.
const MaxLineLength = 8*2083 - 1

// Stats counts what Parse read and what it skipped.
type Stats struct {
	Lines      int  // lines read, blank and comment lines included
	Directives int  // lines with a known key (user-agent, allow, disallow, sitemap, crawl-delay) and a usable value
	Groups     int  // groups (runs of user-agent lines and the rules after them)
	Rules      int  // allow and disallow lines inside a group
	Unknown    int  // lines with a key this parser does not know; ignored
	Malformed  int  // lines that are not "key: value", and known keys with unusable values; ignored
	Outside    int  // allow, disallow and crawl-delay lines before the first user-agent line; ignored
	LongLines  int  // lines longer than MaxLineLength, cut there
	Truncated  bool // the body was longer than MaxSize; the rest was not read
}

// Ignored is the number of lines that had no effect: unknown keys, malformed
// lines and rules outside any group.
func (s Stats) Ignored() int { return s.Unknown + s.Malformed + s.Outside }

// Rules is a parsed robots.txt. It is immutable and safe for concurrent use
// by multiple goroutines; the usual pattern is to Parse a body once, choose
// the crawler's Group once with ForAgent, and ask that Group about many URLs.
type Rules struct {
	groups   []group
	sitemaps []string
	stats    Stats
}

// group is one group as written: its user-agent lines and its rules.
type group struct {
	agents []string // product tokens of the user-agent lines, "*" excepted; "" when a line has none
	global bool     // one of the user-agent lines is "*"
	rules  []rawRule
	delays []delay
}

// delay is a Crawl-delay line. Like Google's parser, this one lets only
// allow and disallow lines end a group's user-agent lines, so a Crawl-delay
// may come between them; it applies to the agents named before it.
type delay struct {
	d      time.Duration
	agents int  // it applies to agents[:agents]
	global bool // and to every agent, if "*" came before it
}

// rawRule is an allow or disallow line with its pattern normalised.
type rawRule struct {
	pattern string
	allow   bool
}

// Parse reads a robots.txt body. It never fails: lines it cannot use are
// skipped and counted in Stats. Only the first MaxSize bytes are read.
func Parse(body []byte) *Rules {
	p := parser{r: &Rules{}, cur: -1}
	if len(body) > MaxSize {
		body = body[:MaxSize]
		p.r.stats.Truncated = true
	}
	// Skip a UTF-8 byte order mark, or as much of one as is there.
	const bom = "\xEF\xBB\xBF"
	n := 0
	for n < len(bom) && n < len(body) && body[n] == bom[n] {
		n++
	}
	// One copy of the body; every pattern and sitemap is a substring of it
	// unless normalising changes it.
	p.lines(string(body[n:]))
	p.r.stats.Groups = len(p.r.groups)
	return p.r
}

type parser struct {
	r       *Rules
	cur     int  // index of the group being read; -1 before the first user-agent line
	sawRule bool // an allow or disallow line followed the current group's user-agent lines
}

// lines splits s at CR, LF and CRLF and parses each line. The positions of
// the next CR and LF are kept between lines, so a file that uses only one
// of them is still scanned once.
func (p *parser) lines(s string) {
	nextCR, nextLF := -1, -1
	for start := 0; start < len(s); {
		if nextCR < start {
			nextCR = indexFrom(s, start, '\r')
		}
		if nextLF < start {
			nextLF = indexFrom(s, start, '\n')
		}
		end := min(nextCR, nextLF)
		p.r.stats.Lines++
		if end == len(s) {
			p.line(s[start:])
			return
		}
		p.line(s[start:end])
		start = end + 1
		if end == nextCR && end+1 == nextLF {
			start++ // CRLF
		}
	}
}

// indexFrom is the index of c in s at or after from, or len(s).
func indexFrom(s string, from int, c byte) int {
	if i := strings.IndexByte(s[from:], c); i >= 0 {
		return from + i
	}
	return len(s)
}

// The kinds of line Google's parser knows, and crawl-delay.
type kind int

const (
	kindUnknown kind = iota
	kindUserAgent
	kindAllow
	kindDisallow
	kindSitemap
	kindCrawlDelay
)

// line parses one line, without its line end.
func (p *parser) line(line string) {
	st := &p.r.stats
	if len(line) > MaxLineLength {
		line = line[:MaxLineLength]
		st.LongLines++
	}
	// Google's parser works on a C string: a NUL ends the line.
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = trimSpace(line)
	if line == "" {
		return
	}
	key, value, ok := splitKeyValue(line)
	if !ok {
		st.Malformed++
		return
	}
	k := keyKind(key)
	if k == kindUnknown {
		st.Unknown++
		return
	}
	switch k {
	case kindUserAgent:
		p.userAgent(value)
	case kindAllow, kindDisallow:
		if p.cur < 0 {
			st.Outside++
			break
		}
		g := &p.r.groups[p.cur]
		g.rules = append(g.rules, rawRule{pattern: normalizePattern(value), allow: k == kindAllow})
		p.sawRule = true
		st.Rules++
	case kindSitemap:
		if value == "" {
			st.Malformed++
			return
		}
		p.r.sitemaps = append(p.r.sitemaps, value)
	case kindCrawlDelay:
		d, ok := parseCrawlDelay(value)
		if !ok {
			st.Malformed++
			return
		}
		if p.cur < 0 {
			st.Outside++
			break
		}
		g := &p.r.groups[p.cur]
		g.delays = append(g.delays, delay{d: d, agents: len(g.agents), global: g.global})
	}
	st.Directives++
}

// userAgent handles a user-agent line: it joins the current group, or starts
// a new one when rules came since the group's last user-agent line.
func (p *parser) userAgent(value string) {
	if p.cur < 0 || p.sawRule {
		p.r.groups = append(p.r.groups, group{})
		p.cur = len(p.r.groups) - 1
		p.sawRule = false
	}
	g := &p.r.groups[p.cur]
	// Google: "*" followed by whitespace and anything is still "*".
	if value != "" && value[0] == '*' && (len(value) == 1 || isSpace(value[1])) {
		g.global = true
		return
	}
	// A line whose value starts with no token ("User-agent:", "123") is
	// kept as "": Google's library matches it with an empty agent.
	g.agents = append(g.agents, lineToken(value))
}

// splitKeyValue splits a trimmed, non-empty line at its first colon. Without
// a colon, Google accepts whitespace as the separator when the line holds
// exactly two words ("disallow /x").
func splitKeyValue(line string) (key, value string, ok bool) {
	sep := strings.IndexByte(line, ':')
	if sep < 0 {
		sep = strings.IndexAny(line, " \t")
		if sep < 0 {
			return "", "", false
		}
		rest := strings.TrimLeft(line[sep:], " \t")
		if strings.ContainsAny(rest, " \t") {
			return "", "", false
		}
	}
	key = trimSpace(line[:sep])
	if key == "" {
		return "", "", false
	}
	return key, trimSpace(line[sep+1:]), true
}

// keyKind classifies a key as Google does: by case-insensitive prefix, with
// the misspellings it accepts.
func keyKind(key string) kind {
	switch {
	case hasPrefixFold(key, "user-agent"), hasPrefixFold(key, "useragent"), hasPrefixFold(key, "user agent"):
		return kindUserAgent
	case hasPrefixFold(key, "allow"):
		return kindAllow
	case hasPrefixFold(key, "disallow"), hasPrefixFold(key, "dissallow"), hasPrefixFold(key, "dissalow"),
		hasPrefixFold(key, "disalow"), hasPrefixFold(key, "diasllow"), hasPrefixFold(key, "disallaw"):
		return kindDisallow
	case hasPrefixFold(key, "sitemap"), hasPrefixFold(key, "site-map"):
		return kindSitemap
	case hasPrefixFold(key, "crawl-delay"), hasPrefixFold(key, "crawldelay"), hasPrefixFold(key, "crawl delay"):
		return kindCrawlDelay
	}
	return kindUnknown
}

// maxDelay bounds a Crawl-delay so that the duration cannot overflow.
const maxDelay = time.Duration(1<<63 - 1)

// parseCrawlDelay reads a non-negative decimal number of seconds ("10",
// "0.5", ".5"). Signs, exponents, units and anything else are refused.
func parseCrawlDelay(v string) (time.Duration, bool) {
	digits := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && strings.IndexByte(v[i+1:], '.') < 0:
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	// Only a range error is possible here: too many digits for a float64.
	secs, _ := strconv.ParseFloat(v, 64)
	if secs >= float64(maxDelay/time.Second) {
		return maxDelay, true
	}
	return time.Duration(secs * float64(time.Second)), true
}

// lineToken is Google's ExtractUserAgent: the leading run of letters, "-"
// and "_" of a user-agent line's value.
func lineToken(v string) string {
	n := 0
	for n < len(v) && isTokenByte(v[n]) {
		n++
	}
	return v[:n]
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_'
}

// isSpace is C's isspace in the "C" locale, which Google's parser uses.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func trimSpace(s string) string {
	for s != "" && isSpace(s[0]) {
		s = s[1:]
	}
	for s != "" && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// hasPrefixFold reports whether s starts with prefix, ignoring ASCII case
// (only ASCII: Unicode folding would let "ſ" stand for "s").
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFoldASCII(s[:len(prefix)], prefix)
}

// equalFoldASCII reports whether a and b are equal ignoring ASCII case.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
