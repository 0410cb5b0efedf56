package robots

import "testing"

// TestRFC9309Examples checks the examples of RFC 9309.
func TestRFC9309Examples(t *testing.T) {
	var cases []verdictCase
	add := func(cs ...verdictCase) { cases = append(cases, cs...) }

	// §5.1, Simple Example.
	simple := "User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\n" +
		"User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n\n" +
		"User-Agent: barbot\nUser-Agent: bazbot\nDisallow: /example/page.html\n\nUser-Agent: quxbot\n\nEOF\n"
	add(expect("5.1/*", simple, "OtherBot", map[string]bool{
		"https://www.example.com/publications/": true, "https://www.example.com/publications/a.html": true,
		"https://www.example.com/example/": false, "https://www.example.com/example/page.html": false,
		"https://www.example.com/img/x.gif": false, "https://www.example.com/x.gif?y": true,
		"https://www.example.com/publications/x.gif": true, "https://www.example.com/": true,
	})...)
	add(expect("5.1/foobot", simple, "foobot", map[string]bool{
		"https://www.example.com/example/page.html": true, "https://www.example.com/example/allowed.gif": true,
		"https://www.example.com/example/page.html?x": true, "https://www.example.com/example/other.html": false,
		"https://www.example.com/": false, "https://www.example.com/publications/": false,
	})...)
	for _, bot := range []string{"barbot", "bazbot", "BazBot/2.0"} {
		add(expect("5.1/"+bot, simple, bot, map[string]bool{
			"https://www.example.com/example/page.html": false, "https://www.example.com/example/page.html5": false,
			"https://www.example.com/example/": true, "https://www.example.com/x.gif": true,
		})...)
	}
	add(expect("5.1/quxbot", simple, "quxbot", map[string]bool{
		"https://www.example.com/example/page.html": true, "https://www.example.com/x.gif": true,
		"https://www.example.com/": true,
	})...)

	// §5.2, Longest Match.
	longest := "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
	add(expect("5.2", longest, "foobot", map[string]bool{
		"https://example.com/example/page/disallowed.gif": false, "https://example.com/example/page/": true,
		"https://example.com/example/page/disallow.gif": true, "https://example.com/example/": true,
	})...)

	// §2.2.1: groups for one product token merge; otherwise "*"; otherwise nothing.
	merged := "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n"
	add(expect("2.2.1/merge", merged, "ExampleBot", map[string]bool{
		"https://example.com/foo": false, "https://example.com/bar": false, "https://example.com/baz": false,
		"https://example.com/qux": true,
	})...)
	star := "user-agent: *\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: BazBot\ndisallow: /baz\n"
	add(expect("2.2.1/star", star, "ExampleBot", map[string]bool{
		"https://example.com/foo": false, "https://example.com/bar": false, "https://example.com/baz": true,
	})...)
	add(verdictCase{"2.2.1/UA header", "user-agent: ExampleBot\ndisallow: /\n",
		"ExampleBot/0.1 (compatible; https://www.example.com/bot.html)", "https://example.com/x", false},
		verdictCase{"2.2.1/none", "user-agent: BazBot\ndisallow: /\n", "ExampleBot", "https://example.com/x", true})

	// §2.2.2: percent-encoding, the table "Examples of matching
	// percent-encoded URI components" (pattern = encoded path).
	for _, row := range [][2]string{
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz"},
		{"/foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%E3%83%84", "/foo/bar/ツ"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
		{"/foo/bar/baz", "/foo/bar/%62%61%7A"},
		{"/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%e3%83%84"},
	} {
		add(verdictCase{"2.2.2/" + row[0], "user-agent: *\ndisallow: " + row[0] + "\n", "FooBot", "https://example.com" + row[1], false})
	}
	// Reserved characters are compared as written: an encoded one is not
	// the same octet as the character itself.
	for _, row := range [][2]string{
		{"/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar"},
		{"/a%2Fb", "/a/b"},
		{"/a/b", "/a%2Fb"},
		{"/a?b=c", "/a?b%3Dc"},
	} {
		add(verdictCase{"2.2.2/reserved " + row[0], "user-agent: *\ndisallow: " + row[0] + "\n", "FooBot", "https://example.com" + row[1], true})
	}
	// The /robots.txt URI is implicitly allowed.
	add(verdictCase{"2.2.2/robots.txt", "user-agent: *\ndisallow: /\n", "FooBot", "https://example.com/robots.txt", true},
		verdictCase{"2.2.2/robots.txt", "user-agent: *\ndisallow: /robots.txt\n", "FooBot", "/robots.txt", true},
		verdictCase{"2.2.2/robots.txt?", "user-agent: *\ndisallow: /\n", "FooBot", "https://example.com/robots.txt?x", false})

	// §2.2.3: special characters, and matching them literally.
	add(verdictCase{"2.2.3/#", "user-agent: *\nallow: / # comment in line\ndisallow: /a\n", "FooBot", "https://example.com/b", true},
		verdictCase{"2.2.3/$", "user-agent: *\ndisallow: /this/path/exactly$\n", "FooBot", "https://example.com/this/path/exactly", false},
		verdictCase{"2.2.3/$", "user-agent: *\ndisallow: /this/path/exactly$\n", "FooBot", "https://example.com/this/path/exactly/", true},
		verdictCase{"2.2.3/*", "user-agent: *\ndisallow: /this/*/exactly\n", "FooBot", "https://example.com/this/a/b/exactly", false},
		verdictCase{"2.2.3/*", "user-agent: *\ndisallow: /this/*/exactly\n", "FooBot", "https://example.com/this/exactly", true},
		verdictCase{"2.2.3/%2A", "user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", "FooBot", "https://www.example.com/path/file-with-a-*.html", false},
		verdictCase{"2.2.3/%2A", "user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", "FooBot", "https://www.example.com/path/file-with-a-%2a.html", false},
		verdictCase{"2.2.3/%2A", "user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", "FooBot", "https://www.example.com/path/file-with-a-b.html", true},
		verdictCase{"2.2.3/%24", "user-agent: *\ndisallow: /path/foo-%24\n", "FooBot", "https://www.example.com/path/foo-$", false},
		verdictCase{"2.2.3/%24", "user-agent: *\ndisallow: /path/foo-%24\n", "FooBot", "https://www.example.com/path/foo-%24", false},
		verdictCase{"2.2.3/%24", "user-agent: *\ndisallow: /path/foo-%24\n", "FooBot", "https://www.example.com/path/foo-", true},
		verdictCase{"2.2.3/%2A%24", "user-agent: *\ndisallow: /buy/%2A%24\n", "FooBot", "https://www.example.com/buy/*$", false},
		verdictCase{"2.2.3/%2A%24", "user-agent: *\ndisallow: /buy/%2A%24\n", "FooBot", "https://www.example.com/buy/anything", true})

	// §2.2.4: a Sitemap line must not end a group.
	add(verdictCase{"2.2.4", "user-agent: a\nsitemap: https://example.com/sitemap.xml\nuser-agent: b\ndisallow: /\n", "a", "https://example.com/x", false})

	// §2.1: rules before the first group are ignored; the last group may
	// have no rules.
	add(verdictCase{"2.1/outside", "disallow: /\nuser-agent: FooBot\nallow: /x\n", "FooBot", "https://example.com/y", true},
		verdictCase{"2.1/empty last", "user-agent: *\ndisallow: /\nuser-agent: FooBot\n", "FooBot", "https://example.com/y", true})
	runVerdicts(t, cases)
}

// TestGoogleDocumentation checks the examples of Google's robots.txt
// specification (developers.google.com, "How Google interprets the
// robots.txt specification") beyond those in its library's tests.
func TestGoogleDocumentation(t *testing.T) {
	var cases []verdictCase
	add := func(cs ...verdictCase) { cases = append(cases, cs...) }
	site := "https://example.com"
	paths := func(name, rule string, urls map[string]bool) {
		full := map[string]bool{}
		for u, want := range urls {
			full[site+u] = want
		}
		add(expect(name, "user-agent: *\ndisallow: "+rule+"\n", "Googlebot", full)...)
	}
	// URL matching based on path values ("true" = not matched = allowed).
	paths("/", "/", map[string]bool{"/": false, "/a/b.html": false})
	paths("/*", "/*", map[string]bool{"/": false, "/a/b.html": false})
	paths("/$", "/$", map[string]bool{"/": false, "/?a=b": true, "/page.htm": true})
	paths("/fish", "/fish", map[string]bool{
		"/fish": false, "/fish.html": false, "/fish/salmon.html": false, "/fishheads": false,
		"/fishheads/yummy.html": false, "/fish.php?id=anything": false,
		"/Fish.asp": true, "/catfish": true, "/?id=fish": true, "/desert/fish": true,
	})
	paths("/fish*", "/fish*", map[string]bool{
		"/fish": false, "/fish.html": false, "/fish/salmon.html": false, "/fishheads": false,
		"/fishheads/yummy.html": false, "/fish.php?id=anything": false,
		"/Fish.asp": true, "/catfish": true, "/?id=fish": true, "/desert/fish": true,
	})
	paths("/fish/", "/fish/", map[string]bool{
		"/fish/": false, "/fish/?id=anything": false, "/fish/salmon.htm": false,
		"/fish": true, "/fish.html": true, "/animals/fish/": true, "/Fish/Salmon.asp": true,
	})
	paths("/*.php", "/*.php", map[string]bool{
		"/index.php": false, "/filename.php": false, "/folder/filename.php": false,
		"/folder/filename.php?parameters": false, "/folder/any.php.file.html": false,
		"/filename.php/": false, "/": true, "/windows.PHP": true,
	})
	paths("/*.php$", "/*.php$", map[string]bool{
		"/filename.php": false, "/folder/filename.php": false, "/filename.php?parameters": true,
		"/filename.php/": true, "/filename.php5": true, "/windows.PHP": true,
	})
	paths("/fish*.php", "/fish*.php", map[string]bool{
		"/fish.php": false, "/fishheads/catfish.php?parameters": false, "/Fish.PHP": true,
	})

	// Order of precedence for rules.
	add(verdictCase{"precedence", "user-agent: *\nallow: /p\ndisallow: /\n", "Googlebot", site + "/page", true},
		verdictCase{"precedence", "user-agent: *\nallow: /folder\ndisallow: /folder\n", "Googlebot", site + "/folder/page", true},
		verdictCase{"precedence", "user-agent: *\nallow: /page\ndisallow: /*.htm\n", "Googlebot", site + "/page.htm", false},
		verdictCase{"precedence", "user-agent: *\nallow: /page\ndisallow: /*.ph\n", "Googlebot", site + "/page.php", true},
		verdictCase{"precedence", "user-agent: *\nallow: /$\ndisallow: /\n", "Googlebot", site + "/", true},
		verdictCase{"precedence", "user-agent: *\nallow: /$\ndisallow: /\n", "Googlebot", site + "/page.htm", false})

	// Order of precedence for user agents: one group, the most specific.
	ua := "user-agent: googlebot-news\ndisallow: /1\n\nuser-agent: *\ndisallow: /2\n\nuser-agent: googlebot\ndisallow: /3\n"
	for agent, group := range map[string]string{"googlebot-news": "/1", "Googlebot": "/3", "Storebot-Google": "/2", "Otherbot": "/2"} {
		for _, p := range []string{"/1", "/2", "/3"} {
			add(verdictCase{"user agents/" + agent, ua, agent, site + p, p != group})
		}
	}
	// Grouping of lines and rules.
	grouping := "user-agent: a\ndisallow: /c\n\nuser-agent: b\ndisallow: /d\n\nuser-agent: e\nuser-agent: f\ndisallow: /g\n\nuser-agent: h\n"
	for agent, blocked := range map[string]string{"a": "/c", "b": "/d", "e": "/g", "f": "/g", "h": ""} {
		for _, p := range []string{"/c", "/d", "/g"} {
			add(verdictCase{"grouping/" + agent, grouping, agent, site + p, p != blocked})
		}
	}
	// Merged groups for one agent; "*" ignored when a group matches.
	merge := "user-agent: googlebot-news\ndisallow: /fish\n\nuser-agent: *\ndisallow: /carrots\n\nuser-agent: googlebot-news\ndisallow: /shrimp\n"
	add(verdictCase{"merge", merge, "googlebot-news", site + "/fish", false},
		verdictCase{"merge", merge, "googlebot-news", site + "/shrimp", false},
		verdictCase{"merge", merge, "googlebot-news", site + "/carrots", true},
		verdictCase{"merge", merge, "otherbot", site + "/carrots", false},
		verdictCase{"merge", merge, "otherbot", site + "/fish", true})
	// Lines other than user-agent, allow and disallow do not split a group.
	add(verdictCase{"other lines", "user-agent: a\nsitemap: https://example.com/sitemap.xml\n\nuser-agent: b\ndisallow: /\n", "a", site + "/x", false},
		verdictCase{"other lines", "user-agent: a\ncrawl-delay: 5\nuser-agent: b\ndisallow: /\n", "a", site + "/x", false})
	// The introduction's example.
	intro := "User-agent: *\nDisallow: /includes/\n\nUser-agent: Googlebot\nAllow: /includes/\n\nSitemap: https://example.com/sitemap.xml\n"
	add(verdictCase{"intro", intro, "Googlebot", site + "/includes/a.js", true},
		verdictCase{"intro", intro, "Otherbot", site + "/includes/a.js", false})
	runVerdicts(t, cases)
}
