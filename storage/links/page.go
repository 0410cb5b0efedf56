package links

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/cascadia"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// Page is what Read found in an HTML page: its references, and a small
// document of its head elements for the facts a page states about itself.
type Page struct {
	Refs []Ref // in document order, <base> included
	// Cut counts the references past the limit ReadHTMLLimit was given:
	// found, not kept.
	Cut int
	// Facts are what the audit reads in the body (word count, text
	// hashes, lang, h1s, images without alt, fragment targets).
	Facts Facts
	head  *html.Node
	doc   *goquery.Document // of head, made once
	texts texts
}

// ReadHTML reads an HTML page, decoding it from the charset its
// Content-Type, a byte order mark or a <meta charset> declares (as
// x/net/html/charset determines it) to UTF-8 first.
func ReadHTML(body []byte, contentType string) *Page {
	return ReadHTMLLimit(body, contentType, 0)
}

// ReadHTMLLimit is ReadHTML keeping at most limit references (every one
// when limit ≤ 0): those past it are counted in Page.Cut, not kept, so
// that what a page holds is bounded by limit, not by how densely the page
// is written (a 10 MiB page of <a href=N> is 750,000 references). The
// facts a page states about itself are read from its first limit <link>,
// <meta> and <base> elements (Head), its title and h1 from all of it.
func ReadHTMLLimit(body []byte, contentType string, limit int) *Page {
	// windows-1252 is what a page that declares no charset is taken to
	// be; an ASCII one reads the same in it, and is not copied whole.
	if enc, name, _ := charset.DetermineEncoding(body, contentType); name != "utf-8" && (name != "windows-1252" || !isASCII(body)) {
		doc, _ := io.ReadAll(enc.NewDecoder().Reader(bytes.NewReader(body)))
		return readPage(doc, limit)
	}
	return readPage(body, limit)
}

// Read reads an HTML page in UTF-8 from r. A read error ends the page where
// it happened.
func Read(r io.Reader) *Page {
	doc, _ := io.ReadAll(r)
	return readPage(doc, 0)
}

// isASCII reports whether b has no byte past 0x7F.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// readPage reads the HTML page doc, in UTF-8, keeping at most limit
// references when limit > 0.
func readPage(doc []byte, limit int) *Page {
	p := &Page{head: &html.Node{Type: html.DocumentNode}}
	var refs refBlocks
	heads := 0 // <link>, <meta> and <base> elements seen
	w := walker{
		visit: func(ref Ref) (string, bool) {
			if limit > 0 && refs.n >= limit {
				p.Cut++
				if ref.Tag == "a" {
					p.texts.closeAnchor() // the <a> before it ends here
				}
				return "", false
			}
			kept := refs.add(ref)
			switch ref.Tag {
			case "a":
				p.texts.openAnchor(kept)
			case "img":
				p.texts.imageIn(ref.Anchor)
			}
			return "", false
		},
		tag: func(name string, attrs []attr) {
			if heads++; limit <= 0 || heads <= limit {
				p.addHead(name, attrs)
			}
		},
		texts: &p.texts,
		facts: newFactScan(),
	}
	w.walk(newTokenizer(doc))
	p.Facts = w.facts.done()
	p.texts.closeAnchor() // an <a> the page never closed
	p.Refs = refs.all()
	return p
}

// refBlock is how many references a block of refBlocks holds: 30 KB,
// below the size from which Go allocates a large object.
const refBlock = 256

// refBlockPool holds the blocks of refBlocks between two pages, each
// cleared: a page's references are gathered in blocks of the pool and
// copied once into Refs, so that what reading a page allocates for them
// is their exact length. A first block of 128 made per page, and more as
// a page had more, were two thirds of the bytes reading the docs pages
// allocated.
var refBlockPool = sync.Pool{New: func() any { return new([refBlock]Ref) }}

// refBlocks gathers a page's references in blocks of refBlockPool, copied
// once into a slice of their exact length by all, which gives the blocks
// back: a reference stays where add put it until then. (Appended to one
// slice, which grows by a quarter at a time, a docs page's 2,480
// references were allocated five times over.)
type refBlocks struct {
	blocks []*[refBlock]Ref
	n      int // references added
}

// add adds r and returns where it is kept until all is called.
func (b *refBlocks) add(r Ref) *Ref {
	i := b.n % refBlock
	if i == 0 {
		b.blocks = append(b.blocks, refBlockPool.Get().(*[refBlock]Ref))
	}
	blk := b.blocks[len(b.blocks)-1]
	blk[i] = r
	b.n++
	return &blk[i]
}

