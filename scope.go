package crawler

import (
	"hash/maphash"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// Reasons a URL is kept out of the frontier; each is counted and reported.
const (
	rejectHost      = "host"              // its origin is not in scope.hosts
	rejectInclude   = "include"           // it matches none of scope.include
	rejectExclude   = "exclude"           // it matches one of scope.exclude
	rejectDepth     = "depth"             // deeper than scope.max_depth
	rejectLength    = "url-length"        // longer than the URL length limit
	rejectPathDepth = "path-depth"        // more path segments than allowed
	rejectRepeated  = "repeated-segments" // a path segment repeated too often
	rejectCalendar  = "calendar"          // a date far in the future or past
	rejectQueries   = "query-variants"    // its path has scope.max_query_variants query strings already
	rejectNesting   = "requisite-nesting" // a requisite of a requisite of ... nested deeper than maxRequisiteNesting
)

// scope decides which URLs may enter the frontier. Its only mutable state
// is the count of query strings per path (queries), which has a lock of its
// own; it is safe for concurrent use.
type scope struct {
	hosts       map[string]bool // origins; empty means any
	include     []*regexp.Regexp
	exclude     []*regexp.Regexp
	maxDepth    int // 0: unlimited
	maxLen      int
	maxSegments int
	maxRepeats  int
	now         func() time.Time
	// queries counts distinct query strings per path, for
	// scope.max_query_variants; nil is no limit. newScope sets it with
	// newQueryVariants(cfg.Scope.MaxQueryVariants).
	queries *queryVariants
	// requisites are the hosts out of hosts that a page's requisites
	// may be fetched from (scope.requisites).
	requisites requisiteHosts
}

// check returns "" when the URL whose request form is request (canonical,
// of origin) at depth may be queued, or the reason it may not. The URL is
// parsed only once its host and depth pass: most of what a docs page links
// to and scope refuses is on other hosts.
func (s *scope) check(request, origin string, depth int) string {
	switch {
	case len(s.hosts) > 0 && !s.hosts[origin]:
		return rejectHost
	case s.maxDepth > 0 && depth > s.maxDepth:
		return rejectDepth
	}
	return s.checkURL(frontier.MustParse(request), true)
}

// checkExternal is check for a link to a host out of scope that
// scope.check_external asks: exclude, the length and the trap guards
// apply; include and max_depth, which say what of the crawl's own hosts
// is crawled, do not.
func (s *scope) checkExternal(u *url.URL) string {
	return s.checkURL(u, false)
}

// checkURL is the part of check that judges a URL as written: its
// length, include (unless include is false), exclude, and the trap guards.
func (s *scope) checkURL(u *url.URL, include bool) string {
	full := u.String()
	switch {
	case s.maxLen > 0 && len(full) > s.maxLen:
		return rejectLength
	case include && len(s.include) > 0 && !matchAny(s.include, full):
		return rejectInclude
	case matchAny(s.exclude, full):
		return rejectExclude
	}
	if why := s.trap(u); why != "" {
		return why
	}
	// Last, so that a URL refused for another reason takes no slot.
	if !s.queries.admit(u) {
		return rejectQueries
	}
	return ""
}

// checkStart is check for a seed or a sitemap the config names, at depth
// 0: taken as given, as wget takes its start URLs, so that include,
// exclude and the trap guards judge only what is found from them. Only its
// host must be in scope, since no other host is ever contacted.
func (s *scope) checkStart(origin string) string {
	if len(s.hosts) > 0 && !s.hosts[origin] {
		return rejectHost
	}
	return ""
}

// trap applies the guards against URL spaces without end: too many path
// segments, one segment repeated (/a/b/a/b/a/b), and calendar pages that
// walk years away from today.
func (s *scope) trap(u *url.URL) string {
	path := strings.Trim(u.EscapedPath(), "/")
	n := strings.Count(path, "/") + 1 // segments, counted without making them: every link is judged
	if s.maxSegments > 0 && n > s.maxSegments {
		return rejectPathDepth
	}
	if s.maxRepeats > 0 && n > s.maxRepeats {
		counts := make(map[string]int, n)
		for seg := range strings.SplitSeq(path, "/") {
			if seg == "" {
				continue
			}
			if counts[seg]++; counts[seg] > s.maxRepeats {
				return rejectRepeated
			}
		}
	}
	if s.now != nil && farYear(u, s.now().Year()) {
		return rejectCalendar
	}
	return ""
}

// yearMonth finds a year followed by a month (2031/5, 2031-05, 1990_01):
// the shape of a calendar's pages. A year alone is too often an ID.
var yearMonth = regexp.MustCompile(`(?:^|[/?&=_.-])((?:19|20|21)[0-9]{2})[/_.-](?:0?[1-9]|1[0-2])(?:$|[^0-9])`)

// farYear reports whether u names a calendar page more than 2 years after
// or 30 years before thisYear: where "next month" and "previous month"
// links lead without end. The year is one followed by a month in the path
// or query (/cal/2031/5, ?month=1990-01), or the value of a query
// parameter named like a year (?y=2031&m=05, ?year=1800).
func farYear(u *url.URL, thisYear int) bool {
	path := u.EscapedPath()
	if !fourDigits(path) && !fourDigits(u.RawQuery) {
		return false // no year: most URLs, checked on every page that links to them
	}
	far := func(y int) bool { return y > thisYear+2 || y < thisYear-30 }
	s := path + "?" + u.RawQuery
	for i := 0; i < len(s); {
		loc := yearMonth.FindStringSubmatchIndex(s[i:])
		if loc == nil {
			break
		}
		if y, _ := strconv.Atoi(s[i+loc[2] : i+loc[3]]); far(y) {
			return true
		}
		i += loc[3]
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k = strings.ToLower(k); k != "y" && !strings.Contains(k, "year") {
			continue
		}
		if y, err := strconv.Atoi(v); err == nil && len(v) == 4 && far(y) {
			return true
		}
	}
	return false
}

// fourDigits reports whether s holds four ASCII digits in a row, as each
// year farYear reads does.
func fourDigits(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			if run++; run == 4 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// queryVariants bounds the query strings one path may be crawled with: a
// calendar (?month=…), a session id in the URL, or a faceted search makes
// one path into an endless number of URLs. It admits the first limit
// distinct query strings of each origin+path, and again any it admitted
// (a link found twice is the same URL, in scope both times); it refuses
// other new ones. A URL without a query is not counted.
//
// Its memory is bounded whatever the crawl's size: it keeps 64-bit hashes
// of path+query and a count per path hash, in two generations of at most
// queryGeneration entries each (about 16 MB at worst). When the current
// generation fills, the older one is dropped; a path whose counts are
// dropped so may be given up to limit new variants again, which happens
// at most once per queryGeneration variants admitted in all, so a trap
// yields at most limit URLs per 131,072 admitted, not without end. A hash
// collision (one in 2^64) admits a URL as if seen before: harmless.
type queryVariants struct {
	limit int
	seed  maphash.Seed
	mu    sync.Mutex
	cur   queryGen
	old   queryGen
}

// queryGeneration is the most entries one generation holds.
const queryGeneration = 1 << 17

type queryGen struct {
	seen   map[uint64]struct{} // hash of path?query, for each admitted
	counts map[uint64]int      // hash of path: query strings admitted
}

func newQueryGen() queryGen {
	return queryGen{seen: map[uint64]struct{}{}, counts: map[uint64]int{}}
}

// newQueryVariants returns the counter for scope.max_query_variants, or
// nil (no limit) for limit 0.
func newQueryVariants(limit int) *queryVariants {
	if limit <= 0 {
		return nil
	}
	return &queryVariants{limit: limit, seed: maphash.MakeSeed(), cur: newQueryGen(), old: newQueryGen()}
}

// admit reports whether u may be queued, and counts it if it is new.
func (q *queryVariants) admit(u *url.URL) bool {
	if q == nil || (u.RawQuery == "" && !u.ForceQuery) {
		return true
	}
	path := u.Scheme + "://" + u.Host + u.EscapedPath()
	ph := maphash.String(q.seed, path)
	qh := maphash.String(q.seed, path+"?"+u.RawQuery)
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.cur.seen[qh]; ok {
		return true
	}
	if _, ok := q.old.seen[qh]; ok {
		return true
	}
	if q.cur.counts[ph]+q.old.counts[ph] >= q.limit {
		return false
	}
	if len(q.cur.seen) >= queryGeneration || len(q.cur.counts) >= queryGeneration {
		q.old, q.cur = q.cur, newQueryGen()
	}
	q.cur.seen[qh] = struct{}{}
	q.cur.counts[ph]++
	return true
}
