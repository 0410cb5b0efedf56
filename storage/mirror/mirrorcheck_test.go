package mirror

import (
	"bytes"
	"fmt"
	"log"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/crawler/storage/links"
)

// writeTree creates the files of tree (slash-separated path → content)
// under root.
func writeTree(t *testing.T, root string, tree map[string]string) {
	t.Helper()
	for name, content := range tree {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckMirror(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"h/index.html": `<!DOCTYPE html>
<link rel=stylesheet href="style.css">
<a href="docs/index.html">good</a>
<a href="docs/">good: a directory's index</a>
<a href="docs">broken: a directory</a>
<a href="docs/index.html#part">good, with a fragment</a>
<a href="missing.html#part">broken, with a fragment</a>
<a href="page@q=1.html">good: a query's file</a>
<a href="page?q=1">broken: a raw query</a>
<a href="caf%C3%A9.html">good: decoded</a>
<a href="a%20b.html">good: a space</a>
<a href="%252E%252E">good: a file named %2E%2E</a>
<a href="sub\file.html">good: a backslash is a slash</a>
<a href="./sub/./file.html">good: dot segments</a>
<a href="%2e%2e/other.example/x.css">good: %2e%2e is ..</a>
<a href="../other.example/x.css">good: another host</a>
<a href="../../etc/passwd">broken: out of the root</a>
<a href="/etc/passwd">broken: the file system's root</a>
<a href="escape">broken: a symbolic link out of the root</a>
<a href="a%2Fb">broken: an escaped slash</a>
<a href="http://h/abs">absolute: skipped</a>
<a href="//h/x">protocol-relative: skipped</a>
<a href="#top">fragment: skipped</a>
<a href="mailto:x@y">mailto: skipped</a>
<a href="">empty: skipped</a>
<img src="data:image/png;base64,AAAA">
<img src="img.png" srcset="img.png 1x, logo.png 2x">
<p style="background: url(&quot;bg.png&quot;)">
<meta http-equiv=refresh content="0; url=docs/">
<a href="missing.html">the same broken link twice</a>
`,
		"h/style.css":             `@import "print.css"; a { b: url(docs/index.html) } c { d: url(data:x) } e { f: url(logo.png) }`,
		"h/docs/index.html":       `<a href="../index.html">good</a><a href="..">good</a><a href="../../h/index.html">good</a><a href="../../../x">broken</a>`,
		"h/page@q=1.html":         `<a href="index.html">good</a>`,
		"h/café.html":             ``,
		"h/a b.html":              ``,
		"h/%2E%2E":                ``,
		"h/sub/file.html":         `<a href="../index.html">good</a>`,
		"h/logo.png":              ``,
		"h/based.HTM":             `<base href="docs/"><a href="index.html">good against the base</a><a href="x.html">broken</a>`,
		"h/online.html":           `<base href="http://h/"><a href="anything">not a mirror link</a>`,
		"h/notes.txt":             `<a href="missing.html">not HTML: skipped</a>`,
		"other.example/x.css":     `a { b: url(../h/logo.png) } c { d: url(../../x.png) }`,
		"other.example/empty.css": ``,
	})
	outside := filepath.Join(t.TempDir(), "secret.html")
	if err := os.WriteFile(outside, []byte(`<a href="x">`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{"h/escape", "h/link.html"} {
		if err := os.Symlink(outside, filepath.Join(root, link)); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	big, err := os.Create(filepath.Join(root, "h", "big.html"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(maxCheckedFile + 1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	big.Close()

	rep, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	wantBroken := []BrokenLink{
		{"h/based.HTM", "x.html"},
		{"h/docs/index.html", "../../../x"},
		{"h/index.html", "../../etc/passwd"},
		{"h/index.html", "/etc/passwd"},
		{"h/index.html", "a%2Fb"},
		{"h/index.html", "bg.png"},
		{"h/index.html", "docs"},
		{"h/index.html", "escape"},
		{"h/index.html", "img.png"},
		{"h/index.html", "missing.html"},
		{"h/index.html", "missing.html#part"},
		{"h/index.html", "page?q=1"},
		{"h/style.css", "print.css"},
		{"other.example/x.css", "../../x.png"},
	}
	if !slices.Equal(rep.Broken, wantBroken) {
		t.Errorf("broken:\n%q\nwant\n%q", rep.Broken, wantBroken)
	}
	// h/index.html: 25 relative references (style.css, 19 in <a>, the
	// refresh, img src and two srcset candidates, bg.png); style.css: 3;
	// docs/index.html: 4; page@q=1.html: 1; sub/file.html: 1; based.HTM: 2;
	// other.example/x.css: 2. Eleven files: big.html is too large, online.html
	// counts but has no mirror links.
	if rep.Files != 11 || rep.Links != 38 || rep.TooLarge != 1 || rep.Unlisted != 0 {
		t.Errorf("Files %d, Links %d, TooLarge %d, Unlisted %d; want 11, 38, 1, 0",
			rep.Files, rep.Links, rep.TooLarge, rep.Unlisted)
	}
}

func TestCheckMirrorBound(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := range maxBrokenLinks + 50 {
		fmt.Fprintf(&b, `<a href="missing-%05d.html"><a href="missing-%05d.html">`, i, i)
	}
	writeTree(t, root, map[string]string{"h/a.html": b.String(), "h/b.html": `<a href="missing.html">`})
	rep, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Broken) != maxBrokenLinks || rep.Unlisted != 51 || rep.Links != 2*(maxBrokenLinks+50)+1 {
		t.Fatalf("listed %d, unlisted %d, links %d", len(rep.Broken), rep.Unlisted, rep.Links)
	}
	if rep.Broken[0].Ref != "missing-00000.html" || rep.Broken[maxBrokenLinks-1].Ref != "missing-09999.html" {
		t.Errorf("kept %v … %v", rep.Broken[0], rep.Broken[maxBrokenLinks-1])
	}
}

func TestCheckMirrorNoRoot(t *testing.T) {
	if _, err := Check(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("no error for a missing root")
	}
}

func TestRefPath(t *testing.T) {
	tests := []struct {
		dir, ref, want string
		ok             bool
	}{
		{"h", "a.html", "h/a.html", true},
		{"h", "a/", "h/a/index.html", true},
		{"h", ".", "h/index.html", true},
		{"h", "..", "index.html", true},
		{"h", "../..", "", false},
		{".", "a.html", "a.html", true},
		{"h/d", "../x/./y/../z.css", "h/x/z.css", true},
		{"h", "a//b", "h/a/b", true},
		{"h", "%41.html", "h/A.html", true},
		{"h", "100%.html", "h/100%.html", true},
		{"h", "%zz", "h/%zz", true},
		{"h", "a%00b", "", false},
		{"h", "a%2fb", "", false},
		{"h", "/x", "", false},
		{"h", `\x`, "", false},
		{"h", "a#b/../..", "h/a", true},
		{"h", ".%2E/.%2e/x", "", false},
	}
	for _, tt := range tests {
		got, ok := refPath(tt.dir, tt.ref)
		if got != tt.want && tt.ok || ok != tt.ok {
			t.Errorf("refPath(%q, %q) = %q, %v; want %q, %v", tt.dir, tt.ref, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzRefPath checks that a reference never maps onto a path outside the
// root.
func FuzzRefPath(f *testing.F) {
	for _, s := range []string{"a", "../a", "a/../../b", "%2e%2e/x", `..\x`, "/x", "a/", "a%2F..%2F..", "a#..", "./.././"} {
		f.Add("h/d", s)
	}
	f.Fuzz(func(t *testing.T, dir, ref string) {
		if !filepath.IsLocal(dir) || strings.Contains(dir, `\`) {
			return
		}
		dir = path.Clean(dir)
		p, ok := refPath(dir, ref)
		if !ok {
			return
		}
		if !filepath.IsLocal(p) || path.Clean(p) != p {
			t.Fatalf("refPath(%q, %q) = %q", dir, ref, p)
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == ".." {
				t.Fatalf("refPath(%q, %q) = %q", dir, ref, p)
			}
		}
	})
}

// TestMirrorLinksEndToEnd writes a small site with Mirror.Write, rewrites
// its pages and stylesheets with a resolve built on the mirror, and checks
// that every link of the result leads to a file.
func TestMirrorLinksEndToEnd(t *testing.T) {
	const (
		origin = "http://127.0.0.1:8001"
		html   = "text/html; charset=utf-8"
		css    = "text/css"
	)
	site := []struct{ url, ct, body string }{
		{"/", html, `<!DOCTYPE html><html><head><link rel=stylesheet href="/style.css"></head><body>
<a href="/docs/">Docs</a> <a href="docs/intro">Intro</a> <a href="/search?q=go&amp;page=2#r">Search</a>
<a href="/data">Data</a> <a href="/data/x.json">X</a> <a href="/caf%C3%A9">Café</a> <a href="/a%20b">Space</a>
<a href="/about">not mirrored</a> <a href="https://elsewhere.example/">elsewhere</a> <a href="#top">top</a>
<img src="/img/logo.png" srcset="/img/logo.png 1x, /img/logo@2x.png 2x"></body></html>`},
		{"/docs/", html, `<a href="../">Home</a> <a href="intro#s2">Intro</a> <a href="../search?q=go&page=2">Search</a>
<p style="background: url('/img/bg.png')">x</p><style>@import url(/print.css);</style>`},
		{"/docs/intro", html, `<head><base href="/docs/"><meta http-equiv="refresh" content="30; url=./"></head>
<a href="./">Docs</a> <a href="../">Home</a> <a href="../search?q=go&amp;page=3">not mirrored</a>`},
		{"/search?q=go&page=2", html, `<a href="/">Home</a> <a href="?q=go&amp;page=3">next</a> <a href="docs/intro">Intro</a>`},
		{"/caf%C3%A9", html, `<a href="a%20b">Space</a> <a href="./">Home</a>`},
		{"/a%20b", html, `<a href="caf%C3%A9">Café</a>`},
		{"/style.css", css, `@import "print.css"; body { background: url(img/bg.png) } .logo { background: url("/img/logo.png") }`},
		{"/print.css", css, `.x { background: url(/img/logo@2x.png) }`},
		{"/img/logo.png", "image/png", "PNG"},
		{"/img/logo@2x.png", "image/png", "PNG"},
		{"/img/bg.png", "image/png", "PNG"},
		{"/data", "application/json", `{}`},
		{"/data/x.json", "application/json", `{}`},
	}
	root := t.TempDir()
	m, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, p := range site {
		u := mustParse(t, origin+p.url)
		types[u.String()] = p.ct
		if _, err := m.Write(u, p.ct, strings.NewReader(p.body)); err != nil {
			t.Fatal(err)
		}
	}

	before, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Broken) == 0 {
		t.Fatal("the raw mirror has no broken links: the check cannot fail")
	}

	resolve := func(u *url.URL) (string, bool) {
		ct, ok := types[u.String()]
		if !ok {
			return "", false
		}
		p, err := m.Locate(u, ct) // Path, or index.html inside it
		return p, err == nil
	}
	rewritten := 0
	known := map[string]Known{}
	for _, p := range site {
		if p.ct != html && p.ct != css {
			continue
		}
		u := mustParse(t, origin+p.url)
		self, err := m.Locate(u, p.ct)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		var n int
		k := Known{CSS: p.ct == css}
		if p.ct == html {
			out, n, k.Refs = RewriteHTMLRefs([]byte(p.body), u, self, resolve)
		} else {
			out, n, k.Refs = RewriteCSSRefs([]byte(p.body), u, self, resolve)
		}
		rewritten += n
		got, err := m.Write(u, p.ct, strings.NewReader(string(out)))
		if err != nil || got != self {
			t.Fatalf("rewrote %s to %s, want %s (%v)", p.url, got, self, err)
		}
		if k.Info, err = os.Lstat(filepath.Join(root, filepath.FromSlash(got))); err != nil {
			t.Fatal(err)
		}
		known[got] = k
	}

	rep, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	// The references a rewrite returns are those Check reads in the file.
	for file, k := range known {
		body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		var scanned []string
		if k.CSS {
			links.ScanCSS(body, func(ref string) { scanned = append(scanned, ref) })
		} else {
			links.Scan(body, func(ref links.Ref) {
				if ref.Kind != links.Base && ref.Kind != links.Form {
					scanned = append(scanned, ref.URL)
				}
			})
		}
		if !slices.Equal(scanned, k.Refs) {
			t.Errorf("%s: rewrite returned references %q, the file holds %q", file, k.Refs, scanned)
		}
	}
	if fromKnown, err := CheckKnown(root, known); err != nil || !reflect.DeepEqual(fromKnown, rep) {
		t.Errorf("CheckKnown = %+v, %v; want Check's %+v", fromKnown, err, rep)
	}
	// CheckKnown takes a known file's references as they are; once the file
	// is replaced, it reads it again.
	lie := known["127.0.0.1:8001/index.html"]
	lie.Refs = []string{"nowhere.html"}
	known["127.0.0.1:8001/index.html"] = lie
	if got, _ := CheckKnown(root, known); len(got.Broken) != 1 || got.Broken[0].Ref != "nowhere.html" {
		t.Errorf("CheckKnown with a known index.html linking to nowhere.html: %+v", got)
	}
	body, err := os.ReadFile(filepath.Join(root, "127.0.0.1:8001", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(mustParse(t, origin+"/"), html, bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	if got, _ := CheckKnown(root, known); !reflect.DeepEqual(got, rep) {
		t.Errorf("CheckKnown after index.html was written again = %+v; want %+v", got, rep)
	}
	if len(rep.Broken) != 0 || rep.Unlisted != 0 {
		t.Errorf("broken links after rewriting: %q", rep.Broken)
	}
	// Eight pages and stylesheets, and /data, now data/index.html; every
	// relative link left is one that RewriteHTML or RewriteCSS made.
	if rep.Files != 8 || rep.Links != rewritten || rewritten != 28 {
		t.Errorf("Files %d, Links %d, rewritten %d; want 8, 28, 28", rep.Files, rep.Links, rewritten)
	}
	index, err := os.ReadFile(filepath.Join(root, "127.0.0.1:8001", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`href="style.css"`, `href="docs/index.html"`, `href="search@q=go&amp;page=2.html#r"`,
		`href="data%25!"`, `href="caf%C3%A9.html"`, `href="a%20b.html"`,
		`href="http://127.0.0.1:8001/about"`, `href="https://elsewhere.example/"`, `href="#top"`,
		`srcset="img/logo.png 1x, img/logo%25402x.png 2x"`, // the file is logo%402x.png
	} {
		if !strings.Contains(string(index), want) {
			t.Errorf("index.html lacks %s:\n%s", want, index)
		}
	}
}

func ExampleCheck() {
	root, _ := os.MkdirTemp("", "mirror")
	defer os.RemoveAll(root)
	m, err := New(root)
	if err != nil {
		log.Fatal(err)
	}
	u, _ := url.Parse("https://example.com/")
	page := `<a href="docs/index.html">Docs</a> <a href="about.html">About</a>`
	if _, err := m.Write(u, "text/html", strings.NewReader(page)); err != nil {
		log.Fatal(err)
	}
	u, _ = url.Parse("https://example.com/docs/")
	if _, err := m.Write(u, "text/html", strings.NewReader(`<a href="../index.html">Home</a>`)); err != nil {
		log.Fatal(err)
	}

	rep, err := Check(root)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d files, %d links, %d broken\n", rep.Files, rep.Links, len(rep.Broken))
	for _, b := range rep.Broken {
		fmt.Printf("%s: %s\n", b.File, b.Ref)
	}
	// Output:
	// 2 files, 3 links, 1 broken
	// example.com/index.html: about.html
}
