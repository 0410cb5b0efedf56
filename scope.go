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
	if s.now != nil && farYear(path+"?"+u.RawQuery, s.now().Year()) {
		return rejectCalendar
	}
	return ""
}

var yearPattern = regexp.MustCompile(`(?:^|[^0-9])((?:1[89]|2[0-9])[0-9]{2})(?:[-/_.]?(?:0[1-9]|1[0-2]))(?:[^0-9]|$)`)

// farYear reports whether s holds a year-and-month (2031/04, 2031-04,
// 203104) more than 2 years after or 30 years before thisYear: the pages a
// calendar's "next month" links lead to without end.
func farYear(s string, thisYear int) bool {
	for _, m := range yearPattern.FindAllStringSubmatch(s, -1) {
		y, _ := strconv.Atoi(m[1])
		if y > thisYear+2 || y < thisYear-30 {
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
