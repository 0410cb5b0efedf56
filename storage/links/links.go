package links

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// Kind says what a reference is for.
type Kind uint8

const (
	Anchor    Kind = iota // <a href>, <area href>: a page, followed
	Frame                 // <frame src>, <iframe src>: a page, followed
	Alternate             // <link rel=alternate|next|prev|...>: a page, followed
	Canonical             // <link rel=canonical>
	Refresh               // the URL of <meta http-equiv=refresh>
	Requisite             // what a page needs to display: img, script, stylesheet, CSS url(), ...
	Form                  // form action, formaction: submitted to, never fetched
	Other                 // a URL nobody fetches: cite, longdesc, <link> of another rel
	Base                  // <base href>: what the others resolve against
)

var kindNames = [...]string{"anchor", "frame", "alternate", "canonical", "refresh", "requisite", "form", "other", "base"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Ref is one URL reference as a document writes it: not resolved, with
// character references (HTML) or escapes (CSS) decoded, white space kept.
type Ref struct {
	URL      string
	Kind     Kind
	Tag      string // the element, lower case ("" in a stylesheet)
	Attr     string // the attribute ("" in a stylesheet or <style> text)
	CSS      bool   // a url() or @import: "#x" names this document
	Rel      string // the rel attribute of a, area and link
	Hreflang string // of <link rel=alternate>
	Nofollow bool   // rel has nofollow (a, area, and followed kinds of link)
	// Anchor is what a reader sees of the link, white space collapsed, at
	// most maxAnchor characters: an <a>'s text (or the alt of an image in
	// it), an <img>'s alt. Only Read sets it.
	Anchor string
}

// Scan calls fn with every reference of the HTML document doc, in
// document order (see the package doc for what counts).
func Scan(doc []byte, fn func(Ref)) {
	w := walker{visit: func(r Ref) (string, bool) { fn(r); return "", false }}
	w.walk(newTokenizer(doc))
}

// Rewrite returns body with the references for which fn returns true
// replaced by the string it returns. A Base reference that fn changes is
// removed, whatever the string. Each changed tag is written again from the
// tokenizer's attributes (lower-case names, double-quoted escaped values,
// in their order); everything else is kept byte for byte, so a fn that
// changes nothing gives body back unchanged.
func Rewrite(body []byte, fn func(Ref) (string, bool)) []byte {
	var out bytes.Buffer
	out.Grow(len(body) + len(body)/16)
	w := walker{visit: fn, out: &out}
	w.walk(newTokenizer(body))
	return out.Bytes()
}

// attr is one attribute of a tag, as the tokenizer gives it: a lower-case
// key and a decoded value, valid until the tokenizer's next token, and not
// to be changed (they may be the document's bytes).
type attr struct{ key, val []byte }

// walker goes through the tokens of a document, visiting the references
// and, when out is set, writing the document with their replacements.
type walker struct {
	visit func(Ref) (string, bool)
	out   *bytes.Buffer                   // nil: visit only
	tag   func(name string, attrs []attr) // when set, called with each start tag of link, meta and base (elHead)
	attrs []attr
	raw   []byte   // a copy of the raw tag: x/net/html's TagAttr, reading what the tokenizer hands over, decodes in place
	name  []byte   // the current tag's name (see tagName)
	vals  []string // per attribute of the tag: its new value when set[i] is 1
	set   []int8   // per attribute of the tag: 0 kept, 1 replaced, -1 removed
	texts *texts   // when set, collects the first <title>'s and <h1>'s text

	facts *factScan // when set, gathers the page's Facts
}

func (w *walker) write(b []byte) {
	if w.out != nil {
		w.out.Write(b)
	}
}

func (w *walker) walk(z *tokenizer) {
	style := false // the text that comes next is a <style>'s
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			w.write(z.Raw()) // an unfinished tag at the end, if any
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			style = w.startTag(z, tt)
		case html.TextToken:
			if style {
				w.styleText(z.Raw())
			} else {
				w.write(z.Raw())
			}
			wantText := w.texts != nil && (w.texts.in != nil || w.texts.anchorOf != nil)
			if wantFacts := w.facts != nil && w.facts.skip == 0; wantText || wantFacts {
				text := z.Text() // after Raw: Text decodes in place
				if wantText {
					w.texts.add(text)
				}
				if wantFacts {
					w.facts.text(text)
				}
			}
			style = false
		case html.EndTagToken:
			w.write(z.Raw())
			if w.texts != nil || w.facts != nil {
				name := w.tagName(z)
				if w.texts != nil {
					w.texts.end(name)
				}
				if w.facts != nil {
					w.facts.end(name)
				}
			}
			style = false
		default:
			w.write(z.Raw())
			style = false
		}
	}
}

