package sitemap

import (
	"bytes"
	"fmt"
)

// Bounds on the element stack, so that hostile nesting costs nothing.
const (
	maxDepth    = 256
	maxNameLen  = 1 << 10
	maxPrefixes = 64
)

// elemID names the elements the formats give meaning to.
type elemID uint8

const (
	elOther elemID = iota
	elURLSet
	elURL
	elLoc
	elLastmod
	elChangefreq
	elPriority
	elSitemapIndex
	elSitemap
	elRSS
	elRDF
	elChannel
	elItem
	elLink
	elPubDate
	elFeed
	elEntry
	elUpdated
	elModified
)

// nsClass is what a namespace prefix is bound to.
type nsClass uint8

const (
	nsForeign nsClass = iota // an extension (image, video, news, xhtml) or unknown
	nsSitemap                // sitemaps.org, or Google's older 0.84/0.9 schemas
	nsAtom
	nsRSS // RSS 1.0
)

// xmlState is the parser's state within an XML file.
type xmlState struct {
	rootSeen   bool
	stack      []frame
	names      []byte             // the open elements' names, end to end
	ns         map[string]nsClass // prefixes declared anywhere in the file
	rootPrefix string             // the root element's prefix: its vocabulary is the file's, whatever namespace it is bound to
	entryDepth int                // stack depth of the open entry element
	capDepth   int                // stack depth of the element captured
	capLimit   int
}

// frame is one open element: its meaning, and where its name ends in names.
type frame struct {
	id  elemID
	end int
}

// parseXML reads XML markup: a streaming tokenizer for the small grammar
// sitemaps and feeds use, not a general XML parser. It never expands
// entities declared in a DOCTYPE.
func (p *parser) parseXML() {
	for !p.done {
		i := bytes.IndexByte(p.buf[p.r:p.w], '<')
		if i < 0 {
			p.text(p.buf[p.r:p.w])
			p.r = p.w
			if !p.fill() {
				p.xmlEOF()
			}
			continue
		}
		if i > 0 {
			p.text(p.buf[p.r : p.r+i])
			p.r += i
		}
		if !p.need(2) {
			p.xmlEOF()
			continue
		}
		switch c := p.buf[p.r+1]; {
		case c == '/':
			p.endTag()
		case c == '?':
			p.r += 2
			p.skipPast("?>", "a processing instruction")
		case c == '!':
			p.declaration()
		case isNameStart(c):
			p.startTag()
		default:
			p.damage("'<' not followed by a tag at byte %d", p.offset())
		}
	}
}

// xmlEOF handles the end of the input within the XML.
func (p *parser) xmlEOF() {
	switch {
	case !p.xml.rootSeen:
		p.ended("no root element: not XML, or truncated")
	case len(p.xml.stack) > 0:
		p.ended(fmt.Sprintf("unexpected end of file inside <%s>: truncated; entries not ended by then are dropped", p.openName(len(p.xml.stack)-1)))
	default:
		p.ended("")
	}
}

// damage stops the reading at malformed markup: the entries before it were
// yielded, the open one and the rest are not.
func (p *parser) damage(format string, args ...any) {
	p.inEntry = false
	p.capture = nil
	p.ended("malformed XML: " + fmt.Sprintf(format, args...) + "; entries from there on are not read")
}

// text handles character data: kept when it is a captured value.
func (p *parser) text(b []byte) {
	if p.capture != nil && len(p.xml.stack) == p.xml.capDepth {
		p.capture.add(b, p.xml.capLimit)
	}
}

// cdata handles the content of a CDATA section: like text, but taken
// literally, so its ampersands are escaped for the entity decoding to come.
func (p *parser) cdata(b []byte) {
	if p.capture == nil || len(p.xml.stack) != p.xml.capDepth {
		return
	}
	for {
		j := bytes.IndexByte(b, '&')
		if j < 0 {
			p.capture.add(b, p.xml.capLimit)
			return
		}
		p.capture.add(b[:j], p.xml.capLimit)
		p.capture.add([]byte("&amp;"), p.xml.capLimit)
		b = b[j+1:]
	}
}

// tagEnd returns the position, from p.r, of the '>' that ends the tag at
// p.r, reading more input as needed; -1 (after reporting why) when the
// input ends first or the tag does not fit in the window.
func (p *parser) tagEnd() int {
	for {
		if i := findTagEnd(p.buf[p.r:p.w]); i >= 0 {
			return i
		}
		if !p.fill() {
			if p.eof {
				p.ended(fmt.Sprintf("unexpected end of file inside a tag at byte %d: truncated", p.offset()))
			} else {
				p.damage("tag longer than %d bytes at byte %d", bufSize, p.offset())
			}
			return -1
		}
	}
}

