package mirror

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/crawler/storage/links"
	"golang.org/x/net/html"
)

var updateRewriteGolden = flag.Bool("update-rewrite", false, "rewrite the golden files of testdata/rewrite")

const htmlType = "text/html; charset=utf-8"

// goldenSite is the mirror the rewrite tests resolve against: URL (as
// url.URL.String gives it) → content type.
var goldenSite = map[string]string{
	"http://example.com/":                   htmlType,
	"http://example.com/docs/":              htmlType,
	"http://example.com/docs/page.html":     htmlType,
	"http://example.com/docs/intro":         htmlType,
	"http://example.com/docs/guide.html":    htmlType,
	"http://example.com/docs/sub/":          htmlType,
	"http://example.com/docs/caf%C3%A9":     htmlType,
	"http://example.com/docs/a%20b.html":    htmlType,
	"http://example.com/search?q=go&page=2": htmlType,
	"http://example.com/search?q=a+b":       htmlType,
	"http://example.com/x?a=1&copy=2":       htmlType,
	"http://example.com/frames/nav.html":    htmlType,
	"http://example.com/frames/main":        htmlType,
	"http://example.com:8080/port.html":     htmlType,
	"http://example.com/css/site.css":       "text/css",
	"http://example.com/css/print":          "text/css",
	"http://example.com/js/app.js":          "text/javascript",
	"https://cdn.example.net/lib.js":        "text/javascript",
	"http://example.com/favicon.ico":        "image/x-icon",
	"http://example.com/img/logo.png":       "image/png",
	"http://example.com/img/logo-2x.png":    "image/png",
	"http://example.com/img/hero.jpg":       "image/jpeg",
	"http://example.com/media/song.ogg":     "audio/ogg",
	"http://example.com/media/clip.mp4":     "video/mp4",
	"http://example.com/media/clip.vtt":     "text/vtt",
	"http://example.com/media/poster.jpg":   "image/jpeg",
	"http://example.com/media/movie.swf":    "application/x-shockwave-flash",
	"http://example.com/fonts/f.woff2":      "font/woff2",
	"http://example.com/fonts/f.woff":       "font/woff",
}

// siteResolve resolves against a site map as the engine would, recording
// what it was asked.
func siteResolve(site map[string]string, asked *[]string) func(*url.URL) (string, bool) {
	return func(u *url.URL) (string, bool) {
		if asked != nil {
			*asked = append(*asked, u.String())
		}
		if u.Fragment != "" || u.RawFragment != "" {
			panic("resolve given a fragment: " + u.String())
		}
		ct, ok := site[u.String()]
		if !ok {
			return "", false
		}
		return Path(u, ct), true
	}
}

func neverResolve(*url.URL) (string, bool) { return "", false }

func TestRewriteGolden(t *testing.T) {
	tests := []struct {
		file, page string
		count      int
	}{
		{"attributes.html", "http://example.com/docs/page.html", 45},
		{"base.html", "http://example.com/docs/page.html", 5},
		{"entities.html", "http://example.com/docs/page.html", 9},
		{"uppercase.html", "http://example.com/docs/page.html", 13},
		{"malformed.html", "http://example.com/docs/page.html", 13},
		{"query.html", "http://example.com/search?q=go&page=2", 5},
		{"style.css", "http://example.com/css/site.css", 9},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "rewrite", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			page := mustParse(t, tt.page)
			var got []byte
			var n int
			if strings.HasSuffix(tt.file, ".css") {
				got, n = RewriteCSS(in, page, Path(page, "text/css"), siteResolve(goldenSite, nil))
			} else {
				got, n = RewriteHTML(in, page, Path(page, htmlType), siteResolve(goldenSite, nil))
			}
			golden := filepath.Join("testdata", "rewrite", tt.file+".golden")
			if *updateRewriteGolden {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run with -update-rewrite and diff):\n%s", golden, got)
			}
			if n != tt.count {
				t.Errorf("count = %d, want %d", n, tt.count)
			}
		})
	}
}

