package links

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// tokenSource is what the two tokenizers share.
type tokenSource struct {
	next   func() html.TokenType
	raw    func() []byte
	text   func() []byte
	name   func() []byte
	attr   func() ([]byte, []byte, bool)
	notRaw func()
}

// tokenList lists a document's tokens, one line each with everything the
// walker asks of them, asking NextIsNotRawText after <noscript> and
// <noframes> as the walker does.
func tokenList(s tokenSource) []string {
	var out []string
	for len(out) < 1<<16 {
		tt := s.next()
		line := fmt.Sprintf("%v %q", tt, s.raw())
		switch tt {
		case html.ErrorToken:
			return append(out, line)
		case html.TextToken:
			line += fmt.Sprintf(" text=%q", s.text())
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name := s.name()
			line += fmt.Sprintf(" name=%q", name)
			for more := true; more; {
				var k, v []byte
				k, v, more = s.attr()
				if k == nil {
					break
				}
				line += fmt.Sprintf(" %q=%q", k, v)
			}
			if tt == html.StartTagToken && (string(name) == "noscript" || string(name) == "noframes") {
				s.notRaw()
			}
		}
		out = append(out, line)
	}
	return out
}

func netTokens(doc []byte) []string {
	z := html.NewTokenizer(bytes.NewReader(doc))
	return tokenList(tokenSource{
		next: z.Next, raw: z.Raw, text: z.Text, attr: z.TagAttr, notRaw: z.NextIsNotRawText,
		name: func() []byte { n, _ := z.TagName(); return n },
	})
}

func ourTokens(doc []byte) []string {
	z := newTokenizer(doc)
	return tokenList(tokenSource{
		next: z.Next, raw: z.Raw, text: z.Text, attr: z.TagAttr, notRaw: z.NextIsNotRawText, name: z.TagName,
	})
}

// sameTokens fails t when the two tokenizers differ on doc.
func sameTokens(t *testing.T, doc []byte) {
	t.Helper()
	in := bytes.Clone(doc)
	want := netTokens(doc)
	got := ourTokens(doc)
	if !bytes.Equal(doc, in) {
		t.Fatalf("the tokenizer changed its document %q", in)
	}
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("document %q, token %d:\n got  %s\n want %s", doc, i, got[i], want[i])
			}
		}
		t.Fatalf("document %q: %d tokens, want %d:\n got  %q\n want %q", doc, len(got), len(want), got, want)
	}
}

