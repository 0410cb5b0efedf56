package links

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// scan lists the references of doc, one line each.
func scan(doc []byte) []string {
	var out []string
	Scan(doc, func(r Ref) {
		out = append(out, fmt.Sprintf("%s %s.%s css=%v rel=%q lang=%q nofollow=%v %q", r.Kind, r.Tag, r.Attr, r.CSS, r.Rel, r.Hreflang, r.Nofollow, r.URL))
	})
	return out
}

func TestScan(t *testing.T) {
	doc := `<base href="/b/"><a href="/a" rel="NoFollow">a</a><area href=ar>` +
		`<link rel="alternate nofollow" hreflang=" de " href="/de"><link rel="canonical alternate" href="/c">` +
		`<link rel="stylesheet" href="s.css"><link rel="preconnect" href="//cdn">` +
		`<frame src=f><iframe src=if></iframe><img src=i srcset="i1 1x, i2 2x" longdesc=ld>` +
		`<image src="/image.png"><svg><image xlink:href="/svg.png"/><a xlink:href="/svg-a"></a></svg><source src=so><script src=sc></script><audio src=au><embed src=em><track src=tr>` +
		`<video src=v poster=p><input type=Image src=in formaction=fa><input type=text src=no><button formaction=bf>` +
		`<form action=fo><object data=ob><body background=bg><table background=tb><td background=td><th background=th>` +
		`<meta http-equiv=Refresh content="0; url=/r"><meta name=x content="0; url=/no">` +
		`<q cite=qc><blockquote cite=bc><ins cite=ic><del cite=dc>` +
		`<p style="background:url(st.png)"><style>@import "im.css"; a{b:url('u.png')}</style>` +
		`<noscript><img src=ns></noscript><script>"<a href=js>"</script><!-- <a href=c> --><textarea><a href=ta></textarea>` +
		`<a href=first href=second>`
	want := []string{
		`base base.href css=false rel="" lang="" nofollow=false "/b/"`,
		`anchor a.href css=false rel="NoFollow" lang="" nofollow=true "/a"`,
		`anchor area.href css=false rel="" lang="" nofollow=false "ar"`,
		`alternate link.href css=false rel="alternate nofollow" lang="de" nofollow=true "/de"`,
		`canonical link.href css=false rel="canonical alternate" lang="" nofollow=false "/c"`,
		`requisite link.href css=false rel="stylesheet" lang="" nofollow=false "s.css"`,
		`other link.href css=false rel="preconnect" lang="" nofollow=false "//cdn"`,
		`frame frame.src css=false rel="" lang="" nofollow=false "f"`,
		`frame iframe.src css=false rel="" lang="" nofollow=false "if"`,
		`requisite img.src css=false rel="" lang="" nofollow=false "i"`,
		`requisite img.srcset css=false rel="" lang="" nofollow=false "i1"`,
		`requisite img.srcset css=false rel="" lang="" nofollow=false "i2"`,
		`other img.longdesc css=false rel="" lang="" nofollow=false "ld"`,
		`requisite img.src css=false rel="" lang="" nofollow=false "/image.png"`,
		`anchor a.xlink:href css=false rel="" lang="" nofollow=false "/svg-a"`,
		`requisite source.src css=false rel="" lang="" nofollow=false "so"`,
		`requisite script.src css=false rel="" lang="" nofollow=false "sc"`,
		`requisite audio.src css=false rel="" lang="" nofollow=false "au"`,
		`requisite embed.src css=false rel="" lang="" nofollow=false "em"`,
		`requisite track.src css=false rel="" lang="" nofollow=false "tr"`,
		`requisite video.src css=false rel="" lang="" nofollow=false "v"`,
		`requisite video.poster css=false rel="" lang="" nofollow=false "p"`,
		`requisite input.src css=false rel="" lang="" nofollow=false "in"`,
		`form input.formaction css=false rel="" lang="" nofollow=false "fa"`,
		`form button.formaction css=false rel="" lang="" nofollow=false "bf"`,
		`form form.action css=false rel="" lang="" nofollow=false "fo"`,
		`requisite object.data css=false rel="" lang="" nofollow=false "ob"`,
		`requisite body.background css=false rel="" lang="" nofollow=false "bg"`,
		`requisite table.background css=false rel="" lang="" nofollow=false "tb"`,
		`requisite td.background css=false rel="" lang="" nofollow=false "td"`,
		`requisite th.background css=false rel="" lang="" nofollow=false "th"`,
		`refresh meta.content css=false rel="" lang="" nofollow=false "/r"`,
		`other q.cite css=false rel="" lang="" nofollow=false "qc"`,
		`other blockquote.cite css=false rel="" lang="" nofollow=false "bc"`,
		`other ins.cite css=false rel="" lang="" nofollow=false "ic"`,
		`other del.cite css=false rel="" lang="" nofollow=false "dc"`,
		`requisite p.style css=true rel="" lang="" nofollow=false "st.png"`,
		`requisite style. css=true rel="" lang="" nofollow=false "im.css"`,
		`requisite style. css=true rel="" lang="" nofollow=false "u.png"`,
		`requisite img.src css=false rel="" lang="" nofollow=false "ns"`,
		`anchor a.href css=false rel="" lang="" nofollow=false "first"`,
	}
	if got := scan([]byte(doc)); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPageFacts(t *testing.T) {
	doc := `<html><head><base href=""><base href="/b/"><link rel="alternate canonical" href="/alt">` +
		`<link rel="Canonical" href="/c1"><link rel="canonical" href="/c2">` +
		`<link rel="alternate" hreflang="de" href="/de"><link rel="alternate" hreflang=" " href="/none">` +
		`<meta name="ROBOTS" content="noindex"><meta name="examplebot" content="nofollow"><meta name="otherbot" content="none">` +
		`</head><body><meta name="robots" content="noarchive"></body></html>`
	p := Read(strings.NewReader(doc))
	if got := p.Base(); got != "/b/" {
		t.Errorf("Base = %q", got)
	}
	if got := p.Canonicals(); !slices.Equal(got, []string{"/c1", "/c2"}) {
		t.Errorf("Canonicals = %q", got)
	}
	if got := p.Hreflangs(); !slices.Equal(got, []Hreflang{{"de", "/de"}}) {
		t.Errorf("Hreflangs = %q", got)
	}
	if got := p.MetaRobots("ExampleBot"); !slices.Equal(got, []string{"noindex", "nofollow", "noarchive"}) {
		t.Errorf("MetaRobots = %q", got)
	}
}

// TestPageTextCut: a title or h1 over the text kept of it is cut on a
// character boundary, not in the middle of one (which the inventory
// would write as U+FFFD).
func TestPageTextCut(t *testing.T) {
	long := strings.Repeat("€", maxText) // 3 bytes each: maxText falls inside one
	p := Read(strings.NewReader("<title>" + long + "</title><h1>a" + long + "</h1>"))
	for name, s := range map[string]string{"title": p.Title(), "h1": p.H1()} {
		if !utf8.ValidString(s) || len(s) > maxText || len(s) < maxText-utf8.UTFMax {
			t.Errorf("%s: %d bytes, valid UTF-8 %v", name, len(s), utf8.ValidString(s))
		}
	}
}

func TestRewriteRenders(t *testing.T) {
	to := func(r Ref) (string, bool) {
		if r.Kind == Base {
			return "", true
		}
		return "N&\"<" + r.URL, true
	}
	tests := []struct{ in, want string }{
		{`<A HREF='x' Class=c data-x>t</A>`, `<a href="N&amp;&quot;&lt;x" class="c" data-x="">t</A>`},
		{`<img src=x />`, `<img src="N&amp;&quot;&lt;x"/>`},
		{`<base target=_top href=/ id=b>`, `<base target="_top" id="b">`},
		{`<p style='a:url("x")'>`, `<p style="a:url(&quot;N&amp;\22 \3c x&quot;)">`},
		{`<a href=x <b>`, `<a href="N&amp;&quot;&lt;x" <b="">`},
		{`<a href=x/ y>`, `<a href="N&amp;&quot;&lt;x/" y="">`},
		{`<br><a>`, `<br><a>`},
	}
	for _, tt := range tests {
		if got := string(Rewrite([]byte(tt.in), to)); got != tt.want {
			t.Errorf("Rewrite(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// seeds are the fuzz targets' starting documents.
func seeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "mirror", "testdata", "rewrite", "*.html"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "<", "<a", "<a href", `<a href="`, "<a href=x", "<base href=x>", "<style>", "<noscript>",
		"<noscript><noscript><a href=x>", "<meta http-equiv=refresh content='0;url=", "<img srcset=',,'>",
		`<p style="url(">`, "<a href=\"\x00\">", "<a b=1 b=2 href=x>", `<a href="x" /`, "<!--", "<svg><style>",
		"<BAse href href=/>", "<a =x href=y>", "<a href=x <b>", "<image xlink:href=a href=b>",
	} {
		f.Add([]byte(s))
	}
}

// FuzzScan checks that scanning any document ends without a panic, and
// that a rewrite changing nothing keeps every byte.
func FuzzScan(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		scan(in)
		Read(bytes.NewReader(in)).MetaRobots("x")
		if out := Rewrite(in, func(Ref) (string, bool) { return "", false }); !bytes.Equal(out, in) {
			t.Fatalf("a rewrite that changes nothing changed the bytes:\n%q\n%q", in, out)
		}
	})
}

// FuzzRewrite checks that a tag written again means what it meant: when
// every reference is "changed" to itself, the document holds the same
// references as before.
func FuzzRewrite(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		out := Rewrite(in, func(r Ref) (string, bool) { return r.URL, r.Kind != Base })
		if a, b := scan(in), scan(out); !slices.Equal(a, b) {
			t.Fatalf("references changed:\n in  %q\n out %q\n%q\n%q", in, out, a, b)
		}
	})
}

