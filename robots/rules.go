package robots

import (
	"slices"
	"strings"
	"time"
)

// AllowAll returns Rules that allow every URL to every agent: what applies
// when robots.txt answers 4xx (RFC 9309 §2.3.1.3).
func AllowAll() *Rules { return &Rules{} }

// DisallowAll returns Rules that disallow every URL but /robots.txt to every
// agent: what applies while robots.txt is unreachable (RFC 9309 §2.3.1.4).
func DisallowAll() *Rules {
	return &Rules{groups: []group{{global: true, rules: []rawRule{{pattern: "/"}}}}}
}

// Sitemaps returns the values of the Sitemap lines, in file order, wherever
// they appear. The caller may modify the returned slice.
func (r *Rules) Sitemaps() []string { return slices.Clone(r.sitemaps) }

// Stats returns what Parse read and skipped.
func (r *Rules) Stats() Stats { return r.stats }

// Allowed reports whether userAgent may fetch target. It chooses the group
// anew on every call: to check many URLs, use ForAgent once and
// Group.Allowed.
func (r *Rules) Allowed(userAgent, target string) bool {
	return r.ForAgent(userAgent).Allowed(target)
}

// ProductToken returns the product token of a user agent, by which it is
// matched with user-agent lines: its leading letters, "-" and "_", provided
// they are the whole agent or are followed by "/" ("ExampleBot/1.0
// (+https://example.com/bot)" is ExampleBot). Otherwise ("Foo Bar",
// "Foobot*", "Foobot2") it returns "", and ForAgent lets such an agent match
// no user-agent line, so only the "*" groups apply: this is what Google's
// library does with an agent that is not a valid token. (An agent that is
// itself "" matches the lines that name no token, as it does there.)
func ProductToken(userAgent string) string {
	tok := lineToken(userAgent)
	if len(tok) == len(userAgent) || userAgent[len(tok)] == '/' {
		return tok
	}
	return ""
}

// ForAgent returns the group of rules that applies to userAgent: the merged
// groups whose user-agent lines name its product token (see ProductToken),
// or when none does the merged "*" groups, or when there are none an empty
// group that allows everything. It never returns nil.
func (r *Rules) ForAgent(userAgent string) *Group {
	return r.forAgent(userAgent, indexMin)
}

// forAgent is ForAgent with the number of rules from which to bucket them.
func (r *Rules) forAgent(userAgent string, indexFrom int) *Group {
	var chosen []choice
	// An empty agent is compared too, as Google's library compares it: it
	// names the user-agent lines that start with no token ("User-agent:",
	// "User-agent: 123"). An agent that is not a product token matches none.
	if tok := ProductToken(userAgent); tok != "" || userAgent == "" {
		for i := range r.groups {
			g := &r.groups[i]
			for j, a := range g.agents {
				if equalFoldASCII(a, tok) {
					chosen = append(chosen, choice{g, j})
					break
				}
			}
		}
	}
	if chosen == nil {
		for i := range r.groups {
			if r.groups[i].global {
				chosen = append(chosen, choice{&r.groups[i], -1})
			}
		}
	}
	return newGroup(chosen, indexFrom)
}

// choice is a group chosen for an agent: by its agent-th user-agent line, or
// by "*" when agent is -1.
type choice struct {
	g     *group
	agent int
}

// Group is the set of rules that applies to one crawler, ready to answer
// many URLs. It is immutable and safe for concurrent use.
type Group struct {
	// rules holds the compiled rules. When index is nil they are in the
	// order in which they are tried: the longest pattern first and, among
	// patterns of one length, allow first. Otherwise they are grouped by
	// bucket (see bucketOf), rules[index[b]:index[b+1]] holding bucket b in
	// that order.
	rules    []rule
	index    []uint32
	delay    time.Duration
	hasDelay bool
}

// indexMin is the number of rules from which a Group buckets them.
const indexMin = 16

// buckets is the number of buckets: the second octet of a normalised path is
// ASCII, and never NUL. Bucket 0 holds the rules whose literal start is
// shorter than two octets, which every path must try.
const buckets = 128

