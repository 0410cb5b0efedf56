package crawler

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
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
)

// scope decides which URLs may enter the frontier. It holds no mutable
// state and is safe for concurrent use.
type scope struct {
	hosts       map[string]bool // origins; empty means any
	include     []*regexp.Regexp
	exclude     []*regexp.Regexp
	maxDepth    int // 0: unlimited
	maxLen      int
	maxSegments int
	maxRepeats  int
	now         func() time.Time
}

// check returns "" when u (canonical, of origin) at depth may be queued, or
// the reason it may not.
func (s *scope) check(u *url.URL, origin string, depth int) string {
	switch {
	case len(s.hosts) > 0 && !s.hosts[origin]:
		return rejectHost
	case s.maxDepth > 0 && depth > s.maxDepth:
		return rejectDepth
	}
	full := u.String()
	switch {
	case s.maxLen > 0 && len(full) > s.maxLen:
		return rejectLength
	case len(s.include) > 0 && !matchAny(s.include, full):
		return rejectInclude
	case matchAny(s.exclude, full):
		return rejectExclude
	}
	return s.trap(u)
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
	path := u.EscapedPath()
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if s.maxSegments > 0 && len(segs) > s.maxSegments {
		return rejectPathDepth
	}
	if s.maxRepeats > 0 && len(segs) > s.maxRepeats {
		counts := make(map[string]int, len(segs))
		for _, seg := range segs {
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
	far := func(y int) bool { return y > thisYear+2 || y < thisYear-30 }
	s := u.EscapedPath() + "?" + u.RawQuery
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

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