func TestRewriteHTML(t *testing.T) {
	const page = "http://example.com/docs/page.html"
	tests := []struct {
		name, in, want string
		count          int
	}{
		{"relative", `<a href="intro">`, `<a href="intro.html">`, 1},
		{"root-relative", `<a href="/docs/guide.html">`, `<a href="guide.html">`, 1},
		{"fragment kept", `<a href="/docs/intro#a%20b">`, `<a href="intro.html#a%20b">`, 1},
		{"directory index", `<a href="/docs/">`, `<a href="index.html">`, 1},
		{"root index", `<a href=/>`, `<a href="../index.html">`, 1},
		{"query target", `<a href="/search?q=go&amp;page=2">`, `<a href="../search@q=go&amp;page=2.html">`, 1},
		{"other host", `<script src="https://cdn.example.net/lib.js">`, `<script src="../../cdn.example.net/lib.js">`, 1},
		{"port", `<a href="http://example.com:8080/port.html">`, `<a href="../../example.com:8080/port.html">`, 1},
		{"not mirrored: absolute", `<a href="nope">`, `<a href="http://example.com/docs/nope">`, 0},
		{"not mirrored, protocol-relative", `<a href="//other.org/x">`, `<a href="http://other.org/x">`, 0},
		{"not mirrored, already absolute", `<a href="HTTPS://Other.org/a b">`, `<a href="HTTPS://Other.org/a b">`, 0},
		{"fragment only", `<a href="#x">`, `<a href="#x">`, 0},
		{"empty", `<a href="">`, `<a href="">`, 0},
		{"no value", `<a href>`, `<a href>`, 0},
		{"mailto", `<a href="mailto:a@b">`, `<a href="mailto:a@b">`, 0},
		{"unparseable", `<a href="http://[::1">`, `<a href="http://[::1">`, 0},
		{"single quotes", `<a href='intro' class=x>`, `<a href="intro.html" class="x">`, 1},
		{"unquoted", `<a href=intro class=x>`, `<a href="intro.html" class="x">`, 1},
		{"unquoted before >", `<a href=intro>`, `<a href="intro.html">`, 1},
		{"self-closing", `<img src="/img/logo.png"/>`, `<img src="../img/logo.png"/>`, 1},
		{"uppercase", `<A HREF="intro">`, `<a href="intro.html">`, 1},
		{"uppercase kept", `<A HREF="mailto:x">`, `<A HREF="mailto:x">`, 0},
		{"duplicate attribute", `<a href="intro" href="guide.html">`, `<a href="intro.html">`, 1}, // the tokenizer drops the second, as browsers do
		{"amp round trip", `<a href="nope?a=1&amp;b=2">`, `<a href="http://example.com/docs/nope?a=1&amp;b=2">`, 0},
		{"bare amp", `<a href="nope?a=1&b=2">`, `<a href="http://example.com/docs/nope?a=1&amp;b=2">`, 0},
		{"legacy entity", `<a href="/x?a=1&copy=2">`, `<a href="../x@a=1&amp;copy=2.html">`, 1},
		{"quote in value", `<a href='nope?q="x"'>`, `<a href="http://example.com/docs/nope?q=&quot;x&quot;">`, 0},
		{"double quote escaped", `<a href="nope?q=&#39;x&#39;">`, `<a href="http://example.com/docs/nope?q='x'">`, 0},
		{"lt escaped", `<a href="nope?q=&lt;x&gt;">`, `<a href="http://example.com/docs/nope?q=&lt;x&gt;">`, 0},
		{"spaces and newlines", "<a href=\" in\ntro \">", `<a href="intro.html">`, 1},
		{"link", `<link rel=stylesheet href="../css/site.css">`, `<link rel=stylesheet href="../css/site.css">`, 1},
		{"area", `<area href="intro">`, `<area href="intro.html">`, 1},
		{"frame", `<frame src="/frames/main">`, `<frame src="../frames/main.html">`, 1},
		{"iframe", `<iframe src="/frames/nav.html"></iframe>`, `<iframe src="../frames/nav.html"></iframe>`, 1},
		{"img", `<img src="/img/logo.png">`, `<img src="../img/logo.png">`, 1},
		{"script", `<script src="/js/app.js"></script>`, `<script src="../js/app.js"></script>`, 1},
		{"source", `<source src="/media/clip.mp4">`, `<source src="../media/clip.mp4">`, 1},
		{"audio", `<audio src="/media/song.ogg">`, `<audio src="../media/song.ogg">`, 1},
		{"video", `<video src="/media/clip.mp4" poster="/media/poster.jpg">`, `<video src="../media/clip.mp4" poster="../media/poster.jpg">`, 2},
		{"embed", `<embed src="/media/movie.swf">`, `<embed src="../media/movie.swf">`, 1},
		{"track", `<track src="/media/clip.vtt">`, `<track src="../media/clip.vtt">`, 1},
		{"input image", `<input type=" Image " src="/img/logo.png">`, `<input type=" Image " src="../img/logo.png">`, 1},
		{"input text", `<input type="text" src="/img/logo.png">`, `<input type="text" src="/img/logo.png">`, 0},
		{"srcset", `<img srcset="/img/logo.png 1x, /img/logo-2x.png 2x,nope 3x">`, `<img srcset="../img/logo.png 1x, ../img/logo-2x.png 2x,http://example.com/docs/nope 3x">`, 2},
		{"srcset commas", `<img srcset="/img/logo.png 1x,/img/hero.jpg 2x">`, `<img srcset="../img/logo.png 1x,../img/hero.jpg 2x">`, 2},
		{"srcset comma without descriptor", `<img srcset="/img/logo.png,/img/hero.jpg 2x">`, `<img srcset="http://example.com/img/logo.png,/img/hero.jpg 2x">`, 0},
		{"srcset comma in URL", `<img srcset="nope,a,b 1x">`, `<img srcset="http://example.com/docs/nope,a,b 1x">`, 0},
		{"srcset trailing comma", `<img srcset="/docs/intro, /img/logo.png">`, `<img srcset="intro.html, ../img/logo.png">`, 2},
		{"source srcset", `<source srcset="/img/hero.jpg 800w">`, `<source srcset="../img/hero.jpg 800w">`, 1},
		{"meta refresh", `<meta http-equiv="refresh" content="0; url=intro">`, `<meta http-equiv="refresh" content="0; url=intro.html">`, 1},
		{"meta refresh quoted", `<meta http-equiv=REFRESH content="5;URL='/docs/intro'">`, `<meta http-equiv="REFRESH" content="5;URL='intro.html'">`, 1},
		{"meta refresh bare", `<meta http-equiv="refresh" content="5, intro">`, `<meta http-equiv="refresh" content="5, intro.html">`, 1},
		{"meta refresh quote after URL", `<meta http-equiv="refresh" content="0; url='nope?a=&#39;'">`, `<meta http-equiv="refresh" content="0; url='http://example.com/docs/nope?a=''">`, 0},
		{"meta not refresh", `<meta name="x" content="0; url=intro">`, `<meta name="x" content="0; url=intro">`, 0},
		{"meta refresh no URL", `<meta http-equiv="refresh" content="30">`, `<meta http-equiv="refresh" content="30">`, 0},
		{"style attribute", `<p style="background:url(/img/logo.png)">`, `<p style="background:url(../img/logo.png)">`, 1},
		{"style attribute quoted", `<p style='background:url("/img/logo.png")'>`, `<p style="background:url(&quot;../img/logo.png&quot;)">`, 1},
		{"style element", `<style>@import "/css/print"; a{b:url(/img/logo.png)}</style>`, `<style>@import "../css/print.css"; a{b:url(../img/logo.png)}</style>`, 2},
		{"style element end", `<style>a{b:url(nope?q=</style)}</style>`, `<style>a{b:url(http://example.com/docs/nope?q=\3c /style)}</style>`, 0},
		{"form action kept relative", `<form action="../search.html"></form>`, `<form action="../search.html"></form>`, 0},
		{"form action in mirror", `<form action="intro"></form>`, `<form action="intro.html"></form>`, 1},
		{"formaction kept", `<button formaction="search">`, `<button formaction="search">`, 0},
		{"form action after a base", `<base href="/docs/sub/"><form action="search">`, `<base><form action="http://example.com/docs/sub/search">`, 0},
		{"cite", `<q cite="/docs/intro">`, `<q cite="http://example.com/docs/intro">`, 0},
		{"base", `<base href="/docs/sub/"><a href="../intro">`, `<base><a href="intro.html">`, 1},
		{"base with target", `<base target=_top href=/docs/sub/ id=b><a href=x>`, `<base target="_top" id="b"><a href="http://example.com/docs/sub/x">`, 0},
		{"base before another attribute", `<base href="/"x=1>`, `<base x="1">`, 0},
		{"base fragment", `<base href="/docs/guide.html"><a href="#s">`, `<base><a href="guide.html#s">`, 1},
		{"base and empty href", `<base href="/docs/guide.html"><a href="">`, `<base><a href="guide.html">`, 1},
		{"base javascript", `<base href="javascript:x"><a href="intro">`, `<base><a href="intro.html">`, 1},
		{"noscript", `<noscript><img src="/img/logo.png"></noscript>`, `<noscript><img src="../img/logo.png"></noscript>`, 1},
		{"script kept", `<script>x = '<a href="intro">'</script>`, `<script>x = '<a href="intro">'</script>`, 0},
		{"textarea kept", `<textarea><a href="intro"></textarea>`, `<textarea><a href="intro"></textarea>`, 0},
		{"comment kept", `<!-- <a href="intro"> -->`, `<!-- <a href="intro"> -->`, 0},
		{"unfinished tag", `<a href="intro">x</a><a href="intro`, `<a href="intro.html">x</a><a href="intro`, 1},
		{"svg a", `<svg><a href="intro"><text>x</text></a></svg>`, `<svg><a href="intro.html"><text>x</text></a></svg>`, 1},
		// A <link> of a rel the crawler does not follow still points at
		// the mirrored file (the Python docs' author and copyright).
		{"link rel=author", `<link rel="author" href="intro">`, `<link rel="author" href="intro.html">`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, page)
			got, n := RewriteHTML([]byte(tt.in), p, Path(p, htmlType), siteResolve(goldenSite, nil))
			if string(got) != tt.want || n != tt.count {
				t.Errorf("RewriteHTML(%q)\n = %q, %d\nwant %q, %d", tt.in, got, n, tt.want, tt.count)
			}
		})
	}
}