// tokenCases are documents with each construct the tokenizer reads, and
// the ones it hands over, in their edge cases.
var tokenCases = []string{
	"", "a", "<", "a<", "a<b", "<a", "a <3 b", "a<<b>c", "a < b > c", "<1>", "<=>", "a</", "a</ b>", "</>", "<//>",
	"</a", "</a b=c>", "</A\tB>", "</a/>", "<?xml x?>a", "<?", "<!", "<!-", "<!--", "<!---", "<!-->a", "<!--->a",
	"<!---->a", "<!-- a -->b", "<!-- a --!>b", "<!-- a --!", "<!-- a --!-->b", "<!-- a --!x-->b", "<!-- a --!!>b-->",
	"<!-- a -- >b -->c", "<!-- a --", "<!-- a -", "<!-- a", "<!--a--!-x-->b", "<!doctype html>a", "<!DOCTYPE", "<!DOCTYP",
	"<!DocType\nhtml >", "<!DOCTYPE>", "<!DOCTYPE html", "<!doctypex>", "<!x>a", "<![CDATA[a]]>b", "<!-x>",
	"<a>", "<A HREF=x>", "<a href>", "<a href=>", "<a href= >", "<a href=x>", "<a href='x'>", `<a href="x">`,
	`<a href = "x" >`, "<a href=x/>", "<a href=/>", "<a href='/'/>", "<br/>", "<br />", "<br/ >", "<a/b>", "<a/b=c/>",
	"<a b/c>", "<a =b>", "<a ==b>", "<a =>", "<a b==c>", "<a b=c=d>", "<a b='c'd>", `<a b="c"d=e>`, "<a b c>",
	"<a B=1 b=2 b=3>", "<a b=1 B=2>", "<a\x00=1 \x00=2>", "<a\x00b c=\x00>", "<a b=&amp;c>", "<a b='&lt;&gt'>",
	"<a b='&ampx'>", "<a b='&notit;'>", "<a b='x\ry'>", "<a b='x\r\ny'>", "<a b=\"x\ny\">", "<a\fb=c\td=e\n>",
	"<a b='c", `<a b="c`, "<a b=c", "<a b=", "<a b", "<a ", "<a\n", "<a/", "<a b=c/", "<ab", "<a>b</a>", "<a>b</A >",
	"<É é=1 É=2>", "<a É=1 é=2 x=3>", "<a \xff=1 \xfe=2>", "<p a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 j=10 k=11 l=12 m=13 n=14 o=15 p=16 q=17 A=18 B=19 r=20 é=21 É=22>",
	"<script>a</script>b", "<script>a</SCRIPT >b", "<script>a</scriptx></script>b", "<script>a</script", "<script>a</scrip",
	"<script>a", "<script></script>", "<script/>a</script>", "<SCRIPT>a<b></script>", "<script>a<!--b</script>c</script>d",
	"<script>a<!--<script>b</script>c</script>d-->e</script>f", "<script><!-</script>a", "<script>a</script\x00>",
	"<script>x<!--", "<script>a</script/b>", "<style>a<b>c</style>d", "<style>a</style", "<style></style>",
	"<title>a&amp;b<b>c</title>d", "<title>a\r\nb\rc</title>", "<textarea>a&lt;</textarea>", "<textarea>a\x00b</textarea>",
	"<title>a\x00&amp;</title>", "<xmp>a<b>&amp;</xmp>", "<iframe>a<b></iframe>", "<noembed><a href=x></noembed>",
	"<noframes><a href=x></noframes>", "<noscript><a href=x></noscript>", "<noscript/><a href=x></noscript>",
	"<plaintext>a<b></plaintext>&amp;", "<plaintext>", "<PlainText>a\x00b\r\n", "<style>a</STYLE\n>b", "<style>a</style\t",
	"<title>a</titlex></title>", "<titlex>a</titlex>", "<scripts>a</scripts>", "a&amp;b&lt;c&notit;d&#x41;&#65;\x00e\r\nf\rg",
	"a&", "&amp", "<a>&amp;</a>", "<svg><![CDATA[<a href=x>]]></svg>", "<a href=x><!-- <a href=y> -->",
	"<table><td background=x>", "<?xml version='1.0' encoding='UTF-8'?>\n<!DOCTYPE html><a href=x>", "<?", "<?>", "<?x",
	"<a b='&amp='>", "<a b='&semi;&colon;'>", "<a b='&ampx;y'>", "<a b='&copy'>", "<a b='&copy=x'>", "<a b='&#65;&#x42'>",
	"<a b='x&'>", "<a b='&&amp;'>", "<a b='&nGt;'>", "<a b=&>", `<a b="&a&amp;&b=">`, "<a b='&#'>", "<a b='&#x;'>",
	"<a b='&amp;' c='&notit;'>", "<a b='&Amp;'>", "<a b='&AMP;&AMP'>", "<a b='&lt\r\n&gt'>", "<a b='\x00&amp;'>",
	"<!>", "<!>a", "<!a", "<!ab", "<!abc", "<!a>", "<!->", "<!DOC>", "<!DOCTY", "</ ", "</ >", "</1>a", "</\x00>", "<meta http-equiv=refresh content='0; url=x'>", "<img srcset='a 1x, b 2x'>",
	// Texts and tags past the length verbatim reads byte by byte, decoding at either end.
	"<a b='" + strings.Repeat("x", 70) + "&amp;'>" + strings.Repeat("y", 70) + "\r\n", "<a b='&lt;" + strings.Repeat("x", 70) + "'>&amp;" + strings.Repeat("y", 70),
	"<A B='" + strings.Repeat("x", 70) + "\x00'>" + strings.Repeat("y", 70) + "\x00<title>" + strings.Repeat("y", 70) + "\x00",
}

