package sitemap

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseW3C(t *testing.T) {
	utc := func(y, mo, d, h, mi, s, ns int) time.Time {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	}
	for _, c := range []struct {
		in   string
		want time.Time // zero: invalid
	}{
		{"1997", utc(1997, 1, 1, 0, 0, 0, 0)},
		{"1997-07", utc(1997, 7, 1, 0, 0, 0, 0)},
		{"1997-07-16", utc(1997, 7, 16, 0, 0, 0, 0)},
		{"1997-07-16T19:20+01:00", utc(1997, 7, 16, 18, 20, 0, 0)},
		{"1997-07-16T19:20:30+01:00", utc(1997, 7, 16, 18, 20, 30, 0)},
		{"1997-07-16T19:20:30.45+01:00", utc(1997, 7, 16, 18, 20, 30, 450_000_000)},
		{"1997-07-16T19:20:30.4500000001-01:30", utc(1997, 7, 16, 20, 50, 30, 450_000_000)},
		{"1997-07-16T19:20:30Z", utc(1997, 7, 16, 19, 20, 30, 0)},
		{"2024-12-31T23:59:59-12:00", utc(2025, 1, 1, 11, 59, 59, 0)},
		{"2000-02-29", utc(2000, 2, 29, 0, 0, 0, 0)},
		{"1997-07-16 19:20:30", utc(1997, 7, 16, 19, 20, 30, 0)},
		{"1997-07-16t19:20:30z", utc(1997, 7, 16, 19, 20, 30, 0)},
		{"1997-07-16T19:20:30+0100", utc(1997, 7, 16, 18, 20, 30, 0)},
		{"1997-07-16T19:20:30+01", utc(1997, 7, 16, 18, 20, 30, 0)},
		{"", time.Time{}},
		{"97", time.Time{}},
		{"1997-7-16", time.Time{}},
		{"1997-00", time.Time{}},
		{"1900-02-29", time.Time{}},
		{"1997-07-16T", time.Time{}},
		{"1997-07-16T19", time.Time{}},
		{"1997-07-16T24:00Z", time.Time{}},
		{"1997-07-16T19:60Z", time.Time{}},
		{"1997-07-16T19:20:61Z", time.Time{}},
		{"1997-07-16T19:20:30.Z", time.Time{}},
		{"1997-07-16T19:20:30+1:00", time.Time{}},
		{"1997-07-16T19:20:30+01:60", time.Time{}},
		{"1997-07-16T19:20:30ZZ", time.Time{}},
		{"1997-07-16X19:20", time.Time{}},
		{"+1997-07-16", time.Time{}},
	} {
		got, ok := parseW3C([]byte(c.in))
		if ok != !c.want.IsZero() || !got.Equal(c.want) {
			t.Errorf("parseW3C(%q) = %v, %t; want %v", c.in, got, ok, c.want)
		}
	}
}

func TestParseFeedDate(t *testing.T) {
	want := time.Date(2003, 6, 10, 4, 0, 0, 0, time.UTC)
	for _, in := range []string{
		"Tue, 10 Jun 2003 04:00:00 GMT",
		"Tue, 10 Jun 2003 04:00:00 +0000",
		"tue, 10 jun 2003 00:00:00 EDT",
		"10 Jun 2003 05:00:00 +0100",
		"Tue, 10 Jun 03 04:00:00 UT",
		"Tue, 10 Jun 2003 04:00 GMT",
		"2003-06-10T04:00:00Z",
	} {
		if got, ok := parseFeedDate([]byte(in)); !ok || !got.Equal(want) {
			t.Errorf("parseFeedDate(%q) = %v, %t; want %v", in, got, ok, want)
		}
	}
	if _, ok := parseFeedDate([]byte("the day before yesterday")); ok {
		t.Error("parseFeedDate accepted prose")
	}
}