// startTag handles a start tag and reports whether it opens a <style>.
func (w *walker) startTag(z *tokenizer, tt html.TokenType) bool {
	if w.out != nil {
		w.raw = append(w.raw[:0], z.Raw()...)
	}
	name := w.tagName(z)
	el := elementOf(name)
	start := tt == html.StartTagToken
	if w.texts != nil && start {
		w.texts.start(el)
	}
	isStyle := el&elStyle != 0 && start
	if el&elMarkup != 0 && start {
		// Markup to a browser without scripts or frames, as to wget.
		z.NextIsNotRawText()
	}
	if el&elImage != 0 {
		name = []byte("img")
	}
	holdsURL := el&elURL != 0
	factAttrs := false
	if w.facts != nil {
		w.facts.start(el, tt == html.SelfClosingTagToken)
		factAttrs = w.facts.needAttrs(el) || z.mayHaveKeys(keyID)
	}
	if !holdsURL && !factAttrs && !z.mayHaveKeys(keyStyle) {
		// No URL here: its attributes need not be read (TagAttr, which
		// decodes them, is most of a tag's cost).
		w.write(w.raw)
		return isStyle
	}
	w.attrs = w.attrs[:0]
	styled := false
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if k == nil {
			break // no attributes: a saved one's key is never empty
		}
		w.attrs = append(w.attrs, attr{k, v})
		styled = styled || string(k) == "style"
	}
	if factAttrs {
		w.facts.attrs(string(name), w.attrs)
	}
	if !styled && !holdsURL {
		w.write(w.raw)
		return isStyle
	}
	if w.tag != nil && el&elHead != 0 {
		w.tag(string(name), w.attrs)
	}
	if w.refs(intern(name)) {
		w.render(name, tt == html.SelfClosingTagToken)
	} else {
		w.write(w.raw)
	}
	return isStyle
}

// tagName is the name of the current start or end tag as the tokenizer's
// TagName gives it (ASCII lower-cased): the document's own bytes when it
// writes the name so, as nearly every page does, or else read from the
// raw tag into a buffer of the walker's, valid until the next call:
// TagName copies it, once per tag of the document. A name holding a NUL,
// which TagName replaces, is left to TagName.
func (w *walker) tagName(z *tokenizer) []byte {
	if name, ok := z.lowerName(); ok {
		return name
	}
	raw := z.Raw()
	i := 1 // after '<'
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	w.name = w.name[:0]
	for ; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case ' ', '\n', '\r', '\t', '\f', '/', '>':
			return w.name
		case 0:
			return z.TagName()
		}
		w.name = append(w.name, c|lowerBit(c))
	}
	return w.name
}

// endsRawText reports whether a raw tag holds the end tag of an element
// whose content is raw text to some readers (</noscript, </noframes, in
// any case), inside an attribute value.
func endsRawText(raw []byte) bool {
	for i := bytes.Index(raw, []byte("</")); i >= 0; {
		rest := raw[i+2:]
		if len(rest) >= 8 && (equalFold(rest[:8], "noscript") || equalFold(rest[:8], "noframes")) {
			return true
		}
		j := bytes.Index(rest, []byte("</"))
		if j < 0 {
			return false
		}
		i += 2 + j
	}
	return false
}

// styleText handles the text of a <style> element.
func (w *walker) styleText(raw []byte) {
	fn := func(u string) (string, bool) {
		return w.visit(Ref{URL: u, Kind: Requisite, Tag: "style", CSS: true})
	}
	if w.out == nil {
		walkCSS(raw, fn, nil)
		return
	}
	walkCSS(raw, fn, w.out)
}

// render writes the tag again with w.vals applied.
func (w *walker) render(name []byte, selfClosing bool) {
	if w.out == nil {
		return
	}
	if endsRawText(w.raw) {
		// Read as raw text, as a browser with scripts reads a
		// <noscript>, this tag holds the element's end: written again,
		// the document would change shape. It is kept as it was.
		w.out.Write(w.raw)
		return
	}
	for _, a := range w.attrs {
		if !safeKey(a.key) {
			w.out.Write(w.raw) // cannot be written again as it was read
			return
		}
	}
	w.out.WriteByte('<')
	w.out.Write(name)
	for i, a := range w.attrs {
		if w.set[i] < 0 {
			continue
		}
		v := string(a.val)
		if w.set[i] > 0 {
			v = w.vals[i]
		}
		w.out.WriteByte(' ')
		w.out.Write(a.key)
		w.out.WriteString(`="`)
		escapeAttr(w.out, v)
		w.out.WriteByte('"')
	}
	if selfClosing {
		w.out.WriteByte('/')
	}
	w.out.WriteByte('>')
}

