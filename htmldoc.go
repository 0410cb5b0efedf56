package crawler

import (
	"io"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// urlElements are the elements extractHTML reads a URL from, when they have
// attributes. Any other element matters only for its style attribute.
var urlElements = map[string]bool{
	"a": true, "area": true, "audio": true, "base": true, "body": true, "embed": true,
	"frame": true, "iframe": true, "img": true, "input": true, "link": true, "meta": true,
	"object": true, "script": true, "source": true, "table": true, "td": true, "th": true,
	"track": true, "video": true,
}

// linkDocument reads an HTML page into a flat document for goquery: a root
// holding, in page order, each element that can refer to a URL (those of
// urlElements, and any with a style attribute) with its attributes, and
// each <style> with its text.
//
// It tokenizes rather than builds the HTML5 tree, which on a documentation
// crawl took a third of the crawler's CPU and barely bears on links: the
// tokenizer already skips comments and the raw text of scripts, titles and
// text areas, and decodes character references. What the tree builder
// would add is copied: <noscript> is read as markup (a browser without
// scripts), <image> is <img>, and xlink:href is href (SVG links). What it
// would drop is kept, as wget keeps it: an <a> inside a <select>, the
// attributes of a second <body>, markup after a <frameset>. A read error
// ends the document where it happened.
func linkDocument(r io.Reader) *html.Node {
	root := &html.Node{Type: html.DocumentNode}
	z := html.NewTokenizer(r)
	type attr struct{ key, val []byte }
	var attrs []attr
	var style *html.Node // the <style> whose text comes next
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return root
		case html.TextToken:
			if style != nil {
				style.AppendChild(&html.Node{Type: html.TextNode, Data: string(z.Text())})
			}
			style = nil
			continue
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			style = nil
			continue
		}
		style = nil
		name, more := z.TagName()
		if tt == html.StartTagToken && string(name) == "noscript" {
			z.NextIsNotRawText()
		}
		attrs = attrs[:0]
		styled := false
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			attrs = append(attrs, attr{k, v})
			styled = styled || string(k) == "style"
		}
		if string(name) == "image" {
			name = []byte("img")
		}
		if !styled && string(name) != "style" && (len(attrs) == 0 || !urlElements[string(name)]) {
			continue
		}
		n := &html.Node{Type: html.ElementNode, Data: string(name), DataAtom: atom.Lookup(name)}
		n.Attr = make([]html.Attribute, len(attrs))
		for i, a := range attrs {
			n.Attr[i] = html.Attribute{Key: string(a.key), Val: string(a.val)}
			if n.Attr[i].Key == "xlink:href" {
				n.Attr[i].Namespace, n.Attr[i].Key = "xlink", "href"
			}
		}
		root.AppendChild(n)
		if n.DataAtom == atom.Style && tt == html.StartTagToken {
			style = n
		}
	}
}
