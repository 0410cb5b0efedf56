package crawler

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/storage"
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
		if got := s.check(tc.url, origin, tc.depth); got != tc.want {
			t.Errorf("check(%s, depth %d) = %q, want %q", tc.url, tc.depth, got, tc.want)
		}
	}
}

func TestScopeEmptyAllowsAll(t *testing.T) {
	u := "http://anywhere.example/x/y/z?q=2099-01"
	if got := (&scope{}).check(u, "http://anywhere.example", 1000); got != "" {
		t.Fatalf("an empty scope rejected %s: %q", u, got)
	}
}

// TestSeedsAreTakenAsGiven checks that a seed outside scope.include is
// fetched (include and exclude judge what is found from it, as wget's
// accept and reject patterns do), and that a seed whose host scope.hosts
// leaves out is not contacted but recorded in the inventory.
func TestSeedsAreTakenAsGiven(t *testing.T) {
	a, b := newSite(t), newSite(t)
	a.set("/robots.txt", page{ctype: "text/plain", body: ""})
	b.set("/robots.txt", page{ctype: "text/plain", body: ""})
	a.html("/", "/docs/1", "/blog/1")
	a.html("/docs/1")
	a.html("/blog/1")
	b.html("/")
	cfg := testConfig(t, a.URL+"/", b.URL+"/")
	cfg.Scope.Hosts = []string{a.URL}
	cfg.Scope.Include = []string{"/docs/"}
	runCrawl(t, cfg)
	if h := a.hits(); h["/"] != 1 || h["/docs/1"] != 1 || h["/blog/1"] != 0 {
		t.Errorf("requests to A %v; want /, /docs/1 and not /blog/1", h)
	}
	if len(b.log) != 0 {
		t.Errorf("B, out of scope, was asked %d times", len(b.log))
	}
	inv := inventory(t, cfg.Output.URLs)
	if r := inv[a.URL+"/"]; r.Status != 200 || r.FoundVia != storage.FoundSeed {
		t.Errorf("record of seed A = %+v; want a 200 found as a seed", r)
	}
	if r, ok := inv[b.URL+"/"]; !ok || r.Status != 0 || r.FoundVia != storage.FoundSeed || r.Error != "out of scope: host" {
		t.Errorf("record of seed B = %+v (found %v); want status 0, a seed, out of scope: host", r, ok)
	}
}

// scope.max_query_variants: a path gets its first N distinct query strings,
// and those again; a further one is refused, a URL without a query never
// is, and another path or origin counts apart. A URL refused for another
// reason takes no slot.
func TestScopeQueryVariants(t *testing.T) {
	s := &scope{
		exclude: []*regexp.Regexp{regexp.MustCompile(`private`)},
		queries: newQueryVariants(3),
	}
	check := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return s.check(raw, u.Scheme+"://"+u.Host, 0)
	}
	for _, tc := range []struct{ url, want string }{
		{"http://h/cal?d=1", ""},
		{"http://h/cal?d=private", rejectExclude},
		{"http://h/cal?d=2", ""},
		{"http://h/cal?d=1", ""}, // found again: the same URL
		{"http://h/cal?d=3", ""},
		{"http://h/cal?d=4", rejectQueries},
		{"http://h/cal?d=2", ""},
		{"http://h/cal", ""},
		{"http://h/cal/?d=4", ""},   // another path
		{"http://h:81/cal?d=4", ""}, // another origin
		{"https://h/cal?d=4", ""},   // another origin
		{"http://h/other?d=4", ""},  // another path
		{"http://h/cal?d=5", rejectQueries},
	} {
		if got := check(tc.url); got != tc.want {
			t.Errorf("check(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
	if newQueryVariants(0) != nil {
		t.Error("max_query_variants: 0 keeps a count")
	}
}

// The counter's memory is bounded: on a crawl with more distinct query
// strings than a generation holds, no generation grows past its size, and
// a trap path still gets no more than its limit per generation.
func TestQueryVariantsBounded(t *testing.T) {
	q := newQueryVariants(10)
	admitted := 0
	for i := range 3 * queryGeneration {
		// A crawl of many paths with two queries each, and one trap path.
		u := &url.URL{Scheme: "http", Host: "h", Path: "/p" + strconv.Itoa(i/2), RawQuery: "q=" + strconv.Itoa(i%2)}
		if !q.admit(u) {
			t.Fatalf("%s refused", u)
		}
		if q.admit(&url.URL{Scheme: "http", Host: "h", Path: "/trap", RawQuery: "n=" + strconv.Itoa(i)}) {
			admitted++
		}
		for _, g := range []queryGen{q.cur, q.old} {
			if len(g.seen) > queryGeneration || len(g.counts) > queryGeneration {
				t.Fatalf("after %d URLs a generation holds %d hashes and %d counts", i, len(g.seen), len(g.counts))
			}
		}
	}
	// 3 generations filled by the crawl (and the trap's own entries):
	// the trap gets at most its limit again each time the generation
	// holding its count is dropped.
	t.Logf("the trap path got %d query strings over %d URLs", admitted, 3*queryGeneration)
	if most := 10 * 4; admitted > most {
		t.Errorf("the trap path got %d query strings, want ≤ %d", admitted, most)
	}
}
