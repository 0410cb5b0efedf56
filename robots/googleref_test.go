package robots

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// googleAllowed is a slow, literal re-implementation of Google's
// RobotsMatcher::OneAgentAllowedByRobots (robots.cc), written for testing:
// it streams the body line by line with Google's state machine and its
// position-set matcher, and leaves the URL raw. It is the oracle for the
// differential tests, on inputs where this package does not deviate from
// Google on purpose (no "%" and no octet above 0x7F, a valid product token,
// not /robots.txt).
func googleAllowed(body, agent, url string) bool {
	m := refMatcher{agent: agent, path: refPath(url)}
	const maxLine = 2083 * 8
	line := make([]byte, 0, maxLine)
	bom := 0
	lastCR := false
	for i := 0; i < len(body); i++ {
		ch := body[i]
		if bom < 3 {
			if ch == "\xEF\xBB\xBF"[bom] {
				bom++
				continue
			}
			bom = 3
		}
		if ch != '\n' && ch != '\r' {
			if len(line) < maxLine-1 {
				line = append(line, ch)
			}
			continue
		}
		if !(len(line) == 0 && lastCR && ch == '\n') {
			m.line(string(line))
		}
		line = line[:0]
		lastCR = ch == '\r'
	}
	m.line(string(line))
	return !m.disallow()
}

type refMatcher struct {
	agent, path                                     string
	seenGlobal, seenSpecific, everSpecific, seenSep bool
	allowSpecific, disallowSpecific                 int
	allowGlobal, disallowGlobal                     int
}