// findTagEnd returns the index of the '>' ending the tag that b starts
// with, skipping quoted attribute values, or -1.
func findTagEnd(b []byte) int {
	i := bytes.IndexByte(b, '>')
	if i < 0 {
		return -1
	}
	if bytes.IndexByte(b[:i], '"') < 0 && bytes.IndexByte(b[:i], '\'') < 0 {
		return i
	}
	var q byte
	for j, c := range b {
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '>':
			return j
		}
	}
	return -1
}

// startTag handles "<name attrs>" or "<name attrs/>" at p.r.
func (p *parser) startTag() {
	end := p.tagEnd()
	if end < 0 {
		return
	}
	tag := p.buf[p.r+1 : p.r+end]
	p.r += end + 1
	self := len(tag) > 0 && tag[len(tag)-1] == '/'
	if self {
		tag = tag[:len(tag)-1]
	}
	name, attrs := tag, []byte(nil)
	for i, c := range tag {
		if isSpace(c) {
			name, attrs = tag[:i], tag[i:]
			break
		}
	}
	if len(name) > maxNameLen || len(p.xml.stack) >= maxDepth {
		p.damage("element too long or nested too deep at byte %d", p.offset())
		return
	}
	if len(attrs) > 0 && bytes.Contains(attrs, []byte("xmlns:")) {
		p.declarePrefixes(attrs)
	}
	prefix, local := []byte(nil), name
	if i := bytes.LastIndexByte(name, ':'); i >= 0 {
		prefix, local = name[:i], name[i+1:]
	}
	if !p.xml.rootSeen {
		p.root(local)
		if p.done {
			return
		}
		p.xml.rootPrefix = string(prefix)
	}
	id := elOther
	if p.ours(prefix) {
		id = lookupElem(local)
	}
	if len(p.xml.stack) > 0 {
		p.dispatch(id, attrs)
	}
	p.push(id, name)
	if self {
		p.closeElement()
	}
}

// root tells the file's format by its root element.
func (p *parser) root(local []byte) {
	p.xml.rootSeen = true
	switch lookupElem(local) {
	case elURLSet:
		p.res.Kind = KindURLSet
	case elSitemapIndex:
		p.res.Kind = KindIndex
	case elRSS, elRDF:
		p.res.Kind = KindRSS
	case elFeed:
		p.res.Kind = KindAtom
	default:
		p.res.Kind = KindUnknown
		p.done = true
		p.warnf(RuleFormat, "", 0, "root element <%s> is not urlset, sitemapindex, rss or feed: not a sitemap", local)
	}
}

// entryElem is the element that holds one entry in each format.
var entryElem = [...]elemID{KindURLSet: elURL, KindIndex: elSitemap, KindRSS: elItem, KindAtom: elEntry, KindText: elOther, KindUnknown: elOther}

// dispatch gives meaning to a start tag by its place: an entry element
// directly under the root (or, in RSS 2.0, under <channel>), or a field
// directly under the open entry. Anything else — extensions such as
// <image:loc>, unknown namespaces — is skipped.
func (p *parser) dispatch(id elemID, attrs []byte) {
	depth := len(p.xml.stack)
	kind := p.res.Kind
	if !p.inEntry {
		if id == entryElem[kind] && (depth == 1 || depth == 2 && p.xml.stack[1].id == elChannel) {
			p.beginEntry()
			p.xml.entryDepth = depth + 1
		}
		return
	}
	if depth != p.xml.entryDepth {
		return
	}
	switch {
	case id == elLoc && (kind == KindURLSet || kind == KindIndex),
		id == elLink && kind == KindRSS:
		if p.loc.set {
			if kind != KindRSS {
				p.warnf(RuleInvalidURL, "", 0, "a second <loc> in one entry at byte %d ignored", p.offset())
			}
			return
		}
		p.startCapture(&p.loc, maxLocRaw)
	case id == elLink && kind == KindAtom:
		p.atomLink(attrs)
	case id == elLastmod && (kind == KindURLSet || kind == KindIndex),
		id == elPubDate && kind == KindRSS,
		(id == elUpdated || id == elModified) && kind == KindAtom:
		if !p.lastmod.set {
			p.startCapture(&p.lastmod, maxFieldRaw)
		}
	case id == elChangefreq && kind == KindURLSet:
		if !p.changefreq.set {
			p.startCapture(&p.changefreq, maxFieldRaw)
		}
	case id == elPriority && kind == KindURLSet:
		if !p.prio.set {
			p.startCapture(&p.prio, maxFieldRaw)
		}
	}
}