// TestTagName checks the walker's tag names, read from the raw tags,
// against the tokenizer's TagName, token by token.
func TestTagName(t *testing.T) {
	doc := `<!DOCTYPE html><HTML><Head><TITLE>t</TITLE><meta charset=utf-8/><br/><BR />` +
		"<a\thref=x>a</A ><p\nclass=y>p</p\n><img\fsrc=i><di\x00v>n</di\x00v><h1>h</h1 x=y>" +
		`<svg:Image xlink:href=s/><x-Y>z</x-Y><a` // an unfinished tag at the end
	z1 := newTokenizer([]byte(doc))
	z2 := html.NewTokenizer(strings.NewReader(doc))
	var w walker
	n := 0
	for {
		tt := z1.Next()
		z2.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.EndTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		want, _ := z2.TagName()
		if got := w.tagName(z1); !bytes.Equal(got, want) {
			t.Errorf("tag %q: tagName %q, TagName %q", z1.Raw(), got, want)
		}
		n++
	}
	if n < 19 {
		t.Errorf("%d tags checked, want at least 19", n)
	}
}

// collapseSpace is strings.Join(strings.Fields(s), " ") for any s.
func TestCollapseSpace(t *testing.T) {
	cases := []string{"", " ", "a", " a", "a ", "a b", "a  b", "a\tb", "\n a \r\n b \f", "a\u00a0b", "\u0085a",
		"a\u2003 b", "\xffa \xfe", "a \xff b", "héllo  wörld", "\u3000x\u3000", "a\vb"}
	alphabet := []string{"a", "é", " ", "\t", "\n", "\u00a0", "\u0085", "\u2028", "\xff", "\xc3", "b"}
	seed := uint32(1)
	for range 2000 {
		var b strings.Builder
		for range int(seed % 9) {
			seed = seed*1664525 + 1013904223
			b.WriteString(alphabet[seed>>16%uint32(len(alphabet))])
		}
		seed = seed*1664525 + 1013904223
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got, want := collapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}
