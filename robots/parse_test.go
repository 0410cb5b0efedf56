package robots

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSyntax(t *testing.T) {
	site := "http://example.com"
	cases := []verdictCase{
		// Key spellings Google accepts, matched by prefix and case-insensitively.
		{"useragent", "useragent: FooBot\ndisallow: /\n", "FooBot", site + "/x", false},
		{"user agent", "user agent: FooBot\ndisallow: /\n", "FooBot", site + "/x", false},
		{"user-agents", "User-Agents: FooBot\ndisallow: /\n", "FooBot", site + "/x", false},
		{"dissallow", "user-agent: FooBot\ndissallow: /\n", "FooBot", site + "/x", false},
		{"dissalow", "user-agent: FooBot\nDISSALOW: /\n", "FooBot", site + "/x", false},
		{"disalow", "user-agent: FooBot\ndisalow: /\n", "FooBot", site + "/x", false},
		{"diasllow", "user-agent: FooBot\ndiasllow: /\n", "FooBot", site + "/x", false},
		{"disallaw", "user-agent: FooBot\ndisallaw: /\n", "FooBot", site + "/x", false},
		{"allowed", "user-agent: FooBot\ndisallow: /\nallowed: /x\n", "FooBot", site + "/x", true},
		{"not a key", "user-agent: FooBot\ndisalloww: /\nnoindex: /\n", "FooBot", site + "/x", false},
		{"unknown key", "user-agent: FooBot\nnoindex: /\n", "FooBot", site + "/x", true},
		{"misspelt allow", "user-agent: FooBot\ndisallow: /\nalow: /x\n", "FooBot", site + "/x", false},
		{"key with spaces", "user-agent: FooBot\n  Disallow  :  /x  \n", "FooBot", site + "/x", false},
		{"tabs", "user-agent:\tFooBot\ndisallow:\t/x\t\n", "FooBot", site + "/x", false},
		// No colon: whitespace separates when there are exactly two words.
		{"no colon", "user-agent FooBot\ndisallow /x\n", "FooBot", site + "/x", false},
		{"no colon, tab", "user-agent\tFooBot\ndisallow\t\t/x\n", "FooBot", site + "/x", false},
		{"no colon, three words", "user-agent FooBot\ndisallow /x /y\n", "FooBot", site + "/x", true},
		{"no colon, one word", "user-agent FooBot\ndisallow/x\n", "FooBot", site + "/x", true},
		{"colon in value", "user-agent: FooBot\ndisallow: /a:b\n", "FooBot", site + "/a:b", false},
		{"space in value", "user-agent: FooBot\ndisallow: /a b\n", "FooBot", site + "/a b", false},
		{"empty key", "user-agent: FooBot\n: /\ndisallow: /x\n", "FooBot", site + "/y", true},
		// Comments.
		{"comment", "user-agent: FooBot # me\ndisallow: /x # not /y\n", "FooBot", site + "/x", false},
		{"comment in value", "user-agent: FooBot\ndisallow: /x#y\n", "FooBot", site + "/xz", false},
		{"commented line", "user-agent: FooBot\n#disallow: /\n", "FooBot", site + "/x", true},
		// A NUL ends the line, as in Google's C parser.
		{"nul", "user-agent: FooBot\ndisallow: /x\x00yz\n", "FooBot", site + "/xa", false},
		// Groups.
		{"star with words", "user-agent: * is everyone\ndisallow: /\n", "FooBot", site + "/x", false},
		{"star glued", "user-agent: *bot\ndisallow: /\n", "FooBot", site + "/x", true},
		{"token of line", "user-agent: FooBot/2.1 (compatible)\ndisallow: /\n", "FooBot", site + "/x", false},
		{"token case", "user-agent: FOOBOT\ndisallow: /\n", "foobot", site + "/x", false},
		{"prefix token", "user-agent: Foo\ndisallow: /\n", "FooBot", site + "/x", true},
		{"longer token", "user-agent: FooBotX\ndisallow: /\n", "FooBot", site + "/x", true},
		{"agent with version", "user-agent: FooBot\ndisallow: /\n", "FooBot/1.0 (+http://foo.bar)", site + "/x", false},
		{"agent not a token", "user-agent: FooBot\ndisallow: /\n", "FooBot (+http://foo.bar)", site + "/x", true},
		// Google compares an empty agent with the empty token of the line.
		{"empty agent line", "user-agent:\ndisallow: /\n", "", site + "/x", false},
		{"empty agent, digits line", "user-agent: *\nallow: /\nuser-agent: 123\ndisallow: /\n", "", site + "/x", false},
		{"empty agent, no empty line", "user-agent: *\ndisallow: /\nuser-agent: FooBot\nallow: /\n", "", site + "/x", false},
		{"empty agent, rules-less empty line", "user-agent: *\ndisallow: /\nuser-agent: /x\n", "", site + "/x", true},
		{"invalid agent, empty line", "user-agent:\ndisallow: /\n", "Foo Bar", site + "/x", true},
		{"specific without rules", "user-agent: *\ndisallow: /\nuser-agent: FooBot\nsitemap: /s\n", "FooBot", site + "/x", true},
		{"unknown inside ua list", "user-agent: FooBot\nfoo: bar\nuser-agent: *\ndisallow: /\n", "FooBot", site + "/x", false},
		{"crawl-delay inside ua list", "user-agent: FooBot\ncrawl-delay: 1\nuser-agent: *\ndisallow: /\n", "FooBot", site + "/x", false},
		{"empty disallow ends list", "user-agent: FooBot\ndisallow:\nuser-agent: *\ndisallow: /\n", "FooBot", site + "/x", true},
		{"star and specific", "user-agent: *\nuser-agent: FooBot\ndisallow: /x\nuser-agent: *\ndisallow: /y\n", "FooBot", site + "/y", true},
		{"star and specific, other", "user-agent: *\nuser-agent: FooBot\ndisallow: /x\nuser-agent: *\ndisallow: /y\n", "BarBot", site + "/x", false},
		// Patterns.
		{"no leading slash", "user-agent: *\ndisallow: x\n", "FooBot", site + "/x", true},
		{"leading star", "user-agent: *\ndisallow: *x\n", "FooBot", site + "/ax", false},
		{"dollar in middle", "user-agent: *\ndisallow: /a$b\n", "FooBot", site + "/a$b", false},
		{"dollar in middle, encoded", "user-agent: *\ndisallow: /a$b\n", "FooBot", site + "/a%24b", false},
		{"dollar only", "user-agent: *\ndisallow: $\n", "FooBot", site + "/", true},
		{"star dollar", "user-agent: *\ndisallow: *$\n", "FooBot", site + "/", false},
		{"double dollar", "user-agent: *\ndisallow: /a$$\n", "FooBot", site + "/a$", false},
		{"double dollar, prefix", "user-agent: *\ndisallow: /a$$\n", "FooBot", site + "/a$b", true},
		{"stars", "user-agent: *\ndisallow: /**a**$\n", "FooBot", site + "/xya", false},
		{"query", "user-agent: *\ndisallow: /*?session=\n", "FooBot", site + "/a?b=1&session=2", true},
		{"query, first", "user-agent: *\ndisallow: /*?session=\n", "FooBot", site + "/a?session=2", false},
		{"params", "user-agent: *\ndisallow: /a;jsessionid\n", "FooBot", site + "/a;jsessionid=1", false},
		{"fragment ignored", "user-agent: *\ndisallow: /a$\n", "FooBot", site + "/a#b", false},
		{"index.htm", "user-agent: *\ndisallow: /\nallow: /d/index.htm\n", "FooBot", site + "/d/", true},
		{"index.html5", "user-agent: *\ndisallow: /\nallow: /d/index.html5\n", "FooBot", site + "/d/", true},
		{"index.html not last segment", "user-agent: *\ndisallow: /\nallow: /d/index.html/x\n", "FooBot", site + "/d/", false},
		{"index.html only exact dir", "user-agent: *\ndisallow: /\nallow: /d/index.html\n", "FooBot", site + "/d/x", false},
		{"index.html dir is longer", "user-agent: *\ndisallow: /d/\nallow: /d/index.html\n", "FooBot", site + "/d/", true},
		{"index.html dir loses", "user-agent: *\ndisallow: /d/$\nallow: /d/index.html\n", "FooBot", site + "/d/", true},
		{"index.html dir loses to longer", "user-agent: *\ndisallow: /d/*$\nallow: /d/index.html\n", "FooBot", site + "/d/", false},
	}
	runVerdicts(t, cases)
}