// Allowed reports whether the group allows target: an absolute URL, or a
// path with its query. Only the path, params and query count; the
// fragment does not. It does not allocate unless the normalised path and
// query are longer than 1 KiB.
func (g *Group) Allowed(target string) bool {
	if len(g.rules) == 0 {
		return true
	}
	var buf [pathBuf]byte
	return g.allowedPath(appendPath(buf[:0], target))
}

// pathBuf is the size of the buffer on the stack for a normalised path.
const pathBuf = 1024

// CrawlDelay returns the Crawl-delay of the group, and false when it has
// none. When several lines or merged groups give one, the largest wins. A
// Crawl-delay line applies to the user-agent lines above it in its group.
func (g *Group) CrawlDelay() (time.Duration, bool) { return g.delay, g.hasDelay }

// allowedPath decides for a normalised path: the longest matching pattern
// wins, allow on a tie, allow when none matches.
func (g *Group) allowedPath(p []byte) bool {
	if string(p) == "/robots.txt" {
		return true
	}
	best, allow := int32(0), true
	if g.index == nil {
		_, allow = firstMatch(g.rules, p, best, allow)
		return allow
	}
	if b := bucketOf(p); b != 0 {
		best, allow = firstMatch(g.rules[g.index[b]:g.index[b+1]], p, best, allow)
	}
	_, allow = firstMatch(g.rules[g.index[0]:g.index[1]], p, best, allow)
	return allow
}

// firstMatch returns the priority and kind of the first rule of rs (in the
// order in which they are tried) that matches p and beats the best so far,
// or that best when none does.
func firstMatch(rs []rule, p []byte, best int32, allow bool) (int32, bool) {
	for i := range rs {
		r := &rs[i]
		if r.prio < best || r.prio == best && (allow || !r.allow) {
			break // no rule from here on can beat the best
		}
		if r.match(p) {
			return r.prio, r.allow
		}
	}
	return best, allow
}

// bucketOf is the bucket of a normalised path or of a rule's literal start:
// its second octet, or 0 when it is shorter.
func bucketOf(b []byte) int {
	if len(b) < 2 || b[1] >= buckets {
		return 0
	}
	return int(b[1])
}

// newGroup merges and compiles the groups chosen for an agent, bucketing
// the rules when there are at least indexFrom.
func newGroup(chosen []choice, indexFrom int) *Group {
	g := &Group{}
	var c compiler
	for _, ch := range chosen {
		for _, d := range ch.g.delays {
			if ch.agent < 0 && d.global || ch.agent >= 0 && ch.agent < d.agents {
				g.delay, g.hasDelay = max(g.delay, d.d), true
			}
		}
		for _, rr := range ch.g.rules {
			c.add(rr.pattern, rr.allow)
			// Google: "Allow: /dir/index.html" (or .htm…) allows "/dir/" too,
			// as "Allow: /dir/$", with that pattern's own length.
			if rr.allow {
				if dir, ok := indexDir(rr.pattern); ok {
					c.add(dir+"$", true)
				}
			}
		}
	}
	g.rules = c.rules
	if len(g.rules) >= indexFrom {
		g.index = make([]uint32, buckets+1)
		for i := range g.rules {
			g.index[g.rules[i].bucket+1]++
		}
		for b := 1; b <= buckets; b++ {
			g.index[b] += g.index[b-1]
		}
	}
	slices.SortStableFunc(g.rules, func(a, b rule) int {
		if g.index != nil && a.bucket != b.bucket {
			return int(a.bucket) - int(b.bucket)
		}
		if a.prio != b.prio {
			return int(b.prio - a.prio)
		}
		switch {
		case a.allow && !b.allow:
			return -1
		case !a.allow && b.allow:
			return 1
		}
		return 0
	})
	return g
}

// indexDir returns the directory of a pattern whose last segment starts with
// "index.htm", with its trailing slash.
func indexDir(pattern string) (string, bool) {
	i := strings.LastIndexByte(pattern, '/')
	if i < 0 || !strings.HasPrefix(pattern[i:], "/index.htm") {
		return "", false
	}
	return pattern[:i+1], true
}