// startCapture directs the text of the element about to be pushed into f.
func (p *parser) startCapture(f *field, limit int) {
	f.set = true
	f.b = f.b[:0]
	p.capture = f
	p.xml.capDepth = len(p.xml.stack) + 1
	p.xml.capLimit = limit
}

// atomLink takes the href of an Atom <link> with no rel or rel="alternate"
// as the entry's location; the first such link wins.
func (p *parser) atomLink(attrs []byte) {
	if p.loc.set {
		return
	}
	var rel, href []byte
	hasHref := false
	for {
		name, val, rest, ok := nextAttr(attrs)
		if !ok {
			break
		}
		attrs = rest
		switch string(name) {
		case "rel":
			rel = trimSpace(val)
		case "href":
			href, hasHref = val, true
		}
	}
	if !hasHref || len(rel) > 0 && !bytes.EqualFold(rel, []byte("alternate")) {
		return
	}
	p.loc.set = true
	p.loc.add(href, maxLocRaw)
}

// push opens an element.
func (p *parser) push(id elemID, name []byte) {
	p.xml.names = append(p.xml.names, name...)
	p.xml.stack = append(p.xml.stack, frame{id: id, end: len(p.xml.names)})
}

// openName returns the name of the open element at stack index i.
func (p *parser) openName(i int) []byte {
	start := 0
	if i > 0 {
		start = p.xml.stack[i-1].end
	}
	return p.xml.names[start:p.xml.stack[i].end]
}

// closeElement closes the innermost open element, ending a captured value
// or an entry, and the reading when it is the root.
func (p *parser) closeElement() {
	depth := len(p.xml.stack)
	if p.capture != nil && depth == p.xml.capDepth {
		p.capture = nil
	}
	if p.inEntry && depth == p.xml.entryDepth {
		p.endEntry()
	}
	top := depth - 1
	start := 0
	if top > 0 {
		start = p.xml.stack[top-1].end
	}
	p.xml.names = p.xml.names[:start]
	p.xml.stack = p.xml.stack[:top]
	if top == 0 {
		p.done = true // the root is closed: whatever follows is ignored, damage included
	}
}

// endTag handles "</name>" at p.r. An end tag that does not close the
// innermost open element is damage.
func (p *parser) endTag() {
	end := p.tagEnd()
	if end < 0 {
		return
	}
	name := trimSpace(p.buf[p.r+2 : p.r+end])
	p.r += end + 1
	if n := len(p.xml.stack); n == 0 || !bytes.EqualFold(name, p.openName(n-1)) {
		open := "nothing"
		if n > 0 {
			open = "<" + string(p.openName(n-1)) + ">"
		}
		p.damage("</%s> at byte %d does not close %s", name, p.offset(), open)
		return
	}
	p.closeElement()
}

// declaration handles "<!": a comment, a CDATA section, or a DOCTYPE (or
// another declaration), which is skipped without expanding anything.
func (p *parser) declaration() {
	p.need(9)
	b := p.buf[p.r:p.w]
	switch {
	case bytes.HasPrefix(b, []byte("<!--")):
		p.r += 4
		p.skipPast("-->", "a comment")
	case bytes.HasPrefix(b, []byte("<![CDATA[")):
		p.r += 9
		p.cdataSection()
	default:
		p.r += 2
		p.skipDecl()
	}
}

// skipPast skips input up to and including term; the input ending first is
// damage.
func (p *parser) skipPast(term, what string) {
	start := p.offset()
	for {
		if i := bytes.Index(p.buf[p.r:p.w], []byte(term)); i >= 0 {
			p.r += i + len(term)
			return
		}
		if keep := len(term) - 1; p.w-p.r > keep {
			p.r = p.w - keep
		}
		if !p.fill() {
			p.ended(fmt.Sprintf("unexpected end of file inside %s begun at byte %d: truncated", what, start))
			return
		}
	}
}

// cdataSection passes the content of a CDATA section, up to "]]>", to cdata.
func (p *parser) cdataSection() {
	start := p.offset()
	for {
		b := p.buf[p.r:p.w]
		if i := bytes.Index(b, []byte("]]>")); i >= 0 {
			p.cdata(b[:i])
			p.r += i + 3
			return
		}
		if n := len(b) - 2; n > 0 {
			p.cdata(b[:n])
			p.r += n
		}
		if !p.fill() {
			p.ended(fmt.Sprintf("unexpected end of file inside a CDATA section begun at byte %d: truncated", start))
			return
		}
	}
}