func (m *refMatcher) line(l string) {
	if i := strings.IndexByte(l, 0); i >= 0 {
		l = l[:i] // a C string
	}
	if i := strings.IndexByte(l, '#'); i >= 0 {
		l = l[:i]
	}
	l = strings.Trim(l, " \t\v\f\r\n")
	sep := strings.IndexByte(l, ':')
	if sep < 0 {
		sep = strings.IndexAny(l, " \t")
		if sep < 0 {
			return
		}
		if strings.ContainsAny(strings.TrimLeft(l[sep:], " \t"), " \t") {
			return
		}
	}
	key := strings.Trim(l[:sep], " \t\v\f\r\n")
	if key == "" {
		return
	}
	value := strings.Trim(l[sep+1:], " \t\v\f\r\n")
	lk := strings.ToLower(key)
	has := func(ps ...string) bool {
		for _, p := range ps {
			if strings.HasPrefix(lk, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("user-agent", "useragent", "user agent"):
		m.userAgent(value)
	case has("allow"):
		m.rule(value, true)
	case has("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"):
		m.rule(value, false)
	}
}

func (m *refMatcher) userAgent(v string) {
	if m.seenSep {
		m.seenSpecific, m.seenGlobal, m.seenSep = false, false, false
	}
	if len(v) >= 1 && v[0] == '*' && (len(v) == 1 || strings.ContainsRune(" \t\n\v\f\r", rune(v[1]))) {
		m.seenGlobal = true
		return
	}
	n := 0
	for n < len(v) && (v[n] >= 'a' && v[n] <= 'z' || v[n] >= 'A' && v[n] <= 'Z' || v[n] == '-' || v[n] == '_') {
		n++
	}
	if strings.EqualFold(v[:n], m.agent) {
		m.everSpecific, m.seenSpecific = true, true
	}
}

func (m *refMatcher) rule(pattern string, allow bool) {
	if !m.seenGlobal && !m.seenSpecific {
		return
	}
	m.seenSep = true
	prio := -1
	if refMatches(m.path, pattern) {
		prio = len(pattern)
	} else if allow {
		if s := strings.LastIndexByte(pattern, '/'); s >= 0 && strings.HasPrefix(pattern[s:], "/index.htm") {
			m.rule(pattern[:s+1]+"$", true)
			return
		}
	}
	if prio < 0 {
		return
	}
	switch {
	case m.seenSpecific && allow:
		m.allowSpecific = max(m.allowSpecific, prio)
	case m.seenSpecific:
		m.disallowSpecific = max(m.disallowSpecific, prio)
	case allow:
		m.allowGlobal = max(m.allowGlobal, prio)
	default:
		m.disallowGlobal = max(m.disallowGlobal, prio)
	}
}

func (m *refMatcher) disallow() bool {
	if m.allowSpecific > 0 || m.disallowSpecific > 0 {
		return m.disallowSpecific > m.allowSpecific
	}
	if m.everSpecific {
		return false
	}
	if m.allowGlobal > 0 || m.disallowGlobal > 0 {
		return m.disallowGlobal > m.allowGlobal
	}
	return false
}

// refMatches is Google's matcher: the set of path positions that the
// pattern read so far can reach, "$" special only at the end.
func refMatches(path, pattern string) bool {
	pos := []int{0}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i == len(pattern)-1 {
			return pos[len(pos)-1] == len(path)
		}
		if c == '*' {
			var all []int
			for p := pos[0]; p <= len(path); p++ {
				all = append(all, p)
			}
			pos = all
			continue
		}
		var next []int
		for _, p := range pos {
			if p < len(path) && path[p] == c {
				next = append(next, p+1)
			}
		}
		if len(next) == 0 {
			return false
		}
		pos = next
	}
	return true
}

// refPath is Google's GetPathParamsQuery, written independently of pathOf.
func refPath(url string) string {
	start := 0
	if strings.HasPrefix(url, "//") {
		start = 2
	}
	early := indexAnyFrom(url, "/?;", start)
	proto := indexFromStr(url, "://", start)
	if early >= 0 && (proto < 0 || early < proto) {
		proto = -1
	}
	if proto < 0 {
		proto = start
	} else {
		proto += 3
	}
	p := indexAnyFrom(url, "/?;", proto)
	if p < 0 {
		return "/"
	}
	hash := indexFromStr(url, "#", start)
	if hash >= 0 && hash < p {
		return "/"
	}
	end := len(url)
	if hash >= 0 {
		end = hash
	}
	path := url[p:end]
	if url[p] != '/' {
		path = "/" + path
	}
	if i := strings.IndexByte(path, 0); i >= 0 {
		path = path[:i] // RobotsMatcher keeps the path as a C string
	}
	return path
}

func indexAnyFrom(s, chars string, from int) int {
	if i := strings.IndexAny(s[from:], chars); i >= 0 {
		return from + i
	}
	return -1
}

func indexFromStr(s, sub string, from int) int {
	if i := strings.Index(s[from:], sub); i >= 0 {
		return from + i
	}
	return -1
}

// inCommonDomain reports whether this package and Google's library should
// agree on (robots, agent, url): no octet that normalising would change, a
// valid product token, and not the always-allowed /robots.txt.
func inCommonDomain(robots, agent, url string) bool {
	// A byte order mark, or the start of one, is skipped by both.
	for _, bom := range []string{"\xEF\xBB\xBF", "\xEF\xBB", "\xEF"} {
		if strings.HasPrefix(robots, bom) {
			robots = robots[len(bom):]
			break
		}
	}
	if needsNormalizing(robots) || needsNormalizing(url) || refPath(url) == "/robots.txt" {
		return false
	}
	return ProductToken(agent) == agent // "" included: Google compares it too
}

// randomRobots builds a robots.txt from pieces that exercise the grammar:
// key spellings, missing colons, comments, blank lines, every line end,
// "*" groups, merged groups, wildcards and anchors.
func randomRobots(r *rand.Rand) string {
	keys := []string{"user-agent", "User-Agent", "useragent", "user agent", "user-agentx", "allow", "ALLOW", "disallow",
		"Disallow", "dissallow", "disalow", "diasllow", "disallaw", "sitemap", "crawl-delay", "foo", "allowed", "disallowing",
		"dis allow", "", " "}
	agents := []string{"*", "* foo", "*foo", "FooBot", "foobot", "FooBot/1.0", "BarBot", "Bar Bot", "baz", "", "Foo-Bot_2", "123",
		"*\tbar", "FooBot*", "/x", "Foo_Bot"}
	var b strings.Builder
	if r.IntN(8) == 0 {
		b.WriteString("\xEF\xBB\xBF"[:1+r.IntN(3)]) // a BOM, or part of one
	}
	lines := r.IntN(14)
	for range lines {
		switch r.IntN(10) {
		case 0:
			b.WriteString("# comment")
		case 1:
			// blank
		case 2:
			// Lines that are almost directives: a NUL ends a line for
			// Google's parser, \v and \f are white space but not separators.
			b.WriteString([]string{"\x00disallow: /", "disallow", "allow:", "user-agent:", ":", "a b c", "disallow / x", "disallow\v/", "\f"}[r.IntN(9)])
		default:
			k := keys[r.IntN(len(keys))]
			b.WriteString(strings.Repeat(" ", r.IntN(2)))
			b.WriteString(k)
			switch r.IntN(6) {
			case 0:
				b.WriteString(" ")
			case 1:
				b.WriteString("\t: ")
			default:
				b.WriteString(":")
				b.WriteString(strings.Repeat(" ", r.IntN(2)))
			}
			if strings.Contains(strings.ToLower(k), "agent") {
				b.WriteString(agents[r.IntN(len(agents))])
			} else {
				b.WriteString(randomPattern(r))
			}
			if r.IntN(8) == 0 {
				b.WriteString([]string{" # trailing", "#", " x", "\x00zz", "\t"}[r.IntN(5)])
			}
		}
		b.WriteString([]string{"\n", "\r\n", "\r", "\n\n"}[r.IntN(4)])
	}
	return b.String()
}

func randomPattern(r *rand.Rand) string {
	pieces := []string{"/", "/", "a", "b", "ab", "*", "$", ".html", "?", "=", "x/", "index.html", "index.htm", "/robots.txt", ";", " "}
	var b strings.Builder
	if r.IntN(6) != 0 {
		b.WriteByte('/')
	}
	for n := r.IntN(6); n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randomURL makes a URL, half the time from a pattern of body with its
// "*"s filled in and its "$" dropped or kept, so that rules often match.
func randomURL(r *rand.Rand, body string) string {
	prefix := []string{"http://example.com", "https://example.com:8080", "", "//example.com", "example.com",
		"http://u:p@example.com", "http://u@h?x", "ftp://h", "http://h;p", "http:/h", "a://b://c", "/x://y"}
	path := randomPattern(r)
	if fields := strings.FieldsFunc(body, func(c rune) bool { return c == ':' || c == '\n' || c == '\r' }); len(fields) > 0 && r.IntN(2) == 0 {
		path = strings.TrimSpace(fields[r.IntN(len(fields))])
		for strings.Contains(path, "*") {
			path = strings.Replace(path, "*", []string{"", "a", "b/", "x$y", "*"}[r.IntN(5)], 1)
		}
		if r.IntN(2) == 0 {
			path = strings.TrimSuffix(path, "$")
		}
		if r.IntN(3) == 0 {
			path += []string{"a", "/", "b", "$"}[r.IntN(4)]
		}
	}
	return prefix[r.IntN(len(prefix))] + path + []string{"", "#frag", "?q=1", "#", "?", ";x"}[r.IntN(6)]
}

// TestDifferentialGoogle checks this package against googleAllowed on
// random robots.txt files, agents and URLs in the common domain.
func TestDifferentialGoogle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	agents := []string{"FooBot", "foobot", "BarBot", "baz", "Foo-Bot_", "QuxBot", ""}
	checked := 0
	for range 3000 {
		body := randomRobots(r)
		rules := Parse([]byte(body))
		for _, agent := range agents {
			g := rules.ForAgent(agent)
			indexed := rules.forAgent(agent, 0)
			for range 5 {
				url := randomURL(r, body)
				if !inCommonDomain(body, agent, url) {
					continue
				}
				checked++
				want := googleAllowed(body, agent, url)
				if got := g.Allowed(url); got != want {
					t.Fatalf("agent %q url %q: allowed = %v, Google %v\nrobots.txt: %q", agent, url, got, want, body)
				}
				if got := indexed.Allowed(url); got != want {
					t.Fatalf("bucketed: agent %q url %q: allowed = %v, Google %v\nrobots.txt: %q", agent, url, got, want, body)
				}
			}
		}
	}
	if checked < 50000 {
		t.Fatalf("only %d cases in the common domain", checked)
	}
}
