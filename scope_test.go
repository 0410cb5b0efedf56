package crawler

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestScopeCheck(t *testing.T) {
	s := &scope{
		hosts:       map[string]bool{"http://127.0.0.2:8001": true},
		include:     []*regexp.Regexp{regexp.MustCompile(`/docs/`)},
		exclude:     []*regexp.Regexp{regexp.MustCompile(`\.pdf$`)},
		maxDepth:    3,
		maxLen:      80,
		maxSegments: 6,
		maxRepeats:  2,
		now:         func() time.Time { return time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC) },
	}
	for _, tc := range []struct {
		url   string
		depth int
		want  string
	}{
		{"http://127.0.0.2:8001/docs/a.html", 3, ""},
		{"http://127.0.0.3:8001/docs/a.html", 0, rejectHost},
		{"http://127.0.0.2:8001/docs/a.html", 4, rejectDepth},
		{"http://127.0.0.2:8001/blog/a.html", 0, rejectInclude},
		{"http://127.0.0.2:8001/docs/a.pdf", 0, rejectExclude},
		{"http://127.0.0.2:8001/docs/" + strings.Repeat("x", 60), 0, rejectLength},
		{"http://127.0.0.2:8001/docs/1/2/3/4/5/6", 0, rejectPathDepth},
		{"http://127.0.0.2:8001/docs/a/docs/a/docs", 0, rejectRepeated},
		{"http://127.0.0.2:8001/docs/a/b/a/b", 0, ""},
		{"http://127.0.0.2:8001/docs/cal/2031/04/", 0, rejectCalendar},
		{"http://127.0.0.2:8001/docs/cal?month=1990-01", 0, rejectCalendar},
		{"http://127.0.0.2:8001/docs/cal?month=2027-01", 0, ""},
		{"http://127.0.0.2:8001/docs/v2031/x", 0, ""},
		{"http://127.0.0.2:8001/docs/calendar/2031/5", 0, rejectCalendar},
		{"http://127.0.0.2:8001/docs/cal?y=2031&m=05", 0, rejectCalendar},
		{"http://127.0.0.2:8001/docs/cal?year=1800", 0, rejectCalendar},
		{"http://127.0.0.2:8001/docs/cal/2031", 0, ""}, // a year alone may be an ID
		{"http://127.0.0.2:8001/docs/cal/2026/11/", 0, ""},
		{"http://127.0.0.2:8001/docs/page-4096.html", 0, ""},
		{"http://127.0.0.2:8001/docs/item/1234", 0, ""},
		{"http://127.0.0.2:8001/docs/thread/1234/5", 0, ""}, // not a year
		{"http://127.0.0.2:8001/docs/2099/12/31/", 0, rejectCalendar},
		{"http://127.0.0.2:8001/docs/cal?Year=2031", 0, rejectCalendar},
		{"http://127.0.0.2:8001/docs/list?page=2031", 0, ""},
		{"http://127.0.0.2:8001/docs/id/20311299", 0, ""},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		origin := u.Scheme + "://" + u.Host
		if got := s.check(u, origin, tc.depth); got != tc.want {
			t.Errorf("check(%s, depth %d) = %q, want %q", tc.url, tc.depth, got, tc.want)
		}
	}
}

func TestScopeEmptyAllowsAll(t *testing.T) {
	u, _ := url.Parse("http://anywhere.example/x/y/z?q=2099-01")
	if got := (&scope{}).check(u, "http://anywhere.example", 1000); got != "" {
		t.Fatalf("an empty scope rejected %s: %q", u, got)
	}
}