func TestTokenizerAgrees(t *testing.T) {
	for _, doc := range tokenCases {
		sameTokens(t, []byte(doc))
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*.html"))
	more, _ := filepath.Glob(filepath.Join("..", "mirror", "testdata", "*", "*.html"))
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("found %d test pages, want the repository's", len(files))
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sameTokens(t, b)
		// Every prefix: a document may end anywhere.
		for i := range len(b) {
			sameTokens(t, b[:i])
		}
	}
}

// FuzzTokenizer checks that the tokenizer gives what x/net/html's gives
// for any document.
func FuzzTokenizer(f *testing.F) {
	seeds(f)
	for _, doc := range tokenCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		sameTokens(t, doc)
	})
}

// BenchmarkTokenizer compares the two tokenizers on the Sphinx-shaped page
// of BenchmarkExtractDocs's kind.
func BenchmarkTokenizer(b *testing.B) {
	doc := []byte(strings.Repeat(`<dt class="sig sig-object py" id="x"><span class="sig-prename">os.</span>`+
		`<a class="reference internal" href="#os.path" title="os.path"><code class="xref py"><span class="pre">path</span></code></a>`+
		`<span class="w"> </span>is a module of functions on path names &mdash; see <em>these</em>.</dt>`+"\n", 1000))
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			z := newTokenizer(doc)
			for z.Next() != html.ErrorToken {
			}
		}
	})
	b.Run("x-net-html", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			z := html.NewTokenizer(bytes.NewReader(doc))
			for z.Next() != html.ErrorToken {
			}
		}
	})
}

// TestElementSwitches checks the switches asked for every start tag
// against the lists they stand for.
func TestElementSwitches(t *testing.T) {
	for _, e := range elements {
		if !holdsURL([]byte(e)) {
			t.Errorf("holdsURL(%q) = false, want true", e)
		}
	}
	for _, e := range []string{"span", "div", "li", "p", "section", "h2", "A", "", "aa", "imgs", "bodies"} {
		if holdsURL([]byte(e)) {
			t.Errorf("holdsURL(%q) = true, want false", e)
		}
	}
	var known [][]byte
	for _, n := range append(slices.Clone(elements), attrNames...) {
		known = append(known, []byte(n))
	}
	for _, n := range known {
		if got := intern(n); got != string(n) {
			t.Errorf("intern(%q) = %q", n, got)
		}
	}
	if n := testing.AllocsPerRun(10, func() {
		for _, n := range known {
			intern(n)
		}
	}); n != 0 {
		t.Errorf("intern allocates %v times for the names the grammar knows, want 0", n)
	}
	// The walker's other questions of a name, each told by elementOf.
	names := append(slices.Clone(elements), "span", "div", "p", "style", "title", "template", "noscript",
		"noframes", "h1", "h2", "html", "image", "Script", "")
	for _, n := range names {
		el := elementOf([]byte(n))
		for _, q := range []struct {
			flag element
			want bool
		}{
			{elHidden, slices.Contains([]string{"script", "style", "template", "noscript", "title"}, n)},
			{elMarkup, n == "noscript" || n == "noframes"},
			{elStyle, n == "style"},
			{elFactAttrs, n == "img" || n == "a" || n == "image"},
			{elHTML, n == "html"},
			{elHead, n == "link" || n == "meta" || n == "base"},
			{elTitle, n == "title"},
			{elH1, n == "h1"},
			{elImage, n == "image"},
			{elURL, slices.Contains(elements, n) || n == "image"},
		} {
			if got := el&q.flag != 0; got != q.want {
				t.Errorf("elementOf(%q) has %b: %v, want %v", n, q.flag, got, q.want)
			}
		}
	}
	for _, e := range []string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"} {
		if got := rawElement([]byte(strings.ToUpper(e[:1]) + e[1:])); got != e {
			t.Errorf("rawElement(%q) = %q, want %q", e, got, e)
		}
	}
	for _, e := range []string{"span", "xm", "scripts", "plaintexts", "", "titl"} {
		if got := rawElement([]byte(e)); got != "" {
			t.Errorf("rawElement(%q) = %q, want \"\"", e, got)
		}
	}
}