func TestRewriteHTMLResolveArgument(t *testing.T) {
	var asked []string
	p := mustParse(t, "http://example.com/docs/page.html")
	in := `<base href="sub/"><a href="../intro#f"><img src="x.png?a=1&amp;b=2#g"><a href="#h"><a href="mailto:x@y"><form action=y>`
	RewriteHTML([]byte(in), p, "example.com/docs/page.html", siteResolve(goldenSite, &asked))
	want := []string{
		"http://example.com/docs/intro",
		"http://example.com/docs/sub/x.png?a=1&b=2",
		"http://example.com/docs/sub/",
		"http://example.com/docs/sub/y", // a form's target may be in the mirror
	}
	if !slices.Equal(asked, want) {
		t.Errorf("resolve asked for\n%q\nwant\n%q", asked, want)
	}
}

func TestRewriteCSS(t *testing.T) {
	const sheet = "http://example.com/css/site.css"
	tests := []struct {
		name, in, want string
		count          int
	}{
		{"unquoted", `a{b:url(../img/logo.png)}`, `a{b:url(../img/logo.png)}`, 1},
		{"root-relative", `a{b:url(/img/logo.png)}`, `a{b:url(../img/logo.png)}`, 1},
		{"double quotes", `a{b:url( "/img/logo.png" )}`, `a{b:url( "../img/logo.png" )}`, 1},
		{"single quotes", `a{b:url('/img/logo.png')}`, `a{b:url('../img/logo.png')}`, 1},
		{"spaces", "a{b:url(  /img/logo.png\n)}", "a{b:url(  ../img/logo.png\n)}", 1},
		{"upper case", `a{b:URL(/img/logo.png)}`, `a{b:URL(../img/logo.png)}`, 1},
		{"import string", `@import "print";`, `@import "print.css";`, 1},
		{"import single", `@import 'print' screen;`, `@import 'print.css' screen;`, 1},
		{"import url", `@import url(print);`, `@import url(print.css);`, 1},
		{"import upper", `@IMPORT "print";`, `@IMPORT "print.css";`, 1},
		{"import comment", `@import /* x */ "print";`, `@import /* x */ "print.css";`, 1},
		{"not import", `@importx "print"; a{content:"print"}`, `@importx "print"; a{content:"print"}`, 0},
		{"absolute made", `a{b:url(nope.png)}`, `a{b:url(http://example.com/css/nope.png)}`, 0},
		{"absolute kept", `a{b:url(https://other.org/x.png)}`, `a{b:url(https://other.org/x.png)}`, 0},
		{"data", `a{b:url(data:image/png;base64,AAAA)}`, `a{b:url(data:image/png;base64,AAAA)}`, 0},
		{"data quoted", `a{b:url("data:image/svg+xml,<svg/>")}`, `a{b:url("data:image/svg+xml,<svg/>")}`, 0},
		{"fragment only", `a{clip-path:url(#c)}`, `a{clip-path:url(#c)}`, 0},
		{"fragment", `a{b:url(/img/logo.png#x)}`, `a{b:url(../img/logo.png#x)}`, 1},
		{"comment", `/* url(/img/logo.png) */`, `/* url(/img/logo.png) */`, 0},
		{"string", `a{content:"url(/img/logo.png)"}`, `a{content:"url(/img/logo.png)"}`, 0},
		{"other function", `a{b:myurl(/img/logo.png)}`, `a{b:myurl(/img/logo.png)}`, 0},
		{"escape decoded", `a{b:url(/img/lo\67 o.png)}`, `a{b:url(../img/logo.png)}`, 1},
		{"escape in string", `a{b:url("/img/lo\"go.png")}`, `a{b:url("http://example.com/img/lo%22go.png")}`, 0},
		{"paren escaped", `a{b:url(/a\(b.png)}`, `a{b:url(http://example.com/a\28 b.png)}`, 0},
		{"quote escaped", `a{b:url('/a\'b.png')}`, `a{b:url('http://example.com/a\27 b.png')}`, 0},
		{"bad url", `a{b:url(a b.png)} c{d:url(/img/logo.png)}`, `a{b:url(a b.png)} c{d:url(../img/logo.png)}`, 1},
		{"bad url quote", `a{b:url(a"b)} c{d:url(/img/logo.png)}`, `a{b:url(a"b)} c{d:url(../img/logo.png)}`, 1},
		{"unclosed url", `a{b:url(/img/logo.png`, `a{b:url(../img/logo.png`, 1},
		{"unclosed url and space", "a{b:url(/img/logo.png ", "a{b:url(../img/logo.png ", 1},
		{"unclosed string", "a{b:url(\"/img/logo.png\n)}", "a{b:url(\"/img/logo.png\n)}", 0},
		{"empty", `a{b:url()} c{d:url("")}`, `a{b:url()} c{d:url("")}`, 0},
		{"font-face", `@font-face{src:url(/fonts/f.woff2) format("woff2")}`, `@font-face{src:url(../fonts/f.woff2) format("woff2")}`, 1},
		{"lt escaped", `a{b:url("/x?a=<")}`, `a{b:url("http://example.com/x?a=\3c ")}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, sheet)
			got, n := RewriteCSS([]byte(tt.in), p, Path(p, "text/css"), siteResolve(goldenSite, nil))
			if string(got) != tt.want || n != tt.count {
				t.Errorf("RewriteCSS(%q)\n = %q, %d\nwant %q, %d", tt.in, got, n, tt.want, tt.count)
			}
		})
	}
}

// walkUnchanged rewrites body with a function that changes nothing.
func walkUnchanged(body []byte) []byte {
	return links.Rewrite(body, func(links.Ref) (string, bool) { return "", false })
}
func TestWalkKeepsBytes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rewrite", "*.html"))
	if err != nil || len(files) == 0 {
		t.Fatal("no test files", err)
	}
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if out := walkUnchanged(in); !bytes.Equal(out, in) {
			t.Errorf("%s: a walk that changes nothing changed the bytes:\n%s", f, out)
		}
	}
}

func TestRewriteHTMLGrowthBound(t *testing.T) {
	page := mustParse(t, "http://example.com/"+strings.Repeat("d", 2000)+"/")
	in := []byte(strings.Repeat(`<a href=a>`, 20000))
	out, _ := RewriteHTML(in, page, "", neverResolve)
	// The bound counts decoded values; quotes and escapes add a little.
	if limit := (maxGrowthFactor*len(in)+maxGrowthSlack)*11/10 + len(in); len(out) > limit {
		t.Errorf("%d bytes became %d, over %d", len(in), len(out), limit)
	}
	if !bytes.HasSuffix(out, []byte(`<a href=a>`)) || !bytes.HasPrefix(out, []byte(`<a href="http://example.com/dd`)) {
		t.Errorf("expected the first links rewritten and the last kept")
	}
}

func TestRewriteHTMLNilPage(t *testing.T) {
	in := []byte(`<a href="x">`)
	out, n := RewriteHTML(in, nil, "", neverResolve)
	if !bytes.Equal(out, in) || n != 0 {
		t.Errorf("nil page: %q, %d", out, n)
	}
}

// FuzzRewriteHTML checks that rewriting never panics, that a walk changing
// nothing keeps every byte, that the scanner agrees with the tokenizer, and
// that rewriting with nothing in the mirror is idempotent.
func FuzzRewriteHTML(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "rewrite", "*.html"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "<", "<a", "<a href", `<a href="`, "<a href=x", "<base href=x>", "<style>", "<noscript>",
		"<noscript><noscript><a href=x>", "<meta http-equiv=refresh content='0;url=", "<img srcset=',,'>",
		`<p style="url(">`, "<a href=\"\x00\">", "<a b=1 b=2 href=x>", `<a href="x" /`, "<!--", "<svg><style>", "<BAse href href=/>",
	} {
		f.Add([]byte(s))
	}
	page, _ := url.Parse("http://example.com/docs/page.html")
	f.Fuzz(func(t *testing.T, in []byte) {
		if out := walkUnchanged(in); !bytes.Equal(out, in) {
			t.Fatalf("a walk that changes nothing changed the bytes:\n%q\n%q", in, out)
		}
		mirrored, _ := RewriteHTML(in, page, "example.com/docs/page.html", siteResolve(goldenSite, nil))
		if a, b := tokenShape(in), tokenShape(mirrored); !slices.Equal(a, b) {
			t.Fatalf("rewriting changed the structure:\n in  %q\n out %q\n %q\n %q", in, mirrored, a, b)
		}
		once, _ := RewriteHTML(in, page, "example.com/docs/page.html", neverResolve)
		twice, _ := RewriteHTML(once, page, "example.com/docs/page.html", neverResolve)
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent:\n in   %q\n once %q\n twice %q", in, once, twice)
		}
		if a, b := meanings(in, page), meanings(once, page); !slices.Equal(a, b) {
			t.Fatalf("with nothing in the mirror, the links changed meaning:\n in   %q\n out  %q\n %q\n %q", in, once, a, b)
		}
	})
}

