package links_test

import (
	"fmt"
	"strings"

	"github.com/politecrawl/crawler/storage/links"
)

func ExampleScan() {
	page := `<base href="/docs/"><a href="intro" rel="nofollow">Intro</a>
<link rel="stylesheet" href="site.css"><img src="a.png" srcset="a-2x.png 2x">
<p style="background: url('bg.png')"><form action="search">`
	links.Scan([]byte(page), func(r links.Ref) {
		fmt.Println(r.Kind, r.Tag, r.Attr, r.URL, r.Nofollow)
	})
	// Output:
	// base base href /docs/ false
	// anchor a href intro true
	// requisite link href site.css false
	// requisite img src a.png false
	// requisite img srcset a-2x.png false
	// requisite p style bg.png false
	// form form action search false
}

func ExampleRewrite() {
	page := []byte(`<p class=x><A HREF='intro' Title=Intro>Intro</A> <a href="mailto:x@example.com">mail</a>`)
	out := links.Rewrite(page, func(r links.Ref) (string, bool) {
		if r.Kind != links.Anchor || strings.Contains(r.URL, ":") {
			return "", false // kept byte for byte
		}
		return r.URL + ".html", true
	})
	fmt.Println(string(out))
	// Output:
	// <p class=x><a href="intro.html" title="Intro">Intro</A> <a href="mailto:x@example.com">mail</a>
}

func ExamplePage_MetaRobots() {
	p := links.Read(strings.NewReader(`<meta name="robots" content="noindex"><meta name="ExampleBot" content="nofollow">` +
		`<link rel="canonical" href="https://example.com/a">`))
	fmt.Println(p.MetaRobots("examplebot"), p.Canonicals())
	// Output:
	// [noindex nofollow] [https://example.com/a]
}