// TestMayHaveAttr checks the walker's quick test of a tag's keys against
// the keys TagAttr gives: never false for a key it gives, and false for
// one it does not give in a tag the tokenizer read itself.
func TestMayHaveAttr(t *testing.T) {
	docs := append([]string{"<p ID=1 Style=x>", "<p id>", "<p xid=1 styles=2 data-id=3>", "<p id=1 id=2>", "<p/id=1>",
		"<p =id>", "<p \x00id=1>", "<p i\x00d=1>", "<p title='id=1 style=x'>", "<p b='&notit;' id=1>", "<p id='x"}, tokenCases...)
	for _, doc := range docs {
		z := newTokenizer([]byte(doc))
		for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
			if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			has := map[string]bool{}
			quick := map[string]bool{}
			for _, k := range []string{"id", "style", "href"} {
				quick[k] = z.mayHaveAttr(k)
			}
			// The walker's bit tests, noted as the tag was read.
			bits := map[string]bool{"id": z.mayHaveKeys(keyID), "style": z.mayHaveKeys(keyStyle)}
			exact := z.slow == nil
			for more := true; more; {
				k, _, m := z.TagAttr()
				more = m
				if k == nil {
					break
				}
				has[string(k)] = true
			}
			for k, q := range quick {
				if has[k] && !q || exact && q != has[k] {
					t.Errorf("%q, tag %q: mayHaveAttr(%q) = %v, TagAttr gives it: %v", doc, z.Raw(), k, q, has[k])
				}
			}
			for k, q := range bits {
				if has[k] && !q || exact && q != has[k] {
					t.Errorf("%q, tag %q: mayHaveKeys(%s) = %v, TagAttr gives it: %v", doc, z.Raw(), k, q, has[k])
				}
			}
		}
	}
}

// TestVerbatim checks verbatim, read byte by byte or by bytes.IndexByte,
// against its definition: each of '&', CR and NUL anywhere in texts of
// lengths on both sides of the switch between the two.
func TestVerbatim(t *testing.T) {
	for n := range 100 {
		s := bytes.Repeat([]byte("a"), n)
		if !verbatim(s) {
			t.Errorf("verbatim(%q) = false", s)
		}
		for i := range n {
			for _, c := range []byte{'&', '\r', 0} {
				b := bytes.Clone(s)
				b[i] = c
				if verbatim(b) {
					t.Errorf("verbatim(%q) = true", b)
				}
			}
		}
	}
}

// TestUnescapeCommon checks the references decoded without x/net/html
// against html.UnescapeString, in text, and that it declines the others.
func TestUnescapeCommon(t *testing.T) {
	refs := []string{"&amp;", "&lt;", "&gt;", "&quot;", "&nbsp;", "&#39;", "&#039;", "&#9;", "&#13;", "&#127;",
		"&amp", "&ampx;", "&AMP;", "&Lt;", "&lt", "&ltx", "&notit;", "&not;", "&apos;", "&#0;", "&#00;", "&#128;",
		"&#0039;", "&#x41;", "&#X41;", "&#;", "&#", "&", "&;", "&#39", "&#39x", "&#1234567;", "&nbsp", "&quot=", "&& "}
	var docs []string
	for _, r := range refs {
		docs = append(docs, r, "a"+r+"b", r+r, "x "+r+" &gt; "+r)
	}
	decoded := 0
	for _, doc := range docs {
		want := html.UnescapeString(doc)
		got, ok := unescapeCommon([]byte("junk")[:0], []byte(doc))
		if ok {
			decoded++
			if string(got) != want {
				t.Errorf("unescapeCommon(%q) = %q, UnescapeString gives %q", doc, got, want)
			}
		}
	}
	if decoded < 40 {
		t.Errorf("%d of %d texts decoded, want the common ones", decoded, len(docs))
	}
}