// meanings lists what each reference of an HTML document means: its kind
// and the URL it resolves to against page or the document's <base>.
func meanings(doc []byte, page *url.URL) []string {
	base := page
	if href, ok := findBase(doc); ok {
		base = baseURL(page, href)
	}
	var out []string
	links.Scan(doc, func(r links.Ref) {
		if r.Kind == links.Base {
			return
		}
		s := cleanURL(r.URL)
		if (s == "" || s[0] == '#') && (r.CSS || withoutFragment(base) == withoutFragment(page)) {
			out = append(out, r.Kind.String()+" "+s) // this document, wherever it is
			return
		}
		u, err := base.Parse(s)
		if err != nil {
			out = append(out, r.Kind.String()+" unparseable "+r.URL)
			return
		}
		out = append(out, r.Kind.String()+" "+u.String())
	})
	return out
}

// tokenShape lists the tokens of an HTML document by type, with the names
// and attribute keys of tags: what rewriting values must not change.
func tokenShape(doc []byte) []string {
	var shape []string
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return shape
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, more := z.TagName()
			if string(name) == "base" && tt == html.SelfClosingTagToken {
				// Removing <base href=x href=/>'s hrefs drops the "/" the
				// tokenizer read as self-closing; a void element ignores it.
				tt = html.StartTagToken
			}
			s := tt.String() + " " + string(name)
			for more {
				var key []byte
				key, _, more = z.TagAttr()
				if string(name) == "base" && string(key) == "href" {
					continue // removed
				}
				s += " " + string(key)
			}
			shape = append(shape, s)
		default:
			shape = append(shape, tt.String())
		}
	}
}