// safeKey reports whether an attribute key read by the tokenizer reads back
// the same when written as key="value": the tokenizer ends a key at white
// space, '/', '>' and '=' (but for an '=' that starts it).
func safeKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for i, c := range k {
		switch c {
		case ' ', '\t', '\n', '\f', '\r', '/', '>', 0:
			return false
		case '=':
			if i > 0 {
				return false
			}
		}
	}
	return true
}

// escapeAttr writes v as the text of a double-quoted attribute value that
// the tokenizer reads back as v.
func escapeAttr(b *bytes.Buffer, v string) {
	last := 0
	for i := 0; i < len(v); i++ {
		var esc string
		switch v[i] {
		case '&':
			esc = "&amp;"
		case '"':
			esc = "&quot;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\r':
			esc = "&#13;" // a raw CR would be read back as LF
		default:
			continue
		}
		b.WriteString(v[last:i])
		b.WriteString(esc)
		last = i + 1
	}
	b.WriteString(v[last:])
}

// find returns the value of the first attribute key, and whether there is
// one. xlink:href counts as href, as the HTML tree builder reads it in SVG.
func find(attrs []attr, key string) (string, bool) {
	v, ok := findBytes(attrs, key)
	return string(v), ok
}

// findBytes is find without a copy of the value: valid until the
// tokenizer's next token, and not to be changed.
func findBytes(attrs []attr, key string) ([]byte, bool) {
	for _, a := range attrs {
		if string(a.key) == key || key == "href" && string(a.key) == "xlink:href" {
			return a.val, true
		}
	}
	return nil, false
}

// refs visits the references of the current tag, filling w.vals and w.set,
// and reports whether any changed.
func (w *walker) refs(tag string) bool {
	n := len(w.attrs)
	w.vals = w.vals[:0]
	w.set = w.set[:0]
	for range n {
		w.vals = append(w.vals, "")
		w.set = append(w.set, 0)
	}
	changed := false
	for i, a := range w.attrs {
		key := string(a.key)
		if key == "xlink:href" {
			key = "href"
		}
		if key == "href" && first(w.attrs[:i], key) {
			// The tree builder keeps the first of a key only. The
			// tokenizer gives each key once, so only href and
			// xlink:href, which count as one, can meet here; looking
			// back for every key made a tag of many attributes
			// quadratic.
			continue
		}
		role, ref := attrRole(tag, key, w.attrs)
		if role == roleNone {
			continue
		}
		ref.Tag, ref.Attr = tag, intern(a.key)
		if w.texts != nil && tag == "img" {
			ref.Anchor = anchorText(attrValue(w.attrs, "alt"))
		}
		v := string(a.val)
		var nv string
		var c bool
		switch role {
		case roleURL:
			ref.URL = v
			nv, c = w.visit(ref)
			if c && ref.Kind == Base {
				w.set[i] = -1
				changed = true
				continue
			}
		case roleSrcset:
			nv, c = rewriteSrcset(v, func(u string) (string, bool) { ref.URL = u; return w.visit(ref) })
		case roleRefresh:
			nv, c = rewriteRefresh(v, func(u string) (string, bool) { ref.URL = u; return w.visit(ref) })
		case roleStyle:
			nv, c = w.styleAttr(tag, v)
		}
		if c {
			w.vals[i], w.set[i] = nv, 1
			changed = true
		}
	}
	return changed
}

// first reports whether an attribute of attrs (those before the current
// one) already has key.
func first(attrs []attr, key string) bool {
	for _, a := range attrs {
		if string(a.key) == key || key == "href" && string(a.key) == "xlink:href" {
			return true
		}
	}
	return false
}

// styleAttr visits the CSS of a style attribute.
func (w *walker) styleAttr(tag, v string) (string, bool) {
	changed := false
	fn := func(u string) (string, bool) {
		nv, c := w.visit(Ref{URL: u, Kind: Requisite, Tag: tag, Attr: "style", CSS: true})
		changed = changed || c
		return nv, c
	}
	if w.out == nil {
		walkCSS([]byte(v), fn, nil)
		return v, false
	}
	var b bytes.Buffer
	walkCSS([]byte(v), fn, &b)
	if !changed {
		return v, false
	}
	return b.String(), true
}