// all returns the references added, in order, and gives the blocks back
// to the pool, cleared: b is not to be used after.
func (b *refBlocks) all() []Ref {
	refs := make([]Ref, b.n)
	for k, blk := range b.blocks {
		used := blk[:min(b.n-k*refBlock, refBlock)]
		copy(refs[k*refBlock:], used)
		clear(used)
		refBlockPool.Put(blk)
	}
	b.blocks = nil
	return refs
}

// addHead adds an element to the head document.
func (p *Page) addHead(name string, attrs []attr) {
	n := &html.Node{Type: html.ElementNode, Data: name, DataAtom: atom.Lookup([]byte(name))}
	n.Attr = make([]html.Attribute, len(attrs))
	for i, a := range attrs {
		n.Attr[i] = html.Attribute{Key: string(a.key), Val: string(a.val)}
	}
	p.head.AppendChild(n)
}

// The selectors of the head facts, compiled once: compiling one costs more
// than the selection it makes in a page's few head elements.
var (
	selBase     = cascadia.MustCompile("base[href]")
	selLinks    = cascadia.MustCompile("link[href][rel]")
	selHreflang = cascadia.MustCompile("link[href][rel][hreflang]")
	selMeta     = cascadia.MustCompile("meta[name][content]")
)

// Head returns, for goquery to select from, a document holding the page's
// <link>, <meta> and <base> elements with their attributes, in page order,
// wherever they were (a page's head is often unclosed or misplaced). It is
// made once per Page.
func (p *Page) Head() *goquery.Document {
	if p.doc == nil {
		p.doc = goquery.NewDocumentFromNode(p.head)
	}
	return p.doc
}

// Base returns the href of the first <base> that has a non-empty one, as
// written.
func (p *Page) Base() string {
	base := ""
	p.Head().FindMatcher(selBase).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		base = s.AttrOr("href", "")
		return base == ""
	})
	return base
}

// Canonicals returns the hrefs of the page's <link rel=canonical>, as
// written, in page order.
func (p *Page) Canonicals() []string {
	var out []string
	p.Head().FindMatcher(selLinks).Each(func(_ int, s *goquery.Selection) {
		if LinkKind(s.AttrOr("rel", "")) == Canonical {
			out = append(out, s.AttrOr("href", ""))
		}
	})
	return out
}

// Hreflang is a <link rel=alternate hreflang href>: the page in another language.
type Hreflang struct{ Lang, Href string }

// Hreflangs returns the page's language alternates, in page order.
func (p *Page) Hreflangs() []Hreflang {
	var out []Hreflang
	p.Head().FindMatcher(selHreflang).Each(func(_ int, s *goquery.Selection) {
		lang := strings.TrimSpace(s.AttrOr("hreflang", ""))
		if lang != "" && firstRel(s.AttrOr("rel", "")) == "alternate" {
			out = append(out, Hreflang{Lang: lang, Href: s.AttrOr("href", "")})
		}
	})
	return out
}

// MetaRobots returns the contents of the page's <meta name=robots> and
// <meta name=AGENT> (agent being our product token, matched without
// regard to case; "" for robots only), in page order.
func (p *Page) MetaRobots(agent string) []string {
	var out []string
	p.Head().FindMatcher(selMeta).Each(func(_ int, s *goquery.Selection) {
		name := strings.TrimSpace(s.AttrOr("name", ""))
		if strings.EqualFold(name, "robots") || agent != "" && strings.EqualFold(name, agent) {
			out = append(out, s.AttrOr("content", ""))
		}
	})
	return out
}

// Title returns the text of the page's first <title>, white space
// collapsed; "" when it has none.
func (p *Page) Title() string { return collapse(p.texts.title.String()) }

// H1 returns the text of the page's first <h1>, white space collapsed.
func (p *Page) H1() string { return collapse(p.texts.h1.String()) }

// Description returns the content of the page's first
// <meta name=description>, white space collapsed.
func (p *Page) Description() string {
	desc := ""
	p.Head().FindMatcher(selMeta).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if strings.EqualFold(strings.TrimSpace(s.AttrOr("name", "")), "description") {
			desc = collapse(s.AttrOr("content", ""))
			return false
		}
		return true
	})
	return desc
}

// collapse trims s and writes each run of white space in it as one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