// skipDecl skips a declaration such as <!DOCTYPE ... [ ... ]>: up to the
// '>' outside quotes and outside the internal subset's brackets.
func (p *parser) skipDecl() {
	start := p.offset()
	var quote byte
	brackets := 0
	for {
		for i, c := range p.buf[p.r:p.w] {
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'':
				quote = c
			case c == '[':
				brackets++
			case c == ']':
				brackets--
			case c == '>' && brackets <= 0:
				p.r += i + 1
				return
			}
		}
		p.r = p.w
		if !p.fill() {
			p.ended(fmt.Sprintf("unexpected end of file inside a declaration begun at byte %d: truncated", start))
			return
		}
	}
}

// declarePrefixes records the xmlns:prefix declarations among attrs.
func (p *parser) declarePrefixes(attrs []byte) {
	for {
		name, val, rest, ok := nextAttr(attrs)
		if !ok {
			return
		}
		attrs = rest
		prefix, found := bytes.CutPrefix(name, []byte("xmlns:"))
		if !found || len(prefix) == 0 {
			continue
		}
		if p.xml.ns == nil {
			p.xml.ns = make(map[string]nsClass)
		}
		if _, seen := p.xml.ns[string(prefix)]; seen || len(p.xml.ns) < maxPrefixes {
			p.xml.ns[string(prefix)] = classify(val)
		}
	}
}

// classify tells a namespace name's class.
func classify(uri []byte) nsClass {
	switch {
	case bytes.Contains(uri, []byte("sitemaps.org/schemas/sitemap")),
		bytes.Contains(uri, []byte("google.com/schemas/sitemap/")):
		return nsSitemap
	case bytes.Contains(uri, []byte("www.w3.org/2005/Atom")),
		bytes.Contains(uri, []byte("purl.org/atom/ns")):
		return nsAtom
	case bytes.Contains(uri, []byte("purl.org/rss/1.0")):
		return nsRSS
	}
	return nsForeign
}

// ours reports whether an element with this prefix belongs to the file's
// own vocabulary: no prefix (whatever the default namespace, which sites
// get wrong), the root element's prefix (whatever it is bound to, for the
// same reason), an undeclared prefix, or one bound to the format's
// namespace.
func (p *parser) ours(prefix []byte) bool {
	if len(prefix) == 0 || string(prefix) == p.xml.rootPrefix {
		return true
	}
	c, ok := p.xml.ns[string(prefix)]
	if !ok {
		return true
	}
	switch p.res.Kind {
	case KindURLSet, KindIndex:
		return c == nsSitemap
	case KindAtom:
		return c == nsAtom
	case KindRSS:
		return c == nsRSS
	}
	return true
}

// nextAttr parses the first attribute of s: name="value", name='value',
// name=value or a bare name. The value is returned as written.
func nextAttr(s []byte) (name, val, rest []byte, ok bool) {
	s = trimLeftSpace(s)
	i := 0
	for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
		i++
	}
	if i == 0 {
		return nil, nil, nil, false
	}
	name, s = s[:i], trimLeftSpace(s[i:])
	if len(s) == 0 || s[0] != '=' {
		return name, nil, s, true
	}
	s = trimLeftSpace(s[1:])
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		j := bytes.IndexByte(s[1:], s[0])
		if j < 0 {
			return name, s[1:], nil, true
		}
		return name, s[1 : 1+j], s[2+j:], true
	}
	j := 0
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	return name, s[:j], s[j:], true
}

// lookupElem returns the meaning of a local name, in any case.
func lookupElem(b []byte) elemID {
	if id := elemByName(b); id != elOther || len(b) > 16 || !hasUpper(b) {
		return id
	}
	var low [16]byte
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return elemByName(low[:len(b)])
}

func elemByName(b []byte) elemID {
	switch string(b) {
	case "url":
		return elURL
	case "loc":
		return elLoc
	case "lastmod":
		return elLastmod
	case "changefreq":
		return elChangefreq
	case "priority":
		return elPriority
	case "urlset":
		return elURLSet
	case "sitemap":
		return elSitemap
	case "sitemapindex":
		return elSitemapIndex
	case "item":
		return elItem
	case "link":
		return elLink
	case "pubDate", "pubdate":
		return elPubDate
	case "channel":
		return elChannel
	case "rss":
		return elRSS
	case "RDF", "rdf":
		return elRDF
	case "entry":
		return elEntry
	case "updated":
		return elUpdated
	case "modified":
		return elModified
	case "feed":
		return elFeed
	}
	return elOther
}

func hasUpper(b []byte) bool {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// isNameStart reports whether c may start an XML name.
func isNameStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == ':' || c >= 0x80
}