// hasToken reports whether a space-separated list such as rel holds tok,
// case-insensitively.
func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// maxText bounds the text kept of a <title> or an <h1>.
const maxText = 4 << 10

// texts collects the text of a page's first <title> and first <h1>, for
// Page. Tags inside an <h1> (an <a>, an <em>) add their text to it.
type texts struct {
	title, h1 strings.Builder
	in        *strings.Builder // the element being read; nil between
	inName    string
	sawTitle  bool // the first <title> and <h1> only
	sawH1     bool
	// The <a> being read: its reference (nil when none), whose Anchor is
	// set when it ends; its text so far, the alt of an image in it.
	anchorOf  *Ref
	anchor    strings.Builder
	anchorAlt string
}

func (t *texts) start(el element) {
	switch {
	case t.in != nil:
	case el&elTitle != 0 && !t.sawTitle:
		t.in, t.inName, t.sawTitle = &t.title, "title", true
	case el&elH1 != 0 && !t.sawH1:
		t.in, t.inName, t.sawH1 = &t.h1, "h1", true
	}
}

func (t *texts) end(name []byte) {
	if t.in != nil && string(name) == t.inName {
		t.in = nil
	}
	if string(name) == "a" {
		t.closeAnchor()
	}
}

func (t *texts) add(b []byte) {
	if t.in != nil {
		if room := maxText - t.in.Len(); room > 0 {
			t.in.Write(cutAt(b, room))
		}
	}
	if t.anchorOf != nil {
		if room := 4*maxAnchor - t.anchor.Len(); room > 0 {
			t.anchor.Write(cutAt(b, room))
		}
	}
}

// cutAt is b cut to at most n bytes at the start of a character, so that
// a text cut at its cap ends in a whole one.
func cutAt(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for k := 0; k < utf8.UTFMax && k < n; k++ {
		if utf8.RuneStart(b[n-k]) {
			return b[:n-k]
		}
	}
	return b[:n]
}

// openAnchor starts the text of the <a> whose reference is ref, which
// must stay where it is until the <a> ends; an <a> still open ends first,
// as a browser ends it.
func (t *texts) openAnchor(ref *Ref) {
	t.closeAnchor()
	t.anchorOf = ref
}

// imageIn notes the alt of an image inside the open <a>, its anchor when
// it has no text.
func (t *texts) imageIn(alt string) {
	if t.anchorOf != nil && t.anchorAlt == "" {
		t.anchorAlt = alt
	}
}

// closeAnchor sets the open <a>'s anchor in its reference. (Kept in a
// list and set at the end, a docs page's 2,454 anchors took a fifth of
// the bytes reading it allocated.)
func (t *texts) closeAnchor() {
	if t.anchorOf == nil {
		return
	}
	text := anchorText(t.anchor.String())
	if text == "" {
		text = t.anchorAlt
	}
	t.anchorOf.Anchor = text
	t.anchorOf, t.anchorAlt = nil, ""
	t.anchor.Reset()
}

// maxAnchor bounds an anchor text, in characters.
const maxAnchor = 100

// anchorText is s with white space collapsed, cut at maxAnchor characters.
func anchorText(s string) string {
	s = collapseSpace(s)
	if len(s) > maxAnchor && utf8.RuneCountInString(s) > maxAnchor {
		s = string([]rune(s)[:maxAnchor])
	}
	return s
}

// attrValue is the value of the first attribute key of attrs, or "".
func attrValue(attrs []attr, key string) string {
	for _, a := range attrs {
		if string(a.key) == key {
			return string(a.val)
		}
	}
	return ""
}

// collapseSpace is strings.Join(strings.Fields(s), " "): s as it is when
// its white space is collapsed already, as most anchors' is, and built
// once otherwise, where Fields and Join allocate twice for every anchor.
func collapseSpace(s string) string {
	if isCollapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	start := -1 // where the field being read began; -1 between fields
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			if start >= 0 {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += n
	}
	if start >= 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[start:])
	}
	return b.String()
}

// isCollapsed reports whether collapseSpace would give s back unchanged:
// no white space at either end, and only single spaces within. ASCII is
// told without decoding: a docs page has thousands of anchors.
func isCollapsed(s string) bool {
	space := true // before the first character, as after a space
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiSpace[c] && (space || c != ' ') {
				return false
			}
			space = c == ' '
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			if space || r != ' ' {
				return false
			}
			space = true
		} else {
			space = false
		}
		i += n
	}
	return !space || s == ""
}
