package robots

import (
	"strings"
	"testing"
)

// FuzzParse parses anything and asks about any URL: it must not panic, the
// stats must add up, normalising must be idempotent, a URL and the URL of
// its normal form must get one verdict, the
// bucketed and the plain rule lists must agree, and where this package
// does not deviate from Google on purpose, the verdict must be Google's.
func FuzzParse(f *testing.F) {
	for _, c := range googleCases()[:60] {
		f.Add([]byte(c.robots), c.agent, c.url)
	}
	if body, err := testdataFile("edge.robots"); err == nil {
		f.Add(body, "FooBot", "http://example.com/shop/index.html")
	}
	f.Add([]byte("user-agent: *\ndisallow: /*a*a*a*a*a*b$\n"), "x", "/"+strings.Repeat("a", 300))
	f.Add([]byte("\xef\xbb\xbfuser-agent\tFooBot\r\nallow /%2A%24\rdisallow: /\n"), "FooBot/1.0", "//h/%2a$")
	f.Fuzz(func(t *testing.T, body []byte, agent, url string) {
		r := Parse(body)
		st := r.Stats()
		if st.Rules > st.Directives || st.Directives+st.Unknown+st.Malformed > st.Lines || st.Outside > st.Directives {
			t.Fatalf("stats do not add up: %+v", st)
		}
		g := r.ForAgent(agent)
		got := g.Allowed(url)
		n := string(appendPath(nil, url))
		if again := string(appendNormalized(nil, n, true)); again != n {
			t.Fatalf("normalising is not idempotent: %q, then %q", n, again)
		}
		if g.Allowed("http://h"+n) != got {
			t.Fatalf("url %q allowed %v, its normal form %q allowed %v", url, got, n, !got)
		}
		if r.forAgent(agent, 0).Allowed(url) != got {
			t.Fatalf("bucketed rules disagree on %q", url)
		}
		if len(body) <= 4096 && len(url) <= 512 && inCommonDomain(string(body), agent, url) {
			if want := googleAllowed(string(body), agent, url); got != want {
				t.Fatalf("agent %q url %q: allowed %v, Google %v", agent, url, got, want)
			}
		}
	})
}

// FuzzAllowed matches any pattern against any path: it must not panic, and
// on inputs that normalising leaves alone it must agree with Google's
// matcher.
func FuzzAllowed(f *testing.F) {
	f.Add("/fish*.php", "/fishheads/catfish.php?parameters")
	f.Add("/*.php$", "/filename.php")
	f.Add("/a$b$", "/a$b")
	f.Add("*", "/")
	f.Add("/%2A%24", "/*$")
	f.Add("/*a*a*a*a*a*a*a*b", "/"+strings.Repeat("a", 200))
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 256 || len(path) > 1024 {
			return // the oracle is quadratic
		}
		rl := compileOne(normalizePattern(pattern))
		p := appendPath(nil, path)
		got := rl != nil && rl.match(p)
		if pattern == "" {
			got = true
		}
		if !needsNormalizing(pattern) && !needsNormalizing(path) {
			if want := refMatches(refPath(path), pattern); got != want {
				t.Fatalf("pattern %q path %q: match %v, Google %v", pattern, path, got, want)
			}
		}
	})
}