func TestParseStats(t *testing.T) {
	body := "# comment\n" +
		"disallow: /before\n" + // outside
		"crawl-delay: 3\n" + // outside
		"user-agent: FooBot\n" +
		"disallow: /a\n" +
		"allow: /b\n" +
		"noindex: /c\n" + // unknown
		"just-a-word\n" + // malformed
		"disallow /x /y\n" + // malformed: three words
		"crawl-delay: soon\n" + // malformed
		"sitemap:\n" + // malformed
		"Sitemap: https://example.com/s.xml\n" +
		"\n" +
		"user-agent: *\n" +
		"disallow: /d\n"
	st := Parse([]byte(body)).Stats()
	want := Stats{Lines: 15, Directives: 8, Groups: 2, Rules: 3, Unknown: 1, Malformed: 4, Outside: 2}
	if st != want {
		t.Errorf("stats = %+v\nwant    %+v", st, want)
	}
	if st.Ignored() != 7 {
		t.Errorf("ignored = %d, want 7", st.Ignored())
	}
}

func TestParseLimits(t *testing.T) {
	// A line longer than MaxLineLength is cut there, and counted.
	line := "disallow: " + longLine("/", MaxLineLength, 'a') + "/tail"
	r := Parse([]byte("user-agent: *\n" + line + "\n"))
	if st := r.Stats(); st.LongLines != 1 {
		t.Errorf("long lines = %d, want 1", st.LongLines)
	}
	cut := line[len("disallow: "):MaxLineLength]
	if r.Allowed("x", cut) || !r.Allowed("x", cut[:len(cut)-1]) {
		t.Error("long line not cut at MaxLineLength")
	}

	// Only the first MaxSize bytes are read: a rule just past them is not.
	pad := "# " + strings.Repeat("x", MaxSize) + "\n"
	body := "user-agent: *\ndisallow: /a\n" + pad + "disallow: /b\n"
	r = Parse([]byte(body))
	if !r.Stats().Truncated || r.Allowed("x", "/a") || !r.Allowed("x", "/b") {
		t.Errorf("truncation: stats %+v, /a allowed %v, /b allowed %v", r.Stats(), r.Allowed("x", "/a"), r.Allowed("x", "/b"))
	}
	// A rule that ends exactly at MaxSize is read; one cut by it is read cut.
	head := "user-agent: *\n"
	filler := strings.Repeat("#\n", (MaxSize-len(head)-len("disallow: /abc"))/2)
	body = head + filler + "disallow: /abc"
	body += strings.Repeat("#", MaxSize-len(body)) + "\ndisallow: /z\n"
	r = Parse([]byte(body))
	if r.Allowed("x", "/abc") || !r.Allowed("x", "/z") {
		t.Error("rule before the limit not read, or rule after it read")
	}
}

