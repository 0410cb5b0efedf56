package robots

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// compileOne compiles one normalised pattern; nil if it can never match.
func compileOne(pattern string) *rule {
	var c compiler
	c.add(pattern, false)
	if len(c.rules) == 0 {
		return nil
	}
	return &c.rules[0]
}

// TestMatchAgainstGoogle compares the greedy matcher with Google's
// position-set matcher on every short pattern and path over a small
// alphabet, at random.
func TestMatchAgainstGoogle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const patAlpha, pathAlpha = "/ab*$", "/ab$*"
	randString := func(alpha string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return string(b)
	}
	for range 200000 {
		pattern := randString(patAlpha, r.IntN(8))
		path := "/" + randString(pathAlpha, r.IntN(10))
		want := refMatches(path, pattern)
		var got bool
		if pattern == "" {
			got = true // Google: an empty pattern matches, with priority 0
		} else if rl := compileOne(pattern); rl != nil {
			got = rl.match([]byte(path))
		}
		if got != want {
			t.Fatalf("pattern %q path %q: match = %v, Google %v", pattern, path, got, want)
		}
	}
}

func TestMatchPriority(t *testing.T) {
	for _, c := range []struct {
		pattern string
		prio    int32
	}{
		{"/a", 2},
		{"/a*", 3},
		{"/a$", 3},
		{"/%E3%83%84", 10}, // counted encoded, as Google counts it
		{"/a%2Ab", 6},      // the literal "*" counts as written
		{"/a$b", 4},
	} {
		if rl := compileOne(c.pattern); rl == nil || rl.prio != c.prio {
			t.Errorf("priority of %q = %+v, want %d", c.pattern, rl, c.prio)
		}
	}
}

// TestMatchHostile checks that patterns built to make a backtracking
// matcher explode stay linear: the test would time out otherwise.
func TestMatchHostile(t *testing.T) {
	long := "/" + strings.Repeat("a", 200000)
	body := "user-agent: *\ndisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n" +
		"disallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b$\n" +
		"disallow: " + strings.Repeat("/*", 5000) + "b\n"
	g := Parse([]byte(body)).ForAgent("FooBot")
	for range 20 {
		if !g.Allowed(long) {
			t.Fatal("hostile pattern matched")
		}
	}
	if g.Allowed(long + "b") {
		t.Fatal("hostile pattern did not match")
	}
}

// TestNormalizedIsStable checks that normalising a URL does not change its
// verdict: Allowed(u) == Allowed(normalised path of u).
func TestNormalizedIsStable(t *testing.T) {
	body := "user-agent: *\ndisallow: /a%2Fb\ndisallow: /%7Euser/\nallow: /ツ\ndisallow: /*%2A\ndisallow: /x$\nallow: /p?q=%3D\n"
	g := Parse([]byte(body)).ForAgent("FooBot")
	for _, u := range []string{
		"http://e.com/a%2fb", "http://e.com/a/b", "/%7euser/x", "/~user/x", "/%E3%83%84", "/ツ",
		"/q*", "/q%2a", "/x", "/x%24", "/p?q=%3d", "/p?q==", "/%", "/%zz", "/%c3%a9", "/%%61b", "/%25",
	} {
		n := string(appendPath(nil, u))
		if g.Allowed(u) != g.Allowed(n) {
			t.Errorf("%q allowed %v, its normal form %q allowed %v", u, g.Allowed(u), n, g.Allowed(n))
		}
		if again := string(appendPath(nil, n)); again != n {
			t.Errorf("normalising %q twice: %q then %q", u, n, again)
		}
	}
}

func TestAllowedDoesNotAllocate(t *testing.T) {
	body, err := testdataFile("realistic.robots")
	if err != nil {
		t.Fatal(err)
	}
	g := Parse(body).ForAgent("ExampleBot/1.0")
	urls := []string{
		"https://www.example.com/search?q=shoes&sort=price",
		"https://www.example.com/products/ツ/%e3%83%84?x=%41",
		"/account/settings",
		"https://www.example.com/" + strings.Repeat("deep/", 150),
	}
	for _, u := range urls {
		if n := testing.AllocsPerRun(100, func() { g.Allowed(u) }); n != 0 {
			t.Errorf("Allowed(%.40q…) allocates %v times", u, n)
		}
	}
}