// FuzzRewriteCSS checks that rewriting a stylesheet never panics, that a
// walk changing nothing keeps every byte, and that rewriting with nothing
// in the mirror is idempotent.
func FuzzRewriteCSS(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "rewrite", "style.css")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"", "url(", "url(x", `url("x`, "url(x y)", `@import "x`, "@import", `\`, "/*", `url(\`,
		"url(a\\\n)", `@import url("a") "b"`, "u\\72l(x)", "url(x\\)",
	} {
		f.Add([]byte(s))
	}
	sheet, _ := url.Parse("http://example.com/css/site.css")
	f.Fuzz(func(t *testing.T, in []byte) {
		if out := links.RewriteCSS(in, func(string) (string, bool) { return "", false }); !bytes.Equal(out, in) {
			t.Fatalf("a walk that changes nothing changed the bytes: %q → %q", in, out)
		}
		RewriteCSS(in, sheet, "example.com/css/site.css", siteResolve(goldenSite, nil))
		once, _ := RewriteCSS(in, sheet, "example.com/css/site.css", neverResolve)
		twice, _ := RewriteCSS(once, sheet, "example.com/css/site.css", neverResolve)
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent:\n in   %q\n once %q\n twice %q", in, once, twice)
		}
	})
}

// rewriteBenchPage builds a page of about 100 KB with 500 links of all kinds.
func rewriteBenchPage() ([]byte, map[string]string) {
	site := map[string]string{}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>Bench</title>\n")
	b.WriteString(`<link rel="stylesheet" href="/css/site.css"><style>body{background:url(/img/bg.png)}</style>` + "\n")
	site["http://example.com/css/site.css"] = "text/css"
	site["http://example.com/img/bg.png"] = "image/png"
	b.WriteString("</head><body>\n")
	for i := range 498 {
		var href string
		switch i % 5 {
		case 0:
			href = fmt.Sprintf("/docs/page-%d", i)
			site["http://example.com"+href] = htmlType
		case 1:
			href = fmt.Sprintf("../section/%d/", i)
			site[fmt.Sprintf("http://example.com/section/%d/", i)] = htmlType
		case 2:
			href = fmt.Sprintf("/search?q=term-%d&amp;page=2", i)
			site[fmt.Sprintf("http://example.com/search?q=term-%d&page=2", i)] = htmlType
		case 3:
			href = fmt.Sprintf("https://elsewhere.example.org/item/%d", i)
		case 4:
			href = fmt.Sprintf("/img/photo-%d.jpg", i)
			site["http://example.com"+href] = "image/jpeg"
		}
		if i%5 == 4 {
			fmt.Fprintf(&b, `<div class="card"><img src="%s" alt="Photo number %d" width="320" height="200"></div>`+"\n", href, i)
		} else {
			fmt.Fprintf(&b, `<div class="item"><a href="%s" class="link" title="Item %d">Item %d</a> `, href, i, i)
		}
		b.WriteString("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.</p>")
		if i%5 != 4 {
			b.WriteString("</div>\n")
		}
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String()), site
}

func BenchmarkRewriteHTML(b *testing.B) {
	body, site := rewriteBenchPage()
	page, _ := url.Parse("http://example.com/docs/page.html")
	resolve := siteResolve(site, nil)
	_, n := RewriteHTML(body, page, "example.com/docs/page.html", resolve)
	b.Logf("page %d bytes, %d links pointed at the mirror", len(body), n)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		RewriteHTML(body, page, "example.com/docs/page.html", resolve)
	}
}

func ExampleRewriteHTML() {
	page, _ := url.Parse("https://example.com/docs/intro")
	saved := map[string]string{ // what the mirror holds
		"https://example.com/docs/":          "text/html",
		"https://example.com/search?q=go":    "text/html",
		"https://example.com/img/logo.png":   "image/png",
		"https://example.com/docs/intro.css": "text/css",
	}
	resolve := func(u *url.URL) (string, bool) {
		ct, ok := saved[u.String()]
		if !ok {
			return "", false
		}
		return Path(u, ct), true
	}
	body := []byte(`<a href="./">Docs</a> <a href="/search?q=go#hits">Search</a>
<img src="/img/logo.png"> <a href="/about">About</a>`)
	out, n := RewriteHTML(body, page, Path(page, "text/html"), resolve)
	fmt.Printf("%s\n%d links point into the mirror\n", out, n)
	// Output:
	// <a href="index.html">Docs</a> <a href="../search@q=go.html#hits">Search</a>
	// <img src="../img/logo.png"> <a href="https://example.com/about">About</a>
	// 3 links point into the mirror
}