func TestCrawlDelay(t *testing.T) {
	for _, c := range []struct {
		name, body, agent string
		want              time.Duration
		ok                bool
	}{
		{"whole", "user-agent: *\ncrawl-delay: 10\n", "FooBot", 10 * time.Second, true},
		{"fraction", "user-agent: *\ncrawl-delay: 0.5\n", "FooBot", 500 * time.Millisecond, true},
		{"leading dot", "user-agent: *\ncrawl-delay: .25\n", "FooBot", 250 * time.Millisecond, true},
		{"trailing dot", "user-agent: *\ncrawl-delay: 2.\n", "FooBot", 2 * time.Second, true},
		{"zero", "user-agent: *\ncrawl-delay: 0\n", "FooBot", 0, true},
		{"crawldelay", "user-agent: *\ncrawldelay: 3\n", "FooBot", 3 * time.Second, true},
		{"case", "user-agent: *\nCRAWL-DELAY: 3\n", "FooBot", 3 * time.Second, true},
		{"specific wins", "user-agent: *\ncrawl-delay: 10\n\nuser-agent: FooBot\ncrawl-delay: 5\n", "FooBot", 5 * time.Second, true},
		{"star when none", "user-agent: *\ncrawl-delay: 10\n\nuser-agent: FooBot\ndisallow: /x\n", "BarBot", 10 * time.Second, true},
		{"specific without delay", "user-agent: *\ncrawl-delay: 10\n\nuser-agent: FooBot\ndisallow: /x\n", "FooBot", 0, false},
		{"largest of merged", "user-agent: FooBot\ncrawl-delay: 2\n\nuser-agent: FooBot\ncrawl-delay: 7\ncrawl-delay: 1\n", "FooBot", 7 * time.Second, true},
		// A Crawl-delay line does not end the user-agent lines (as in Google's
		// parser, where only allow and disallow do), and applies to the agents
		// named before it.
		{"before the agent", "user-agent: BarBot\ncrawl-delay: 4\nuser-agent: FooBot\ndisallow: /\n", "FooBot", 0, false},
		{"after the agent", "user-agent: BarBot\ncrawl-delay: 4\nuser-agent: FooBot\ndisallow: /\n", "BarBot", 4 * time.Second, true},
		{"star before", "user-agent: *\ncrawl-delay: 4\nuser-agent: FooBot\ncrawl-delay: 2\n", "BarBot", 4 * time.Second, true},
		{"both", "user-agent: *\nuser-agent: FooBot\ncrawl-delay: 2\n", "BarBot", 2 * time.Second, true},
		{"outside", "crawl-delay: 4\nuser-agent: FooBot\n", "FooBot", 0, false},
		{"negative", "user-agent: *\ncrawl-delay: -5\n", "FooBot", 0, false},
		{"garbage", "user-agent: *\ncrawl-delay: soon\n", "FooBot", 0, false},
		{"unit", "user-agent: *\ncrawl-delay: 5s\n", "FooBot", 0, false},
		{"exponent", "user-agent: *\ncrawl-delay: 1e3\n", "FooBot", 0, false},
		{"two dots", "user-agent: *\ncrawl-delay: 1.2.3\n", "FooBot", 0, false},
		{"dot", "user-agent: *\ncrawl-delay: .\n", "FooBot", 0, false},
		{"nan", "user-agent: *\ncrawl-delay: NaN\n", "FooBot", 0, false},
		{"huge", "user-agent: *\ncrawl-delay: " + strings.Repeat("9", 400) + "\n", "FooBot", maxDelay, true},
		{"none", "user-agent: *\ndisallow: /\n", "FooBot", 0, false},
	} {
		d, ok := Parse([]byte(c.body)).ForAgent(c.agent).CrawlDelay()
		if d != c.want || ok != c.ok {
			t.Errorf("%s: CrawlDelay() = %v, %v; want %v, %v", c.name, d, ok, c.want, c.ok)
		}
	}
}

