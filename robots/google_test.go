package robots

import (
	"slices"
	"strings"
	"testing"
)

// verdictCase is one expectation: may agent fetch url under robots?
type verdictCase struct {
	name   string
	robots string
	agent  string
	url    string
	want   bool
}

func runVerdicts(t *testing.T, cases []verdictCase) {
	t.Helper()
	for _, c := range cases {
		if got := Parse([]byte(c.robots)).Allowed(c.agent, c.url); got != c.want {
			t.Errorf("%s: agent %q url %q: allowed = %v, want %v\nrobots.txt:\n%s",
				c.name, c.agent, c.url, got, c.want, c.robots)
		}
	}
}

// expect builds the cases of one robots.txt body: url → want.
func expect(name, robots, agent string, urls map[string]bool) []verdictCase {
	var cs []verdictCase
	for _, u := range slices.Sorted(mapsKeys(urls)) {
		cs = append(cs, verdictCase{name, robots, agent, u, urls[u]})
	}
	return cs
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestGoogleReference ports every verdict expectation of Google's
// robots_test.cc (github.com/google/robotstxt), test by test, in its order.
//
// Deliberate deviations, where this package normalises the URL as RFC 9309
// §2.2.2 asks and Google's library leaves it raw (see doc.go); Google's
// expectation is in the comment next to each:
//   - ID_Encoding, "Allow: /foo/bar/ツ", URL /foo/bar/ツ: allowed (Google: disallowed)
//   - ID_Encoding, "Allow: /foo/bar/%E3%83%84", URL /foo/bar/ツ: allowed (Google: disallowed)
//   - ID_Encoding, "Allow: /foo/bar/%62%61%7A", URL /foo/bar/baz: allowed (Google: disallowed)
func TestGoogleReference(t *testing.T) { runVerdicts(t, googleCases()) }

// TestGoogleOracle checks the oracle of the differential tests against the
// expectations of Google's tests that are in the common domain.
func TestGoogleOracle(t *testing.T) {
	n := 0
	for _, c := range googleCases() {
		if !inCommonDomain(c.robots, c.agent, c.url) {
			continue
		}
		n++
		if got := googleAllowed(c.robots, c.agent, c.url); got != c.want {
			t.Errorf("%s: googleAllowed(agent %q, url %q) = %v, want %v", c.name, c.agent, c.url, got, c.want)
		}
	}
	if n < 100 {
		t.Errorf("only %d cases checked", n)
	}
}

func googleCases() []verdictCase {
	var cases []verdictCase
	add := func(cs ...verdictCase) { cases = append(cases, cs...) }

	// GoogleOnly_SystemTest.
	{
		r := "user-agent: FooBot\ndisallow: /\n"
		add(verdictCase{"SystemTest/empty robots", "", "FooBot", "", true},
			verdictCase{"SystemTest/empty agent", r, "", "", true},
			verdictCase{"SystemTest/empty url", r, "FooBot", "", false},
			verdictCase{"SystemTest/all empty", "", "", "", true})
	}
	// ID_LineSyntax_Line.
	{
		u := "http://foo.bar/x/y"
		add(verdictCase{"LineSyntax/correct", "user-agent: FooBot\ndisallow: /\n", "FooBot", u, false},
			verdictCase{"LineSyntax/incorrect", "foo: FooBot\nbar: /\n", "FooBot", u, true},
			verdictCase{"LineSyntax/no colon", "user-agent FooBot\ndisallow /\n", "FooBot", u, false})
	}
	// ID_LineSyntax_Groups.
	{
		r := "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n"
		w, x, y, z, foo := "http://foo.bar/w/a", "http://foo.bar/x/b", "http://foo.bar/y/c", "http://foo.bar/z/d", "http://foo.bar/foo/bar/"
		add(verdictCase{"Groups", r, "FooBot", x, true},
			verdictCase{"Groups", r, "FooBot", z, true},
			verdictCase{"Groups", r, "FooBot", y, false},
			verdictCase{"Groups", r, "BarBot", y, true},
			verdictCase{"Groups", r, "BarBot", w, true},
			verdictCase{"Groups", r, "BarBot", z, false},
			verdictCase{"Groups", r, "BazBot", z, true},
			verdictCase{"Groups/outside", r, "FooBot", foo, false},
			verdictCase{"Groups/outside", r, "BarBot", foo, false},
			verdictCase{"Groups/outside", r, "BazBot", foo, false})
	}
	// ID_LineSyntax_Groups_OtherRules.
	{
		r1 := "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n"
		r2 := "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n"
		u := "http://foo.bar/"
		add(verdictCase{"OtherRules/sitemap", r1, "FooBot", u, false},
			verdictCase{"OtherRules/sitemap", r1, "BarBot", u, false},
			verdictCase{"OtherRules/unknown", r2, "FooBot", u, false},
			verdictCase{"OtherRules/unknown", r2, "BarBot", u, false})
	}
	// ID_REPLineNamesCaseInsensitive.
	for _, r := range []string{
		"USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n",
		"user-agent: FooBot\nallow: /x/\ndisallow: /\n",
		"uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n",
	} {
		add(verdictCase{"LineNamesCaseInsensitive", r, "FooBot", "http://foo.bar/x/y", true},
			verdictCase{"LineNamesCaseInsensitive", r, "FooBot", "http://foo.bar/a/b", false})
	}
	// ID_UserAgentValueCaseInsensitive.
	for _, r := range []string{
		"User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n",
		"User-Agent: foo bar\nAllow: /x/\nDisallow: /\n",
		"User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n",
	} {
		for _, a := range []string{"Foo", "foo"} {
			add(verdictCase{"UserAgentValueCaseInsensitive", r, a, "http://foo.bar/x/y", true},
				verdictCase{"UserAgentValueCaseInsensitive", r, a, "http://foo.bar/a/b", false})
		}
	}
	// GoogleOnly_AcceptUserAgentUpToFirstSpace.
	{
		r := "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n"
		add(verdictCase{"UpToFirstSpace", r, "Foo", "http://foo.bar/x/y", true},
			// "Foo Bar" is not a valid product token: no group but "*".
			verdictCase{"UpToFirstSpace", r, "Foo Bar", "http://foo.bar/x/y", false})
	}
	// ID_GlobalGroups_Secondary.
	{
		global := "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n"
		specific := "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n"
		u := "http://foo.bar/x/y"
		add(verdictCase{"GlobalGroups", "", "FooBot", u, true},
			verdictCase{"GlobalGroups", global, "FooBot", u, false},
			verdictCase{"GlobalGroups", global, "BarBot", u, true},
			verdictCase{"GlobalGroups", specific, "QuxBot", u, true})
	}
	// ID_AllowDisallow_Value_CaseSensitive.
	add(verdictCase{"ValueCaseSensitive", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/y", false},
		verdictCase{"ValueCaseSensitive", "user-agent: FooBot\ndisallow: /X/\n", "FooBot", "http://foo.bar/x/y", true})
	// ID_LongestMatch.
	{
		u := "http://foo.bar/x/page.html"
		add(verdictCase{"LongestMatch/1", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot", u, false},
			verdictCase{"LongestMatch/2", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", u, true},
			verdictCase{"LongestMatch/2", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/", false},
			verdictCase{"LongestMatch/3", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot", u, true},
			verdictCase{"LongestMatch/4", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot", u, true},
			verdictCase{"LongestMatch/5", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x", false},
			verdictCase{"LongestMatch/5", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x/", true},
			verdictCase{"LongestMatch/6", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot", u, true},
			verdictCase{"LongestMatch/7", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://foo.bar/page.html", false},
			verdictCase{"LongestMatch/7", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://foo.bar/page", true},
			verdictCase{"LongestMatch/8", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", u, true},
			verdictCase{"LongestMatch/8", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://foo.bar/x/y.html", false},
			verdictCase{"LongestMatch/9", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/x/page", true},
			verdictCase{"LongestMatch/9", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/y/page", false})
	}
	// ID_Encoding.
	{
		r := "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n"
		add(verdictCase{"Encoding/query", r, "FooBot", "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true})
		r = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n"
		add(verdictCase{"Encoding/utf8", r, "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true},
			verdictCase{"Encoding/utf8", r, "FooBot", "http://foo.bar/foo/bar/ツ", true}) // Google: false (deviation)
		r = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n"
		add(verdictCase{"Encoding/percent", r, "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true},
			verdictCase{"Encoding/percent", r, "FooBot", "http://foo.bar/foo/bar/ツ", true}) // Google: false (deviation)
		r = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n"
		add(verdictCase{"Encoding/unreserved", r, "FooBot", "http://foo.bar/foo/bar/baz", true}, // Google: false (deviation)
			verdictCase{"Encoding/unreserved", r, "FooBot", "http://foo.bar/foo/bar/%62%61%7A", true})
	}
	// ID_SpecialCharacters.
	{
		r := "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n"
		add(verdictCase{"Special/star", r, "FooBot", "http://foo.bar/foo/bar/quz", false},
			verdictCase{"Special/star", r, "FooBot", "http://foo.bar/foo/quz", true},
			verdictCase{"Special/star", r, "FooBot", "http://foo.bar/foo//quz", true},
			verdictCase{"Special/star", r, "FooBot", "http://foo.bar/foo/bax/quz", true})
		r = "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n"
		add(verdictCase{"Special/dollar", r, "FooBot", "http://foo.bar/foo/bar", false},
			verdictCase{"Special/dollar", r, "FooBot", "http://foo.bar/foo/bar/qux", true},
			verdictCase{"Special/dollar", r, "FooBot", "http://foo.bar/foo/bar/", true},
			verdictCase{"Special/dollar", r, "FooBot", "http://foo.bar/foo/bar/baz", true})
		r = "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n"
		add(verdictCase{"Special/comment", r, "FooBot", "http://foo.bar/foo/bar", true},
			verdictCase{"Special/comment", r, "FooBot", "http://foo.bar/foo/quz", false})
	}
	// GoogleOnly_IndexHTMLisDirectory.
	{
		r := "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n"
		add(verdictCase{"IndexHTML", r, "foobot", "http://foo.com/allowed-slash/", true},
			verdictCase{"IndexHTML", r, "foobot", "http://foo.com/allowed-slash/index.htm", false},
			verdictCase{"IndexHTML", r, "foobot", "http://foo.com/allowed-slash/index.html", true},
			verdictCase{"IndexHTML", r, "foobot", "http://foo.com/anyother-url", false})
	}
	// GoogleOnly_LineTooLong.
	{
		const maxLineLen = 2083 * 8
		allow, disallow := "allow: ", "disallow: "
		long := longLine("/x/", maxLineLen-len("/x/")-len(disallow)+1, 'a')
		r := "user-agent: FooBot\n" + disallow + long + "/qux\n"
		add(verdictCase{"LineTooLong/1", r, "FooBot", "http://foo.bar/fux", true},
			verdictCase{"LineTooLong/1", r, "FooBot", "http://foo.bar" + long + "/fux", false})

		a := longLine("/x/", maxLineLen-len("/x/")-len(allow)+1, 'a')
		b := longLine("/x/", maxLineLen-len("/x/")-len(allow)+1, 'b')
		r = "user-agent: FooBot\ndisallow: /\n" + allow + a + "/qux\n" + allow + b + "/qux\n"
		add(verdictCase{"LineTooLong/2", r, "FooBot", "http://foo.bar/", false},
			verdictCase{"LineTooLong/2", r, "FooBot", "http://foo.bar" + a + "/qux", true},
			verdictCase{"LineTooLong/2", r, "FooBot", "http://foo.bar" + b + "/fux", true})
	}
	// GoogleOnly_DocumentationChecks.
	{
		r := "user-agent: FooBot\ndisallow: /\nallow: /fish\n"
		add(expect("Docs//fish", r, "FooBot", map[string]bool{
			"http://foo.bar/bar": false, "http://foo.bar/fish": true, "http://foo.bar/fish.html": true,
			"http://foo.bar/fish/salmon.html": true, "http://foo.bar/fishheads": true,
			"http://foo.bar/fishheads/yummy.html": true, "http://foo.bar/fish.html?id=anything": true,
			"http://foo.bar/Fish.asp": false, "http://foo.bar/catfish": false, "http://foo.bar/?id=fish": false,
		})...)
		r = "user-agent: FooBot\ndisallow: /\nallow: /fish*\n"
		add(expect("Docs//fish*", r, "FooBot", map[string]bool{
			"http://foo.bar/bar": false, "http://foo.bar/fish": true, "http://foo.bar/fish.html": true,
			"http://foo.bar/fish/salmon.html": true, "http://foo.bar/fishheads": true,
			"http://foo.bar/fishheads/yummy.html": true, "http://foo.bar/fish.html?id=anything": true,
			"http://foo.bar/Fish.bar": false, "http://foo.bar/catfish": false, "http://foo.bar/?id=fish": false,
		})...)
		r = "user-agent: FooBot\ndisallow: /\nallow: /fish/\n"
		add(expect("Docs//fish/", r, "FooBot", map[string]bool{
			"http://foo.bar/bar": false, "http://foo.bar/fish/": true, "http://foo.bar/fish/salmon": true,
			"http://foo.bar/fish/?salmon": true, "http://foo.bar/fish/salmon.html": true,
			"http://foo.bar/fish/?id=anything": true, "http://foo.bar/fish": false,
			"http://foo.bar/fish.html": false, "http://foo.bar/Fish/Salmon.html": false,
		})...)
		r = "user-agent: FooBot\ndisallow: /\nallow: /*.php\n"
		add(expect("Docs//*.php", r, "FooBot", map[string]bool{
			"http://foo.bar/bar": false, "http://foo.bar/filename.php": true,
			"http://foo.bar/folder/filename.php": true, "http://foo.bar/folder/filename.php?parameters": true,
			"http://foo.bar//folder/any.php.file.html": true, "http://foo.bar/filename.php/": true,
			"http://foo.bar/index?f=filename.php/": true, "http://foo.bar/php/": false,
			"http://foo.bar/index?php": false, "http://foo.bar/windows.PHP": false,
		})...)
		r = "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n"
		add(expect("Docs//*.php$", r, "FooBot", map[string]bool{
			"http://foo.bar/bar": false, "http://foo.bar/filename.php": true,
			"http://foo.bar/folder/filename.php": true, "http://foo.bar/filename.php?parameters": false,
			"http://foo.bar/filename.php/": false, "http://foo.bar/filename.php5": false,
			"http://foo.bar/php/": false, "http://foo.bar/filename?php": false,
			"http://foo.bar/aaaphpaaa": false, "http://foo.bar//windows.PHP": false,
		})...)
		r = "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n"
		add(expect("Docs//fish*.php", r, "FooBot", map[string]bool{
			"http://foo.bar/bar": false, "http://foo.bar/fish.php": true,
			"http://foo.bar/fishheads/catfish.php?parameters": true, "http://foo.bar/Fish.PHP": false,
		})...)
		add(verdictCase{"Docs/precedence", "user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot", "http://example.com/page", true},
			verdictCase{"Docs/precedence", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot", "http://example.com/folder/page", true},
			verdictCase{"Docs/precedence", "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot", "http://example.com/page.htm", false},
			verdictCase{"Docs/precedence", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://example.com/", true},
			verdictCase{"Docs/precedence", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://example.com/page.html", false})
	}
	return cases
}

// TestGoogleLineEndings ports ID_LinesNumbersAreCountedCorrectly: the same
// four directives in six lines whatever the line ends.
func TestGoogleLineEndings(t *testing.T) {
	files := map[string]string{
		"unix":       "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
		"dos":        "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n",
		"mac":        "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r",
		"no final":   "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /",
		"mixed":      "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /",
		"cr then lf": "User-Agent: foo\r\rAllow: /some/path\n\nUser-Agent: bar\r\n\nDisallow: /",
	}
	for name, body := range files {
		r := Parse([]byte(body))
		st := r.Stats()
		if st.Directives != 4 || st.Groups != 2 || st.Rules != 2 {
			t.Errorf("%s: stats %+v, want 4 directives, 2 groups, 2 rules", name, st)
		}
		if name != "cr then lf" && st.Lines != 6 {
			t.Errorf("%s: %d lines, want 6", name, st.Lines)
		}
		if !r.Allowed("foo", "/x") || r.Allowed("bar", "/x") {
			t.Errorf("%s: foo must be allowed /x and bar not", name)
		}
	}
}

// TestGoogleByteOrderMark ports ID_UTF8ByteOrderMarkIsSkipped.
func TestGoogleByteOrderMark(t *testing.T) {
	for _, c := range []struct {
		name                string
		body                string
		directives, unknown int
	}{
		{"full", "\xEF\xBB\xBFUser-Agent: foo\nAllow: /AnyValue\n", 2, 0},
		{"partial 2", "\xEF\xBBUser-Agent: foo\nAllow: /AnyValue\n", 2, 0},
		{"partial 1", "\xEFUser-Agent: foo\nAllow: /AnyValue\n", 2, 0},
		{"broken", "\xEF\x11\xBFUser-Agent: foo\nAllow: /AnyValue\n", 1, 1},
		{"middle", "User-Agent: foo\n\xEF\xBB\xBFAllow: /AnyValue\n", 1, 1},
	} {
		st := Parse([]byte(c.body)).Stats()
		if st.Directives != c.directives || st.Unknown != c.unknown {
			t.Errorf("%s: %d directives and %d unknown, want %d and %d", c.name, st.Directives, st.Unknown, c.directives, c.unknown)
		}
	}
	// The rule after a full BOM applies.
	if Parse([]byte("\xEF\xBB\xBFUser-Agent: foo\nDisallow: /x\n")).Allowed("foo", "/x") {
		t.Error("rule after a BOM ignored")
	}
}

// TestGoogleSitemap ports ID_NonStandardLineExample_Sitemap.
func TestGoogleSitemap(t *testing.T) {
	const loc = "http://foo.bar/sitemap.xml"
	const rest = "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n"
	for _, body := range []string{rest + "Sitemap: " + loc + "\n", "Sitemap: " + loc + "\n" + rest} {
		if got := Parse([]byte(body)).Sitemaps(); !slices.Equal(got, []string{loc}) {
			t.Errorf("sitemaps = %q, want [%q]", got, loc)
		}
	}
}

// TestGooglePathParamsQuery ports TestGetPathParamsQuery: what part of a URL
// is matched.
func TestGooglePathParamsQuery(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"", "/"},
		{"http://www.example.com", "/"},
		{"http://www.example.com/", "/"},
		{"http://www.example.com/a", "/a"},
		{"http://www.example.com/a/", "/a/"},
		{"http://www.example.com/a/b?c=http://d.e/", "/a/b?c=http://d.e/"},
		{"http://www.example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
		{"example.com", "/"},
		{"example.com/", "/"},
		{"example.com/a", "/a"},
		{"example.com/a/", "/a/"},
		{"example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
		{"a", "/"},
		{"a/", "/"},
		{"/a", "/a"},
		{"a/b", "/b"},
		{"example.com?a", "/?a"},
		{"example.com/a;b#c", "/a;b"},
		{"//a/b/c", "/b/c"},
		// Not in Google's table.
		{"http://a#b/c", "/"},
		{"/a?b=http://c/d", "/a?b=http://c/d"},
		{"https://example.com/ツ?q=%7e%2f", "/%E3%83%84?q=~%2F"},
	} {
		if got := string(appendPath(nil, c.url)); got != c.want {
			t.Errorf("path of %q = %q, want %q", c.url, got, c.want)
		}
	}
}

// TestGoogleEscapePattern ports TestMaybeEscapePattern, and adds what RFC
// 9309 asks beyond it.
func TestGoogleEscapePattern(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://www.example.com", "http://www.example.com"},
		{"/a/b/c", "/a/b/c"},
		{"á", "%C3%A1"},
		{"%aa", "%AA"},
		// RFC 9309 §2.2.2: unreserved characters are decoded, reserved kept.
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
		{"/%7e%2d%2E%5f", "/~-._"},
		{"/a%2fb%3Fc%3d%26", "/a%2Fb%3Fc%3D%26"},
		{"/%2a%24", "/%2A%24"},
		// A "%" that starts no encoding is encoded (Google keeps it).
		{"/%zz%4", "/%25zz%254"},
		{"/%", "/%25"},
		{"/%%61b", "/%25ab"},
	} {
		if got := normalizePattern(c.in); got != c.want {
			t.Errorf("normalizePattern(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestGoogleValidUserAgents ports ID_VerifyValidUserAgentsToObey as what
// ProductToken makes of an agent. One deliberate difference: "Foobot/2.1"
// is not a token to Google, but here it is the agent of the product Foobot.
func TestGoogleValidUserAgents(t *testing.T) {
	for _, c := range []struct{ agent, want string }{
		{"Foobot", "Foobot"},
		{"Foobot-Bar", "Foobot-Bar"},
		{"Foo_Bar", "Foo_Bar"},
		{"", ""},
		{"ツ", ""},
		{"Foobot*", ""},
		{" Foobot ", ""},
		{"Foobot/2.1", "Foobot"}, // Google: not valid
		{"Foobot Bar", ""},
		{"ExampleBot/1.0 (+https://example.com/bot)", "ExampleBot"},
		{"Foobot2", ""},
	} {
		if got := ProductToken(c.agent); got != c.want {
			t.Errorf("ProductToken(%q) = %q, want %q", c.agent, got, c.want)
		}
	}
}

// longLine pads prefix with c to n octets.
func longLine(prefix string, n int, c byte) string {
	return prefix + strings.Repeat(string(c), n-len(prefix))
}
