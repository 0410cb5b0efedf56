package crawler

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/links"
	"golang.org/x/net/html"
)

var update = flag.Bool("update", false, "rewrite golden files")

var kindNames = map[linkKind]string{
	linkAnchor: "anchor", linkFrame: "frame", linkAlternate: "alternate",
	linkCanonical: "canonical", linkRefresh: "refresh", linkRequisite: "requisite",
}

func TestExtractHTMLGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/extract/*.html")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	page, _ := url.Parse("http://example.com/start.html")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := describe(extractHTML(body, "text/html", page, "ExampleBot", 0))
			golden := strings.TrimSuffix(f, ".html") + ".golden"
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func describe(e extracted) string {
	var b strings.Builder
	fmt.Fprintf(&b, "nofollow=%v noindex=%v canonical=%s\n", nofollow(e.robots), noindex(e.robots), e.canonical)
	hreflang := map[string]string{}
	for _, h := range e.hreflang {
		hreflang[h.Lang] = h.URL
	}
	for _, l := range slices.Sorted(maps.Keys(hreflang)) {
		fmt.Fprintf(&b, "hreflang %s=%s\n", l, hreflang[l])
	}
	for _, l := range e.links {
		fmt.Fprintf(&b, "%s %s", kindNames[l.kind], l.url)
		if l.nofollow {
			b.WriteString(" nofollow")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestExtractNonUTF8(t *testing.T) {
	body := []byte("<html><head><meta charset=\"iso-8859-1\"></head><body><a href=\"/caf\xe9.html\">x</a></body></html>")
	page, _ := url.Parse("http://example.com/")
	e := extractHTML(body, "text/html", page, "", 0)
	if len(e.links) != 1 || e.links[0].url.Path != "/café.html" {
		t.Fatalf("links = %v, want /café.html decoded from Latin-1", e.links)
	}
}

func TestIsHTML(t *testing.T) {
	for _, tc := range []struct {
		ct   string
		body string
		want bool
	}{
		{"text/html; charset=utf-8", "", true},
		{"application/xhtml+xml", "", true},
		{"TEXT/HTML", "", true},
		{"text/plain", "<html>", false},
		{"", "<!DOCTYPE html><html><body>", true},
		{"", "%PDF-1.4", false},
	} {
		if got := isHTML(tc.ct, []byte(tc.body)); got != tc.want {
			t.Errorf("isHTML(%q, %q) = %v", tc.ct, tc.body, got)
		}
	}
}

func TestRefreshURL(t *testing.T) {
	for in, want := range map[string]string{
		"5; url=/next":       "/next",
		"0;URL='/x'":         "/x",
		"0; url = \"/y\" ":   "/y",
		"10":                 "",
		"3; /bare":           "/bare",
		"1;urlx=/no":         "urlx=/no", // HTML: without "url=", the rest is the URL
		"0, url=/comma-form": "/comma-form",
	} {
		if got := links.RefreshURL(in); got != want {
			t.Errorf("refreshURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestXRobotsTag(t *testing.T) {
	for _, tc := range []struct {
		values          []string
		nofollow, noidx bool
	}{
		{[]string{"nofollow"}, true, false},
		{[]string{"noindex, nofollow"}, true, true},
		{[]string{"none"}, true, true},
		{[]string{"OtherBot: nofollow"}, false, false},
		{[]string{"examplebot: nofollow"}, true, false},
		{[]string{"unavailable_after: 25 Jun 2010 15:00:00 PST"}, false, false},
	} {
		h := http.Header{}
		for _, v := range tc.values {
			h.Add("X-Robots-Tag", v)
		}
		list := xRobotsTag(nil, h, "ExampleBot")
		if nf, ni := nofollow(list), noindex(list); nf != tc.nofollow || ni != tc.noidx {
			t.Errorf("X-Robots-Tag %q: nofollow=%v noindex=%v", tc.values, nf, ni)
		}
	}
}

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestReadBody(t *testing.T) {
	plain := bytes.Repeat([]byte("0123456789"), 100)
	for _, tc := range []struct {
		name      string
		body      []byte
		encoding  string
		limit     int64
		size      int64 // the Content-Length the server claims, -1 for none
		want      []byte
		cut       bool
		decodeErr bool
	}{
		{"plain", plain, "", 2000, -1, plain, false, false},
		{"plain with its length", plain, "", 2000, int64(len(plain)), plain, false, false},
		{"plain claiming more", plain, "", 2000, 1 << 40, plain, false, false},
		{"plain claiming less", plain, "", 2000, 10, plain, false, false},
		{"plain cut", plain, "", 100, -1, plain[:100], true, false},
		{"plain cut, claiming its length", plain, "", 100, int64(len(plain)), plain[:100], true, false},
		{"gzip", gzipped(t, plain), "gzip", 2000, -1, plain, false, false},
		{"gzip cut inside the limit", gzipped(t, plain), "gzip", 10, -1, plain[:10], true, false},
		{"gzip that is not", plain, "gzip", 2000, -1, plain, false, true},
		{"unknown encoding kept", plain, "br", 2000, -1, plain, false, true},
		{"truncated gzip keeps what decoded", gzipped(t, plain)[:40], "gzip", 2000, -1, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut, err := readBody(bytes.NewReader(tc.body), tc.encoding, tc.limit, tc.size, nil)
			if tc.decodeErr != (err == errBodyDecode) {
				t.Fatalf("err = %v", err)
			}
			if tc.want == nil { // only a prefix of plain is expected
				if len(got) == 0 || !bytes.HasPrefix(plain, got) {
					t.Fatalf("got %d bytes, not a prefix of the plain body (err %v)", len(got), err)
				}
				return
			}
			if !bytes.Equal(got, tc.want) || cut != tc.cut {
				t.Fatalf("got %d bytes cut=%v, want %d cut=%v", len(got), cut, len(tc.want), tc.cut)
			}
		})
	}
}

func TestReadBodyBomb(t *testing.T) {
	// 64 MiB of zeros in 80 KiB. BestSpeed makes the same kind of bomb as
	// gzipped's default level, in a quarter of the time under -race (1s).
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write(make([]byte, 64<<20))
	zw.Close()
	bomb := buf.Bytes()
	got, cut, err := readBody(bytes.NewReader(bomb), "gzip", 1<<20, -1, nil)
	if err != nil || !cut || len(got) != 1<<20 {
		t.Fatalf("bomb: %d bytes, cut=%v, err=%v", len(got), cut, err)
	}
}

// TestLinkDocumentMatchesTree checks that the token scanner extractHTML
// reads pages with gives the links the full HTML5 tree gives (rendered
// again and scanned), on the golden pages and on what the tokenizer and the
// tree builder treat differently.
func TestLinkDocumentMatchesTree(t *testing.T) {
	pages := []string{
		`<html><head><noscript><link rel="stylesheet" href="/ns.css"></noscript></head>` +
			`<body><noscript><a href="/ns">x</a><img src="/ns.png"></noscript></body></html>`,
		`<svg><a xlink:href="/svg-link"><text>x</text></a><image xlink:href="/svg.png"/></svg>`,
		`<image src="/image.png">`,
		`<!-- <a href="/comment"> --><script>document.write('<a href="/js">')</script>` +
			`<textarea><a href="/textarea"></textarea><title><a href="/title"></title><xmp><a href="/xmp"></xmp>` +
			`<iframe src="/frame"><a href="/in-iframe"></a></iframe><a href="/after">`,
		`<style>@import "a.css"; body { background: url(b.png) }</style><p style="background:url('c.png')">x</p>` +
			`<div style="x"><span style="background:url(d.png)"></span></div><style></style><style/>`,
		`<template><a href="/in-template">t</a></template>`,
		`<base href="/dir/"><base href="/other/"><a href="rel">r</a>`,
		`<a href="/x?a=1&amp;b=2&copy">e</a><A HREF="/upper" REL="NoFollow">u</A><a href="/1" href="/2">d</a>`,
		`<table background="/bg.png"><tr><td background="/td.png">c</td><th background="/th.png">h</th></tr></table>`,
		`<body background="/body.png">`,
		`<meta http-equiv="refresh" content="0; url=/refresh"><meta name="robots" content="noindex, nofollow">`,
		`<link rel="canonical" href="/canonical"><link rel="alternate" hreflang="de" href="/de"><link rel="next" href="/n">`,
		`<object data="/o.swf"></object><embed src="/e.swf"><video src="/v.mp4" poster="/p.jpg"><track src="/t.vtt"></video>` +
			`<audio src="/a.mp3"><source src="/s.ogg"></audio><img srcset="/1x.png 1x, /2x.png 2x"><input type="IMAGE" src="/in.png">`,
		"<a href=\"/nul\x00\">n</a><a\x00 href=\"/tag-nul\">t</a>",
		`<frameset><frame src="/frame1"><frame src="/frame2"></frameset>`,
		`<p><a href="/unclosed">x<a href="/unclosed2`,
	}
	files, _ := filepath.Glob("testdata/extract/*.html")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, string(b))
	}
	page, _ := url.Parse("http://example.com/dir/page.html")
	for i, p := range pages {
		tree, err := html.ParseWithOptions(strings.NewReader(p), html.ParseOptionEnableScripting(false))
		if err != nil {
			t.Fatal(err)
		}
		var rendered bytes.Buffer
		if err := html.Render(&rendered, tree); err != nil {
			t.Fatal(err)
		}
		want := describe(extractFrom(links.Read(&rendered), page, "ExampleBot"))
		got := describe(extractFrom(links.Read(strings.NewReader(p)), page, "ExampleBot"))
		if got != want {
			t.Errorf("page %d (%.60q): token scanner gives\n%s\ntree gives\n%s", i, p, got, want)
		}
		if i < len(pages)-len(files) && !strings.Contains(want, "/") {
			t.Errorf("page %d finds no links: the case tests nothing", i)
		}
	}
}

// FuzzExtractHTML checks that any page extracts without panicking, that
// every link is absolute http(s), and that the canonical and hreflang URLs
// are among the links.
func FuzzExtractHTML(f *testing.F) {
	files, _ := filepath.Glob("testdata/extract/*.html")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b, "text/html")
		}
	}
	f.Add([]byte(`<base href="//x"><a href="../a">`), "text/html; charset=iso-8859-1")
	f.Add([]byte("<style>@import 'a.css'</style><p style=\"background:url(b)\">"), "")
	page, _ := url.Parse("http://example.com/dir/page.html")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		e := extractHTML(body, contentType, page, "ExampleBot", 0)
		found := map[string]bool{}
		for _, l := range e.links {
			if l.url == nil || (l.url.Scheme != "http" && l.url.Scheme != "https") {
				t.Fatalf("link %v is not absolute http(s)", l.url)
			}
			found[l.url.String()] = true
		}
		if e.canonical != "" && !found[e.canonical] {
			t.Fatalf("canonical %q is not among the links", e.canonical)
		}
		for _, h := range e.hreflang {
			if !found[h.URL] {
				t.Fatalf("hreflang %s=%q is not among the links", h.Lang, h.URL)
			}
		}
	})
}

// BenchmarkExtractHTML extracts the links of a 60 KB documentation-like page
// with 400 anchors, a stylesheet, scripts and images.
func BenchmarkExtractHTML(b *testing.B) {
	var page strings.Builder
	page.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Chapter</title>
<link rel="stylesheet" href="/css/site.css"><link rel="next" href="ch2.html"><script src="/js/app.js"></script></head><body>`)
	for i := range 400 {
		fmt.Fprintf(&page, `<div class="toc"><p>Section %d of the manual, with some prose around the link: `+
			`<a href="/docs/section-%d.html#anchor">section %d</a> and <em>emphasis</em>.</p></div>`+"\n", i, i, i)
		if i%40 == 0 {
			fmt.Fprintf(&page, `<img src="/img/figure-%d.png" alt="figure">`, i)
		}
	}
	page.WriteString(`</body></html>`)
	body := []byte(page.String())
	u, _ := url.Parse("http://example.com/docs/chapter.html")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if e := extractHTML(body, "text/html", u, "ExampleBot", 0); len(e.links) != 413 {
			b.Fatalf("%d links", len(e.links))
		}
	}
}

// An HTML page's facts reach its inventory record: title, description and
// h1 with white space collapsed, the canonical from <link> or, without
// one, the Link header, the robots directives of meta tags and
// X-Robots-Tag (for all and for us, not for others) each once, the
// hreflang alternates in page order, and how many links it has.
func TestPageFactsInInventory(t *testing.T) {
	s := newSite(t)
	s.set("/", page{body: `<html><head><title>
		The  Home </title><meta name="Description" content=" All about
		 us "><meta name=robots content="NoIndex, follow"><meta name=examplebot content="noarchive">
		<meta name=otherbot content="nofollow">
		<link rel=canonical href="/home"><link rel=alternate hreflang=es href="/es/">
		<link rel=alternate hreflang=fr href="http://fr.example/"></head>
		<body><h1>Welcome <em>home</em></h1><h1>Second</h1><a href="/a">a</a></body></html>`,
		headers: map[string]string{"X-Robots-Tag": "noindex, noimageindex"}})
	s.set("/a", page{body: `<html><body><a href="/">x</a></body></html>`,
		headers: map[string]string{"Link": `</>; rel="canonical"`, "X-Robots-Tag": "otherbot: noindex"}})
	s.set("/home", page{body: "<html></html>"})
	s.set("/file", page{body: `<html><head><link rel=canonical href="file:///usr/share/doc/x.html"></head></html>`})
	s.set("/two", page{body: `<html><head><link rel=canonical href="/home"><link rel=canonical href="/a"></head></html>`})
	s.set("/hdr", page{body: `<html><head><link rel=canonical href="/hdr"></head></html>`,
		headers: map[string]string{"Link": `</home>; rel="canonical"`}})
	s.set("/same", page{body: `<html><head><link rel=canonical href="/same"></head></html>`,
		headers: map[string]string{"Link": `</same>; rel="canonical"`}})
	cfg := testConfig(t, s.URL+"/", s.URL+"/file", s.URL+"/two", s.URL+"/hdr", s.URL+"/same")
	cfg.UserAgent = "ExampleBot/1.0"
	runCrawl(t, cfg)
	inv := inventory(t, cfg.Output.URLs)
	home := inv[s.URL+"/"]
	if home.Title != "The Home" || home.Description != "All about us" || home.H1 != "Welcome home" ||
		home.Canonical != s.URL+"/home" || home.LinksOut != 4 {
		t.Errorf("facts of /: %+v", home)
	}
	if got := fmt.Sprint(home.MetaRobots); got != "[noindex follow noarchive noimageindex]" {
		t.Errorf("meta_robots of / = %s", got)
	}
	if got := fmt.Sprint(home.Hreflang); got != "[{es "+s.URL+"/es/} {fr http://fr.example/}]" {
		t.Errorf("hreflang of / = %s", got)
	}
	if a := inv[s.URL+"/a"]; a.Canonical != s.URL+"/" || a.MetaRobots != nil || a.Title != "" || a.LinksOut != 1 {
		t.Errorf("facts of /a: %+v", a)
	}
	if f := inv[s.URL+"/file"]; f.Canonical != "file:///usr/share/doc/x.html" {
		t.Errorf("canonical of /file = %q; want the file:// URL as written", f.Canonical)
	}
	// Two canonicals naming different URLs: the first tag is the
	// canonical, the other (a second tag, or the header) the conflict.
	for path, want := range map[string][2]string{"/two": {"/home", "/a"}, "/hdr": {"/hdr", "/home"}, "/same": {"/same", ""}, "/a": {"/", ""}} {
		r := inv[s.URL+path]
		conflict := ""
		if want[1] != "" {
			conflict = s.URL + want[1]
		}
		if r.Canonical != s.URL+want[0] || r.CanonicalConflict != conflict {
			t.Errorf("%s: canonical %q, conflict %q; want %q, %q", path, r.Canonical, r.CanonicalConflict, s.URL+want[0], conflict)
		}
	}
}

// The link graph has a line per link found on a fetched page, followed or
// not: its kind, rel, nofollow (rel's or the page's) and anchor text (an
// <a>'s text, or its image's alt; an <img>'s alt), and a line per redirect.
func TestLinkGraph(t *testing.T) {
	s := newSite(t)
	s.set("/", page{body: `<html><head><link rel=canonical href="/"><link rel=stylesheet href="/s.css">
		<link rel=alternate hreflang=de href="/de/"><meta http-equiv=refresh content="30; url=/r">
		<style>body { background: url(/bg.png) }</style><script src="/app.js"></script></head>
		<body><a href="/a" rel="nofollow">  The
		  A page </a><a href="/img-only"><img src="/logo.png" alt="Logo"></a>
		<a href="http://elsewhere.test/x">out</a><area href="/map"><iframe src="/frame"></iframe>
		<form action="/search"></form><a href="/old">old</a>
		<a href="mailto:me@example.com">mail</a><a href="javascript:void(0)">js</a></body></html>`})
	s.set("/file", page{body: `<html><head><link rel=canonical href="file:///usr/share/doc/x.html"></head></html>`})
	s.set("/old", page{status: 301, headers: map[string]string{"Location": "/new"}})
	s.html("/new")
	s.set("/quiet", page{body: `<html><head><meta name=robots content=nofollow></head><body><a href="/a">a</a></body></html>`})
	cfg := testConfig(t, s.URL+"/", s.URL+"/quiet", s.URL+"/file")
	cfg.Output.Links = filepath.Join(t.TempDir(), "links.jsonl")
	runCrawl(t, cfg)
	b, err := os.ReadFile(cfg.Output.Links)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l storage.Link
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, fmt.Sprintf("%s→%s %s rel=%s nofollow=%v anchor=%q",
			strings.TrimPrefix(l.From, s.URL), strings.TrimPrefix(l.To, s.URL), l.Kind, l.Rel, l.Nofollow, l.Anchor))
	}
	slices.Sort(got)
	want := []string{
		`/old→/new redirect rel= nofollow=false anchor=""`,
		`/quiet→/a a rel= nofollow=true anchor="a"`,
		`/→/ canonical rel=canonical nofollow=false anchor=""`,
		`/→/a a rel=nofollow nofollow=true anchor="The A page"`,
		`/→/app.js script rel= nofollow=false anchor=""`,
		`/→/bg.png css rel= nofollow=false anchor=""`,
		`/→/de/ hreflang rel=alternate nofollow=false anchor=""`,
		`/→/frame iframe rel= nofollow=false anchor=""`,
		`/→/img-only a rel= nofollow=false anchor="Logo"`,
		`/→/logo.png img rel= nofollow=false anchor="Logo"`,
		`/→/map area rel= nofollow=false anchor=""`,
		`/→/old a rel= nofollow=false anchor="old"`,
		`/→/r meta-refresh rel= nofollow=false anchor=""`,
		`/→/s.css link rel=stylesheet nofollow=false anchor=""`,
		`/→http://elsewhere.test/x a rel= nofollow=false anchor="out"`,
		`/→mailto:me@example.com a rel= nofollow=false anchor="mail"`,
		`/file→file:///usr/share/doc/x.html canonical rel=canonical nofollow=false anchor=""`,
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("link graph:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The resolver gives what resolveLink gives, less the fragment, however
// often and in whatever order a page repeats a reference.
func TestResolverMatchesResolveLink(t *testing.T) {
	base := frontier.MustParse("http://example.com/a/b.html?q=1")
	refs := []string{
		"c.html", "c.html#x", " c.html#y ", "c.html#%zz", "c.html#%4", "c.html#%41", "c.html#a\x01b",
		"#top", "", "  ", "../d/", "../d/#", "?x=1#f", "//other.example/p#f", "mailto:a@b#c",
		"http://[::1", "http://[::1#f", "javascript:x()", "HTTP://Example.COM/%7e#k", "c.html",
	}
	backward := slices.Clone(refs)
	slices.Reverse(backward)
	for _, order := range [][]string{refs, backward} {
		r := resolver{base: base, seen: map[string]*url.URL{}}
		for _, raw := range append(order, order...) { // the second time from the cache
			want := resolveLink(base, raw)
			if want != nil {
				want.Fragment, want.RawFragment = "", ""
			}
			got := r.resolve(raw)
			switch {
			case (got == nil) != (want == nil):
				t.Errorf("%q: resolver %v, resolveLink %v", raw, got, want)
			case got != nil && got.String() != want.String():
				t.Errorf("%q: resolver %q, resolveLink %q", raw, got, want)
			}
		}
	}
}

// Custom extraction: each 200 HTML page's values under their names; an
// extraction that matches nothing is left out.
func TestCustomExtraction(t *testing.T) {
	s := newSite(t)
	s.set("/", page{body: `<html><body><h1 class=t>Shoe</h1><span data-sku="S-1"></span>
		<ul><li class=tag>red</li><li class=tag>big</li></ul><a href="/b">b</a></body></html>`})
	s.set("/b", page{body: `<html><body>nothing</body></html>`})
	cfg := testConfig(t, s.URL+"/")
	cfg.Extract = []ExtractConfig{{Name: "name", CSS: "h1.t"}, {Name: "sku", CSS: "[data-sku]", Attr: "data-sku"},
		{Name: "tags", CSS: "li.tag", All: true}}
	runCrawl(t, cfg)
	inv := inventory(t, cfg.Output.URLs)
	if got := fmt.Sprint(inv[s.URL+"/"].Extracted); got != "map[name:Shoe sku:S-1 tags:[red big]]" {
		t.Errorf("extracted of /: %s", got)
	}
	if got := inv[s.URL+"/b"].Extracted; got != nil {
		t.Errorf("extracted of /b: %v", got)
	}
	cfg.Extract = append(cfg.Extract, ExtractConfig{Name: "name", CSS: "p["}, ExtractConfig{CSS: "p"})
	err := cfg.Validate()
	for _, want := range []string{`extract[3].name: "name" is the name of an earlier extraction`, `extract[3].css: want a CSS selector, got "p["`, "extract[4].name: must not be empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want %s", err, want)
		}
	}
}