func TestSitemaps(t *testing.T) {
	body := "Sitemap: https://example.com/a.xml\nuser-agent: *\nsite-map: https://example.com/b.xml # comment\n" +
		"disallow: /\nSITEMAP:https://ja.example.org/テスト.xml\nsitemap https://example.com/c.xml\n"
	r := Parse([]byte(body))
	// Without a colon after the key, the colon of the URL splits the line,
	// as in Google's parser.
	want := []string{"https://example.com/a.xml", "https://example.com/b.xml", "https://ja.example.org/テスト.xml", "//example.com/c.xml"}
	got := r.Sitemaps()
	if !slices.Equal(got, want) {
		t.Errorf("sitemaps = %q, want %q", got, want)
	}
	got[0] = "changed"
	if r.Sitemaps()[0] != want[0] {
		t.Error("Sitemaps exposes the parsed slice")
	}
}

func TestAllowAllDisallowAll(t *testing.T) {
	for _, u := range []string{"/", "/x", "http://example.com/a?b", ""} {
		if !AllowAll().Allowed("FooBot", u) {
			t.Errorf("AllowAll disallows %q", u)
		}
		if DisallowAll().Allowed("FooBot", u) {
			t.Errorf("DisallowAll allows %q", u)
		}
	}
	if !DisallowAll().Allowed("FooBot", "http://example.com/robots.txt") {
		t.Error("DisallowAll disallows /robots.txt")
	}
}