func TestParsePriority(t *testing.T) {
	for in, want := range map[string]float64{
		"0.0": 0, "0": 0, "1": 1, "1.0": 1, "0.5": 0.5, ".5": 0.5, "0.8": 0.8, "0.33": 0.33,
		"0.123456": 0.123456, "1.": 1, "5e-1": 0.5, "+0.5": 0.5, "1.00000": 1,
	} {
		if got, ok := parsePriority([]byte(in)); !ok || got != want {
			t.Errorf("parsePriority(%q) = %v, %t; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", ".", "1.5", "-0.1", "10", "0.5.1", "high", "NaN", "Inf", "0,5", "1000"} {
		if got, ok := parsePriority([]byte(in)); ok {
			t.Errorf("parsePriority(%q) = %v, want invalid", in, got)
		}
	}
}

func TestDecodeEntities(t *testing.T) {
	for _, c := range []struct{ in, want, bad string }{
		{"a&amp;b&lt;&gt;&quot;&apos;", `a&b<>"'`, ""},
		{"&#65;&#x42;&#X43;&#x1F600;", "ABC😀", ""},
		{"a & b &c &amp", "a & b &c &amp", ""},
		{"&a=1&b=2;", "&a=1&b=2;", ""},
		{"x&nbsp;y&amp;", "x&nbsp;y&", "&nbsp;"},
		{"&#0;", "&#0;", "&#0;"},
		{"&#xD800;&#x110000;&#;&#x;&#12a;", "&#xD800;&#x110000;&#;&#x;&#12a;", "&#xD800;"},
		{"&#00000000065;", "&#00000000065;", "&#00000000065;"},
	} {
		got, bad := decodeEntities([]byte(c.in))
		if string(got) != c.want || string(bad) != c.bad {
			t.Errorf("decodeEntities(%q) = %q, %q; want %q, %q", c.in, got, bad, c.want, c.bad)
		}
	}
}

func TestNormPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "/",
		"/a/b/../c":        "/a/c",
		"/a/b/..":          "/a/",
		"/a/./b/.":         "/a/b/",
		"/..":              "/",
		"/a//../b":         "/a/b",
		"/%7euser/%2e%2e/": "/",
		"/%7e%2f%c3%a9":    "/~%2F%C3%A9",
		"/a.b/.c/..d":      "/a.b/.c/..d",
		"/%zz":             "/%zz",
	} {
		if got := normPath(in); got != want {
			t.Errorf("normPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := scopePath(`/a//..\x%5C..%5cy`), "/y"; got != want {
		t.Errorf("scopePath = %q, want %q", got, want)
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"HTTP://Example.COM:80/a/./b?q=1#frag": "http://example.com/a/b?q=1",
		"https://example.com":                  "https://example.com/",
		"https://example.com:8443/%7Ex?":       "https://example.com:8443/~x?",
		"https://[::1]:443/":                   "https://[::1]/",
		"not a url\x7f":                        "not a url\x7f",
	} {
		if got := canonical(in); got != want {
			t.Errorf("canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScopeCheck(t *testing.T) {
	s, err := newScope("https://Example.com:443/a/b/sitemap.xml?x=1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		raw  string
		mode locMode
		want string // the URL yielded; "" when dropped
		rule Rule
	}{
		{"https://example.com/a/b/", modePage, "https://example.com/a/b/", ""},
		{"https://example.com/a/b/c?d#e", modePage, "https://example.com/a/b/c?d#e", ""},
		{"https://example.com/a/", modePage, "", RuleScope},
		{"https://example.com/a/", modeChild, "https://example.com/a/", ""},
		{"c/d", modePage, "https://Example.com:443/a/b/c/d", ""}, // resolved against the URL as given
		{"/x", modeChild, "https://Example.com:443/x", ""},
		{"c/d", modeText, "", RuleInvalidURL},
		{"mailto:x@example.com", modePage, "", RuleScheme},
		{"https://example.com/a/b/" + strings.Repeat("x", MaxURLLength), modePage, "", RuleTooLong},
		{"http://example.com/a/b/", modeChild, "", RuleScope},
		{"https://example.com/a/b/c#\x1b[2J", modePage, "", RuleControl},
		{"https://example.com/a/b/c#\x1b]0;title\x07", modePage, "", RuleControl},
		{"https://example.com/a/b/c\rd", modePage, "", RuleControl},
		{"https://example.com/a/b/c?\x7f", modeText, "", RuleControl},
		{"c#\x1b[2J", modePage, "", RuleControl},
	} {
		got, rule, why := s.check([]byte(c.raw), c.mode)
		if got != c.want || rule != c.rule || (rule == "") != (why == "") {
			t.Errorf("check(%q, %d) = %q, %q, %q; want %q, %q", c.raw, c.mode, got, rule, why, c.want, c.rule)
		}
	}
	for _, bad := range []string{"ftp://example.com/s.xml", "/relative/s.xml", "https:///s.xml", "http://%zz/"} {
		if _, err := newScope(bad); err == nil {
			t.Errorf("newScope(%q) accepted", bad)
		}
	}
}

func TestWarningString(t *testing.T) {
	w := Warning{Sitemap: "https://example.com/s.xml", Rule: RuleScope, URL: "https://example.com/a\nb", Detail: "dropped"}
	if got, want := w.String(), `https://example.com/s.xml: scope: "https://example.com/a\nb": dropped`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	long := Warning{Sitemap: "s", Rule: RuleTooLong, URL: strings.Repeat("é", 300)}
	if got := long.String(); len(got) > maxShown+40 || !strings.HasSuffix(got, "…(600 bytes)") {
		t.Errorf("long URL shown as %q", got)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(strings.NewReader(""), "not a url", Limits{}, nil, nil); err == nil {
		t.Error("Read accepted a relative sitemap URL")
	}
	// A failing reader is an error, after the entries before the failure.
	failing := io.MultiReader(strings.NewReader("<urlset><url><loc>https://example.com/1</loc></url><url>"), errReader{})
	n := 0
	res, err := Read(failing, "https://example.com/s.xml", Limits{}, func(Entry) error { n++; return nil }, nil)
	if err == nil || !strings.Contains(err.Error(), "boom") || n != 1 || !res.Cut {
		t.Errorf("got %d entries, result %+v, error %v", n, res, err)
	}
	// Damaged gzip is a warning, after the entries before the damage.
	gz := gzipN(t, urlset("https://example.com/1", "https://example.com/2"), 1)
	gz[len(gz)-5] ^= 0xff // the CRC
	var rules []Rule
	n = 0
	_, err = Read(bytes.NewReader(gz[:len(gz)]), "https://example.com/s.txt", Limits{}, func(Entry) error { n++; return nil }, func(w Warning) { rules = append(rules, w.Rule) })
	if err != nil || n != 2 {
		t.Errorf("damaged CRC after the root: got %d entries, error %v", n, err)
	}
	rules = nil
	text := gzipN(t, []byte("https://example.com/1\nhttps://example.com/2\n"), 1)
	_, err = Read(bytes.NewReader(text[:len(text)-6]), "https://example.com/s.txt", Limits{}, func(Entry) error { return nil }, func(w Warning) { rules = append(rules, w.Rule) })
	if err != nil || len(rules) != 1 || rules[0] != RuleMalformed {
		t.Errorf("truncated gzip: warnings %v, error %v", rules, err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

func TestUTF16Reader(t *testing.T) {
	// "a😀" then an unpaired high surrogate and an odd trailing byte.
	in := []byte{'a', 0, 0x3d, 0xd8, 0x00, 0xde, 0x3d, 0xd8, 'b', 0, 0x3d, 0xd8, 'x'}
	got, err := io.ReadAll(newUTF16Reader(iotestOneByte(in), false))
	if err != nil || string(got) != "a😀\ufffdb\ufffd" {
		t.Errorf("got %q, %v", got, err)
	}
}

// iotestOneByte reads b one byte at a time, as a slow network would.
func iotestOneByte(b []byte) io.Reader { return &oneByte{b} }

type oneByte struct{ b []byte }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0], o.b = o.b[0], o.b[1:]
	return 1, nil
}

// TestSlowReader reads the golden inputs one byte at a time: every token
// then straddles a refill of the window.
func TestSlowReader(t *testing.T) {
	for _, name := range []string{"urlset-protocol-example", "cdata", "markup-oddities", "doctype-entities", "atom", "text-basic", "encoding-utf16le", "truncated"} {
		data, err := os.ReadFile("testdata/golden/" + name + ".in")
		if err != nil {
			t.Fatal(err)
		}
		whole, slow := entries(t, bytes.NewReader(data)), entries(t, iotestOneByte(data))
		if whole != slow || whole == "" {
			t.Errorf("%s read byte by byte:\n%s\nwant\n%s", name, slow, whole)
		}
	}
}

// entries returns the entries and warnings Read gives for r, one per line.
func entries(t *testing.T, r io.Reader) string {
	t.Helper()
	var out strings.Builder
	_, err := Read(r, "https://example.com/sitemap.xml", Limits{}, func(e Entry) error {
		out.WriteString(formatEntry(e) + "\n")
		return nil
	}, func(w Warning) {
		// Byte offsets differ after a UTF-16 decoder; the rest does not.
		out.WriteString(string(w.Rule) + " " + w.URL + "\n")
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestCanonicalFast checks that the fast path gives what parsing gives, on
// tricky URLs and on random strings of URL characters.
func TestCanonicalFast(t *testing.T) {
	check := func(raw string) {
		t.Helper()
		if got, ok := canonicalFast(raw); ok {
			if want := canonicalParsed(raw); got != want {
				t.Errorf("canonicalFast(%q) = %q, parsing gives %q", raw, got, want)
			}
		}
	}
	fast := 0
	for _, raw := range []string{
		"http://example.com", "http://example.com?q", "http://example.com#f", "http://example.com/",
		"https://example.com/a/b?x=1&y=2#frag", "http://h/a?", "http://h/a?#f", "http://h/a??", "http://h:8080/a",
		"http://h:080/a", "http://h:80/a", "https://h:443/a", "http://h:/a", "http://h:99999/a", "http://h:123456/a",
		"http://h/a!$&'()*+,;=:@b", "http://h/a b", "http://h/a%20b", "http://h/a/./b", "http://h/a/../b", "http://h/.",
		"http://h/a.b/.c/..d", "http://H/a", "HTTP://h/a", "http://u@h/a", "http://[::1]/a", "http://h/a\\b",
		"http://h/a#%zz", "http://h/a?%zz", "http://h/a#b#c", "http://h/é", "http://h/a?é", "http://h/a\t",
		"http://h//a", "http://-h/", "http://h../", "http://127.0.0.1:8080/x/y?z",
	} {
		check(raw)
		if _, ok := canonicalFast(raw); ok {
			fast++
		}
	}
	if fast < 15 {
		t.Errorf("only %d of the usual URLs took the fast path", fast)
	}
	const alphabet = "hH:/?#.%@!$&'()*+,;=~-_ \t[]\\aé0189"
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		b := []byte("http://h")
		if r.IntN(2) == 0 {
			b = []byte("https://")
		}
		for range r.IntN(12) {
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
		check(string(b))
	}
}
