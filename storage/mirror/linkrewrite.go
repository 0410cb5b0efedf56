package mirror

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// RewriteHTML returns body with the links of the page fetched from page
// (an absolute URL) rewritten for the mirror, as wget -k does, and the
// number of references it pointed at mirror files. selfPath is the page's
// own mirror path, as Mirror.Write returned it.
//
// Every URL the crawler follows or mirrors is rewritten: a, area and link
// href; frame, iframe, img, script, source, audio, video, embed and track
// src; video poster; input type=image src; object data; body, table, td
// and th background; each candidate of img and source srcset; url() and @import in style attributes and <style> elements; the
// URL of a meta refresh. Each is resolved against page, or the first
// <base href>, and resolve is called with the absolute URL, without its
// fragment. When resolve says ok, the reference becomes
// RelativeRef(selfPath, mirrorPath) with the original fragment; otherwise it
// becomes the absolute URL, so that it still works online. References
// already absolute stay as they were when not in the mirror; values that do
// not parse, other schemes (mailto:, data:, javascript:), and empty and
// fragment-only references (unless a <base> made them point elsewhere) are
// kept. resolve is called from the calling goroutine, once per reference.
//
// The href of every <base> element is removed, since relative links in the
// mirror must resolve against the file's own location; for the same reason
// the URL attributes the crawler does not follow (form action, formaction,
// cite, img longdesc) are made absolute.
//
// Everything else is kept byte for byte: only the values that change are
// written again, in their original quotes (double quotes when they had
// none), with '&', '<', '>' and the quote escaped. The result grows by
// about four times the size of body plus 1 MiB at most; references past
// that bound are left as they are.
func RewriteHTML(body []byte, page *url.URL, selfPath string, resolve func(target *url.URL) (mirrorPath string, ok bool)) ([]byte, int) {
	if page == nil {
		return bytes.Clone(body), 0
	}
	base := page
	if href, ok := findBase(body); ok {
		base = baseURL(page, href)
	}
	r := newURLRewriter(page, base, selfPath, resolve, len(body))
	w := htmlWalker{fn: r.rewrite, dropBase: true, out: new(bytes.Buffer)}
	w.out.Grow(len(body) + len(body)/16)
	w.walk(body, false)
	return w.out.Bytes(), r.count
}

// RewriteCSS returns the stylesheet body fetched from sheet with its url()
// and @import references rewritten for the mirror as RewriteHTML does, and
// the number pointed at mirror files. selfPath is the sheet's own mirror
// path. Fragment-only references (url(#clip)) and data: URIs are kept.
func RewriteCSS(body []byte, sheet *url.URL, selfPath string, resolve func(target *url.URL) (mirrorPath string, ok bool)) ([]byte, int) {
	if sheet == nil {
		return bytes.Clone(body), 0
	}
	r := newURLRewriter(sheet, sheet, selfPath, resolve, len(body))
	var out bytes.Buffer
	out.Grow(len(body) + len(body)/16)
	walkCSS(body, func(ref string) (string, bool) { return r.rewrite(ref, refCSS) }, &out)
	return out.Bytes(), r.count
}

// refKind says what a reference is used for.
type refKind uint8

const (
	refLink     refKind = iota // followed or mirrored by the crawler
	refCSS                     // a url() or @import: mirrored; "#x" means this document
	refAbsolute                // never mirrored: only made absolute
)

// refFunc is given each reference found, decoded, and returns its
// replacement and whether it changed.
type refFunc func(ref string, kind refKind) (string, bool)

// The values of a rewritten document grow by at most maxGrowthFactor times
// its size plus maxGrowthSlack bytes (quotes and escapes aside): a page of a million one-letter links, each made
// a long absolute URL, would otherwise take gigabytes. References past the
// bound are left as they are.
const (
	maxGrowthFactor = 4
	maxGrowthSlack  = 1 << 20
)

// urlRewriter decides what each reference of one document becomes.
type urlRewriter struct {
	base       *url.URL
	baseIsPage bool // fragment-only references can stay as they are
	selfPath   string
	resolve    func(*url.URL) (string, bool)
	count      int // references pointed at mirror files
	growth     int // bytes the document may still grow by
}

func newURLRewriter(page, base *url.URL, selfPath string, resolve func(*url.URL) (string, bool), size int) *urlRewriter {
	return &urlRewriter{
		base:       base,
		baseIsPage: withoutFragment(base) == withoutFragment(page),
		selfPath:   selfPath,
		resolve:    resolve,
		growth:     maxGrowthFactor*size + maxGrowthSlack,
	}
}

func withoutFragment(u *url.URL) string {
	v := *u
	v.Fragment, v.RawFragment = "", ""
	return v.String()
}

// rewrite returns what ref becomes, within the growth bound.
func (r *urlRewriter) rewrite(ref string, kind refKind) (string, bool) {
	nv, local, changed := r.replacement(ref, kind)
	if !changed {
		if local {
			r.count++
		}
		return ref, false
	}
	if grow := len(nv) - len(ref); grow > r.growth {
		return ref, false
	} else if grow > 0 {
		r.growth -= grow
	}
	if local {
		r.count++
	}
	return nv, true
}

// replacement returns what ref becomes, whether that is a mirror file, and
// whether it changed.
func (r *urlRewriter) replacement(ref string, kind refKind) (nv string, local, changed bool) {
	s := cleanURL(ref)
	if (s == "" || s[0] == '#') && (r.baseIsPage || kind == refCSS) {
		return ref, false, false
	}
	u, err := r.base.Parse(s)
	if err != nil {
		return ref, false, false
	}
	absolute := hasScheme(s)
	if kind != refAbsolute && r.resolve != nil && (u.Scheme == "http" || u.Scheme == "https") {
		target := *u
		target.Fragment, target.RawFragment = "", ""
		if mp, ok := r.resolve(&target); ok {
			rel := RelativeRef(r.selfPath, mp)
			if _, frag, ok := strings.Cut(s, "#"); ok {
				rel += "#" + frag
			}
			return rel, true, rel != ref
		}
	}
	if absolute {
		return ref, false, false
	}
	abs := u.String()
	return abs, false, abs != ref
}

// cleanURL strips what a browser strips from a URL before parsing it:
// leading and trailing C0 controls and spaces, and tabs and newlines
// anywhere.
func cleanURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// hasScheme reports whether s starts with a URL scheme (RFC 3986 section
// 3.1) and a colon.
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return false
			}
		case c == ':':
			return i > 0
		default:
			return false
		}
	}
	return false
}

// baseURL is the document base URL given the first <base href>: the href
// resolved against the page, unless it fails to parse or names a data: or
// javascript: URL (HTML, "frozen base URL").
func baseURL(page *url.URL, href string) *url.URL {
	b, err := page.Parse(cleanURL(href))
	if err != nil || b.Scheme == "data" || b.Scheme == "javascript" {
		return page
	}
	return b
}

// findBase returns the href of the first <base> element that has one.
func findBase(body []byte) (string, bool) {
	if !containsFold(body, "<base") {
		return "", false
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return "", false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := scanTagName(z.Raw())
			if !equalFold(name, "base") {
				continue
			}
			for {
				key, val, more := z.TagAttr()
				if string(key) == "href" {
					return string(val), true
				}
				if !more {
					break
				}
			}
		}
	}
}

// htmlWalker visits the URL references of an HTML document and, when out is
// set, writes the document with the replacements fn gives.
type htmlWalker struct {
	fn       refFunc
	dropBase bool          // remove the href of <base> elements
	out      *bytes.Buffer // nil: visit only
	attrs    []rawAttr     // scratch, reused from tag to tag
	vals     []string      // decoded values of the saved attributes
	edits    []attrEdit
	css      bytes.Buffer // scratch for style attributes
	mismatch int          // tags whose attributes the scanner and the tokenizer saw differently
}

// attrEdit replaces the value of attrs[i], or removes the attribute.
type attrEdit struct {
	i      int
	val    string
	remove bool
}

func (w *htmlWalker) write(b []byte) {
	if w.out != nil {
		w.out.Write(b)
	}
}

// walk goes through the tokens of body. The raw text of <noscript> and
// <noframes> is HTML to a browser without scripts or frames, and is walked
// too, one level deep.
func (w *htmlWalker) walk(body []byte, nested bool) {
	z := html.NewTokenizer(bytes.NewReader(body))
	rawText := "" // the element whose raw text may come next
	for {
		tt := z.Next()
		raw := z.Raw()
		switch tt {
		case html.ErrorToken:
			w.write(raw) // an unfinished tag at the end, if any
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			rawText = w.tag(z, raw)
			continue
		case html.TextToken:
			switch {
			case rawText == "style":
				walkCSS(raw, func(ref string) (string, bool) { return w.fn(ref, refCSS) }, w.out)
				rawText = ""
				continue
			case rawText == "noscript" && !nested, rawText == "noframes" && !nested:
				// The walk below reuses the scratch slices, and the
				// tokenizer's buffer is not touched until the next call.
				w.walk(raw, true)
				rawText = ""
				continue
			}
		}
		rawText = ""
		w.write(raw)
	}
}

// attribute kinds.
const (
	attrNone     = iota
	attrURL      // one URL the crawler follows or mirrors
	attrOther    // one URL the crawler does not fetch: made absolute
	attrSrcset   // image candidates
	attrStyle    // CSS declarations
	attrRefresh  // meta content, when http-equiv is refresh
	attrImageSrc // input src, when type is image
	attrBaseHref // base href: removed
	attrType     // input type, for attrImageSrc
	attrEquiv    // meta http-equiv, for attrRefresh
)

// attrKind says what the attribute key of element tag holds.
func attrKind(tag, key []byte) int {
	k := string(key)
	if k == "style" {
		return attrStyle
	}
	switch string(tag) {
	case "a", "area", "link":
		if k == "href" {
			return attrURL
		}
	case "frame", "iframe", "script", "audio", "embed", "track":
		if k == "src" {
			return attrURL
		}
	case "img", "source":
		switch k {
		case "src":
			return attrURL
		case "srcset":
			return attrSrcset
		case "longdesc":
			return attrOther
		}
	case "video":
		if k == "src" || k == "poster" {
			return attrURL
		}
	case "input":
		switch k {
		case "src":
			return attrImageSrc
		case "formaction":
			return attrOther
		case "type":
			return attrType
		}
	case "meta":
		switch k {
		case "content":
			return attrRefresh
		case "http-equiv":
			return attrEquiv
		}
	case "base":
		if k == "href" {
			return attrBaseHref
		}
	case "form":
		if k == "action" {
			return attrOther
		}
	case "button":
		if k == "formaction" {
			return attrOther
		}
	case "blockquote", "q", "ins", "del":
		if k == "cite" {
			return attrOther
		}
	case "body", "table", "td", "th":
		if k == "background" {
			return attrURL
		}
	case "object":
		if k == "data" {
			return attrURL
		}
	}
	return attrNone
}

// tag handles one start tag and returns its lower-case name when its raw
// text is handled next ("style", "noscript", "noframes"), else "".
func (w *htmlWalker) tag(z *html.Tokenizer, raw []byte) string {
	var nameBuf, keyBuf [16]byte
	name, attrs := scanTag(raw, w.attrs[:0])
	w.attrs = attrs
	tag := lowerASCII(nameBuf[:0], name)
	next := ""
	switch string(tag) {
	case "style", "noscript", "noframes":
		next = string(tag)
	}

	interesting := false
	for i := range attrs {
		a := &attrs[i]
		a.kind = attrKind(tag, lowerASCII(keyBuf[:0], raw[a.keyStart:a.keyEnd]))
		interesting = interesting || a.kind != attrNone && a.kind != attrType && a.kind != attrEquiv &&
			(a.saved || a.kind == attrBaseHref)
	}
	if !interesting {
		w.write(raw)
		return next
	}
	if !w.decode(z, raw) {
		w.mismatch++
		w.write(raw) // not expected with this tokenizer; keep the tag as it was
		return next
	}

	w.edits = w.edits[:0]
	imageInput, refresh := w.conditions()
	v := 0 // index into w.vals
	for i := range attrs {
		a := &attrs[i]
		if a.kind == attrBaseHref && w.dropBase {
			w.edits = append(w.edits, attrEdit{i: i, remove: true})
		}
		if !a.saved {
			continue
		}
		val := w.vals[v]
		v++
		var nv string
		var changed bool
		switch a.kind {
		case attrURL:
			nv, changed = w.fn(val, refLink)
		case attrImageSrc:
			if imageInput {
				nv, changed = w.fn(val, refLink)
			}
		case attrOther:
			nv, changed = w.fn(val, refAbsolute)
		case attrSrcset:
			nv, changed = rewriteSrcset(val, w.fn)
		case attrRefresh:
			if refresh {
				nv, changed = rewriteRefresh(val, w.fn)
			}
		case attrStyle:
			nv, changed = w.rewriteStyle(val)
		}
		if changed && a.hasValue {
			w.edits = append(w.edits, attrEdit{i: i, val: nv})
		}
	}
	w.writeTag(raw)
	return next
}

// decode fills w.vals with the decoded values of the saved attributes
// (those of kind attrNone are left empty). Values without a character
// reference, CR or NUL are taken from the raw tag; otherwise the
// tokenizer's decoding is used, and decode reports whether the tokenizer's
// keys are the scanner's.
func (w *htmlWalker) decode(z *html.Tokenizer, raw []byte) bool {
	w.vals = w.vals[:0]
	plain := true
	for _, a := range w.attrs {
		if a.saved && a.kind != attrNone && bytes.ContainsAny(raw[a.valStart:a.valEnd], "&\r\x00") {
			plain = false
			break
		}
	}
	if plain {
		for _, a := range w.attrs {
			switch {
			case !a.saved:
			case a.kind == attrNone:
				w.vals = append(w.vals, "")
			default:
				w.vals = append(w.vals, string(raw[a.valStart:a.valEnd]))
			}
		}
		return true
	}

	var keyBuf [16]byte
	i := 0
	for {
		key, val, more := z.TagAttr()
		if key == nil {
			break
		}
		for i < len(w.attrs) && !w.attrs[i].saved {
			i++
		}
		if i == len(w.attrs) {
			return false
		}
		a := w.attrs[i]
		if rk := raw[a.keyStart:a.keyEnd]; bytes.IndexByte(rk, 0) < 0 && !bytes.Equal(lowerASCII(keyBuf[:0], rk), key) {
			return false
		}
		if a.kind == attrNone {
			w.vals = append(w.vals, "")
		} else {
			w.vals = append(w.vals, string(val))
		}
		i++
		if !more {
			break
		}
	}
	for ; i < len(w.attrs); i++ {
		if w.attrs[i].saved {
			return false
		}
	}
	return true
}

// conditions reports whether the tag is an input of type image and whether
// it is a meta refresh, from the decoded values.
func (w *htmlWalker) conditions() (imageInput, refresh bool) {
	v := 0
	for _, a := range w.attrs {
		if !a.saved {
			continue
		}
		switch a.kind {
		case attrType:
			imageInput = strings.EqualFold(strings.TrimSpace(w.vals[v]), "image")
		case attrEquiv:
			refresh = strings.EqualFold(strings.TrimSpace(w.vals[v]), "refresh")
		}
		v++
	}
	return imageInput, refresh
}

// rewriteStyle rewrites the CSS of a style attribute.
func (w *htmlWalker) rewriteStyle(val string) (string, bool) {
	changed := false
	fn := func(ref string) (string, bool) {
		nv, c := w.fn(ref, refCSS)
		changed = changed || c
		return nv, c
	}
	if w.out == nil {
		walkCSS([]byte(val), fn, nil)
		return val, false
	}
	w.css.Reset()
	walkCSS([]byte(val), fn, &w.css)
	if !changed {
		return val, false
	}
	return w.css.String(), true
}

// writeTag writes the raw tag with w.edits applied.
func (w *htmlWalker) writeTag(raw []byte) {
	if w.out == nil {
		return
	}
	if len(w.edits) == 0 {
		w.out.Write(raw)
		return
	}
	last := 0
	for _, e := range w.edits {
		a := w.attrs[e.i]
		if e.remove {
			start := a.keyStart
			for start > 0 && isHTMLSpace(raw[start-1]) {
				start--
			}
			w.out.Write(raw[last:start])
			if a.end < len(raw) && !isHTMLSpace(raw[a.end]) && raw[a.end] != '>' && raw[a.end] != '/' {
				w.out.WriteByte(' ') // keep the next attribute apart from the one before
			}
			last = a.end
			continue
		}
		q := a.quote
		start, end := a.valStart, a.valEnd
		if q != 0 {
			start, end = start-1, end+1
		} else {
			q = '"'
		}
		w.out.Write(raw[last:start])
		w.out.WriteByte(q)
		escapeAttr(w.out, e.val, q)
		w.out.WriteByte(q)
		last = end
	}
	w.out.Write(raw[last:])
}

// escapeAttr writes v as the text of an attribute value in quotes q.
func escapeAttr(b *bytes.Buffer, v string, q byte) {
	last := 0
	for i := 0; i < len(v); i++ {
		var esc string
		switch c := v[i]; {
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '>':
			esc = "&gt;"
		case c == q && q == '"':
			esc = "&quot;"
		case c == q:
			esc = "&#39;"
		default:
			continue
		}
		b.WriteString(v[last:i])
		b.WriteString(esc)
		last = i + 1
	}
	b.WriteString(v[last:])
}

// rewriteSrcset rewrites each image candidate URL of a srcset value.
func rewriteSrcset(val string, fn refFunc) (string, bool) {
	var b strings.Builder
	changed, last := false, 0
	for _, sp := range srcsetURLs(val) {
		nv, c := fn(val[sp[0]:sp[1]], refLink)
		if !c {
			continue
		}
		// A candidate URL ends at white space, and a trailing comma would
		// end the candidate list.
		nv = strings.ReplaceAll(nv, " ", "%20")
		for strings.HasSuffix(nv, ",") || strings.HasPrefix(nv, ",") {
			if strings.HasSuffix(nv, ",") {
				nv = nv[:len(nv)-1] + "%2C"
			} else {
				nv = "%2C" + nv[1:]
			}
		}
		b.WriteString(val[last:sp[0]])
		b.WriteString(nv)
		last = sp[1]
		changed = true
	}
	if !changed {
		return val, false
	}
	b.WriteString(val[last:])
	return b.String(), true
}

// srcsetURLs returns the spans of the candidate URLs of a srcset value, as
// HTML's "parse a srcset attribute" finds them.
func srcsetURLs(s string) [][2]int {
	var out [][2]int
	i := 0
	for i < len(s) {
		for i < len(s) && (isHTMLSpace(s[i]) || s[i] == ',') {
			i++
		}
		if i == len(s) {
			break
		}
		start := i
		for i < len(s) && !isHTMLSpace(s[i]) {
			i++
		}
		end := i
		if s[end-1] == ',' {
			for end > start && s[end-1] == ',' {
				end--
			}
		} else {
			i = skipDescriptors(s, i)
		}
		if end > start {
			out = append(out, [2]int{start, end})
		}
	}
	return out
}

// skipDescriptors passes the descriptors of a srcset candidate, up to the
// comma that ends it (commas inside parentheses do not).
func skipDescriptors(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// rewriteRefresh rewrites the URL of a meta refresh content value.
func rewriteRefresh(val string, fn refFunc) (string, bool) {
	start, end, quote, ok := refreshURL(val)
	if !ok {
		return val, false
	}
	nv, changed := fn(val[start:end], refLink)
	if !changed {
		return val, false
	}
	switch quote {
	case '\'':
		nv = strings.ReplaceAll(nv, "'", "%27")
	case '"':
		nv = strings.ReplaceAll(nv, `"`, "%22")
	}
	return val[:start] + nv + val[end:], true
}

// refreshURL finds the URL in the content of a meta refresh, following
// HTML's "shared declarative refresh steps": "5; url='/next'" gives the span
// of /next and the quote.
func refreshURL(s string) (start, end int, quote byte, ok bool) {
	i := skipHTMLSpace(s, 0)
	digits := i
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == digits && (i == len(s) || s[i] != '.') {
		return 0, 0, 0, false
	}
	for i < len(s) && ('0' <= s[i] && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i < len(s) && s[i] != ';' && s[i] != ',' && !isHTMLSpace(s[i]) {
		return 0, 0, 0, false
	}
	i = skipHTMLSpace(s, i)
	if i < len(s) && (s[i] == ';' || s[i] == ',') {
		i++
	}
	i = skipHTMLSpace(s, i)
	if i == len(s) {
		return 0, 0, 0, false
	}
	start = i
	if j, ok := skipURLPrefix(s, i); ok {
		i = j
		if i < len(s) && (s[i] == '\'' || s[i] == '"') {
			quote = s[i]
			i++
		}
		start = i
	} else if s[i] == '\'' || s[i] == '"' {
		quote = s[i]
		start = i + 1
	}
	end = len(s)
	if quote != 0 {
		if k := strings.IndexByte(s[start:], quote); k >= 0 {
			end = start + k
		}
	}
	return start, end, quote, true
}

// skipURLPrefix passes `url =` (any case, spaces around '='), if s has it
// at i.
func skipURLPrefix(s string, i int) (int, bool) {
	if len(s)-i < 3 || !strings.EqualFold(s[i:i+3], "url") {
		return i, false
	}
	j := skipHTMLSpace(s, i+3)
	if j == len(s) || s[j] != '=' {
		return i, false
	}
	return skipHTMLSpace(s, j+1), true
}

// isHTMLSpace reports whether c is ASCII white space as HTML and CSS
// define it: space, tab, LF, FF, CR.
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func skipHTMLSpace(s string, i int) int {
	for i < len(s) && isHTMLSpace(s[i]) {
		i++
	}
	return i
}

// containsFold reports whether b contains the lower-case ASCII s in any case.
func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		j := bytes.IndexByte(b[i:], s[0])
		if j < 0 {
			return false
		}
		i += j
		if i+len(s) <= len(b) && equalFold(b[i:i+len(s)], s) {
			return true
		}
	}
	return false
}

// equalFold reports whether b equals the lower-case ASCII s, ignoring the
// case of ASCII letters.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// lowerASCII appends b to dst with ASCII letters lower-cased.
func lowerASCII(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// rawAttr is one attribute of a start tag, as offsets into the raw tag.
type rawAttr struct {
	keyStart, keyEnd int
	valStart, valEnd int  // the value, without its quotes
	end              int  // past the value and its closing quote
	quote            byte // '"' or '\'', 0 when unquoted or absent
	hasValue         bool // there was an '='
	saved            bool // the tokenizer reports it: a key, and the first of that key
	kind             int  // attrNone, attrURL, ...
}

// maxLinearAttrs is the number of attributes up to which duplicates are
// looked for without a map.
const maxLinearAttrs = 16

// scanTag splits a complete raw start tag into its name and attributes,
// exactly as the x/net/html tokenizer does (readTag, readTagName,
// readTagAttrKey, readTagAttrVal), keeping offsets so that one value can be
// replaced and the rest of the tag kept byte for byte.
func scanTag(raw []byte, attrs []rawAttr) ([]byte, []rawAttr) {
	name, i := scanTagName(raw)
	n := len(raw)
	var seen map[string]bool
	i = skipTagSpace(raw, i)
	for i < n && raw[i] != '>' {
		a := rawAttr{keyStart: i}
		j := i
		for ; j < n; j++ {
			c := raw[j]
			if c == '=' && j == a.keyStart {
				continue // an '=' before the name is part of it
			}
			if c == '=' || c == '/' || c == '>' || isHTMLSpace(c) {
				break
			}
		}
		a.keyEnd = j
		a.valStart, a.valEnd, a.end = j, j, j
		j = scanAttrValue(raw, j, &a)

		if a.keyEnd > a.keyStart {
			key := raw[a.keyStart:a.keyEnd]
			if len(attrs) >= maxLinearAttrs && seen == nil {
				seen = map[string]bool{}
				for _, b := range attrs {
					if b.saved {
						seen[string(lowerASCII(nil, raw[b.keyStart:b.keyEnd]))] = true
					}
				}
			}
			if seen != nil {
				k := string(lowerASCII(nil, key))
				a.saved = !seen[k]
				seen[k] = true
			} else {
				a.saved = true
				for _, b := range attrs {
					if b.saved && asciiFoldEqual(raw[b.keyStart:b.keyEnd], key) {
						a.saved = false
						break
					}
				}
			}
		}
		attrs = append(attrs, a)
		i = skipTagSpace(raw, j)
	}
	return name, attrs
}

// scanAttrValue reads what follows an attribute key at j, fills in a, and
// returns where the tokenizer goes on.
func scanAttrValue(raw []byte, j int, a *rawAttr) int {
	n := len(raw)
	k := skipTagSpace(raw, j)
	if k == n {
		return n
	}
	switch raw[k] {
	case '/':
		return k + 1
	case '=':
	default:
		return k
	}
	k = skipTagSpace(raw, k+1)
	if k == n {
		return n
	}
	a.hasValue = true
	switch q := raw[k]; q {
	case '>':
		a.valStart, a.valEnd, a.end = k, k, k
		return k
	case '"', '\'':
		a.quote = q
		a.valStart = k + 1
		e := bytes.IndexByte(raw[k+1:], q)
		if e < 0 {
			a.valEnd, a.end = n, n
			return n
		}
		a.valEnd = k + 1 + e
		a.end = a.valEnd + 1
		return a.end
	default:
		e := k
		for e < n && raw[e] != '>' && !isHTMLSpace(raw[e]) {
			e++
		}
		a.valStart, a.valEnd, a.end = k, e, e
		if e < n && isHTMLSpace(raw[e]) {
			return e + 1
		}
		return e
	}
}

// scanTagName returns the name of a raw start tag and where its
// attributes begin.
func scanTagName(raw []byte) ([]byte, int) {
	if len(raw) < 2 {
		return nil, len(raw)
	}
	for i := 2; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\n', '\r', '\t', '\f':
			return raw[1:i], i + 1
		case '/', '>':
			return raw[1:i], i
		}
	}
	return raw[1:], len(raw)
}

func skipTagSpace(raw []byte, i int) int {
	for i < len(raw) && isHTMLSpace(raw[i]) {
		i++
	}
	return i
}

// asciiFoldEqual reports whether a and b are equal ignoring the case of
// ASCII letters only, as the tokenizer's lower-casing does.
func asciiFoldEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// walkCSS visits the url() and @import references of css, decoded, and,
// when out is set, writes css with the replacements fn gives.
func walkCSS(css []byte, fn func(ref string) (string, bool), out *bytes.Buffer) {
	last := 0
	scanCSS(css, func(start, end int, quote byte) {
		val := css[start:end]
		if quote != 0 {
			val = val[1 : len(val)-1]
		}
		nv, changed := fn(cssUnescape(val))
		if !changed || out == nil {
			return
		}
		out.Write(css[last:start])
		writeCSSURL(out, nv, quote)
		last = end
	})
	if out != nil {
		out.Write(css[last:])
	}
}

// scanCSS finds the URLs of a stylesheet as CSS Syntax Level 3 tokenizes
// them: url(...) unquoted or with a string, and the string after @import.
// It calls visit with the span to replace: a string with its quotes, or the
// text of an unquoted url() without the white space around it (an unclosed
// url( at the end counts, as in CSS). Comments and other strings are passed
// over; bad URLs and strings cut by a newline or the end are left alone.
func scanCSS(css []byte, visit func(start, end int, quote byte)) {
	n := len(css)
	importing := false // after @import, before anything but space and comments
	for i := 0; i < n; {
		c := css[i]
		switch {
		case c == '/' && i+1 < n && css[i+1] == '*':
			if e := bytes.Index(css[i+2:], []byte("*/")); e >= 0 {
				i += e + 4
			} else {
				i = n
			}
			continue
		case isHTMLSpace(c):
			i++
			continue
		case c == '"' || c == '\'':
			end, closed := scanCSSString(css, i)
			if importing && closed {
				visit(i, end, c)
			}
			i = end
		case c == '@':
			j := scanCSSName(css, i+1)
			importing = equalFold(css[i+1:j], "import")
			i = j
			continue
		case c == '\\' || c == '-' || c == '_' || isCSSNameChar(c):
			j := scanCSSName(css, i)
			if j == i {
				i++ // a backslash before a newline or at the end
			} else if j < n && css[j] == '(' && equalFold(css[i:j], "url") {
				i = scanCSSURL(css, j+1, visit)
			} else {
				i = j
			}
		default:
			i++
		}
		importing = false
	}
}

// scanCSSString returns the end of the string starting with the quote at
// i, and whether it was closed (not cut by a newline or the end).
func scanCSSString(css []byte, i int) (int, bool) {
	q := css[i]
	for j := i + 1; j < len(css); j++ {
		switch css[j] {
		case q:
			return j + 1, true
		case '\\':
			if j+2 < len(css) && css[j+1] == '\r' && css[j+2] == '\n' {
				j++
			}
			j++
		case '\n', '\r', '\f':
			return j, false
		}
	}
	return len(css), false
}

// scanCSSURL reads the argument of url( starting at p, visits it, and
// returns where scanning goes on.
func scanCSSURL(css []byte, p int, visit func(start, end int, quote byte)) int {
	n := len(css)
	k := p
	for k < n && isHTMLSpace(css[k]) {
		k++
	}
	if k < n && (css[k] == '"' || css[k] == '\'') {
		end, closed := scanCSSString(css, k)
		if closed {
			visit(k, end, css[k])
		}
		return end
	}
	for j := k; j < n; j++ {
		switch c := css[j]; {
		case c == ')':
			if j > k {
				visit(k, j, 0)
			}
			return j + 1
		case isHTMLSpace(c):
			m := j
			for m < n && isHTMLSpace(css[m]) {
				m++
			}
			if m == n || css[m] == ')' {
				if j > k {
					visit(k, j, 0)
				}
				return min(m+1, n)
			}
			return skipBadURL(css, m)
		case c == '"' || c == '\'' || c == '(' || c < 0x20 || c == 0x7F:
			return skipBadURL(css, j)
		case c == '\\':
			if j+1 == n || css[j+1] == '\n' || css[j+1] == '\r' || css[j+1] == '\f' {
				return skipBadURL(css, j)
			}
			j = cssEscapeEnd(css, j) - 1
		}
	}
	if n > k {
		visit(k, n, 0) // unclosed at the end, as at the end of a style attribute
	}
	return n
}

// skipBadURL passes the rest of a bad url( up to its ')'.
func skipBadURL(css []byte, j int) int {
	for ; j < len(css); j++ {
		switch css[j] {
		case ')':
			return j + 1
		case '\\':
			j++
		}
	}
	return len(css)
}

// scanCSSName returns the end of the name (identifier characters and
// escapes) starting at i.
func scanCSSName(css []byte, i int) int {
	for i < len(css) {
		c := css[i]
		switch {
		case isCSSNameChar(c) || c == '-' || c == '_':
			i++
		case c == '\\' && i+1 < len(css) && css[i+1] != '\n' && css[i+1] != '\r' && css[i+1] != '\f':
			i = cssEscapeEnd(css, i)
		default:
			return i
		}
	}
	return i
}

// cssEscapeEnd returns the end of the valid escape whose backslash is at
// i: up to six hex digits and one white space after them, or one character.
func cssEscapeEnd(css []byte, i int) int {
	j := i + 1
	if j == len(css) || !isHex(css[j]) {
		return min(j+1, len(css))
	}
	for j < len(css) && j-i <= 6 && isHex(css[j]) {
		j++
	}
	switch {
	case j+1 < len(css) && css[j] == '\r' && css[j+1] == '\n':
		j += 2
	case j < len(css) && isHTMLSpace(css[j]):
		j++
	}
	return j
}

func isCSSNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}

// cssUnescape decodes the escapes of a CSS string or url() value.
func cssUnescape(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c != '\\' {
			sb.WriteByte(c)
			i++
			continue
		}
		i++
		if i == len(b) {
			break
		}
		switch c = b[i]; {
		case c == '\n' || c == '\f':
			i++ // a line continuation
		case c == '\r':
			i++
			if i < len(b) && b[i] == '\n' {
				i++
			}
		case isHex(c):
			r := rune(0)
			j := i
			for j < len(b) && j-i < 6 && isHex(b[j]) {
				r = r<<4 | rune(unhex(b[j]))
				j++
			}
			if r == 0 || 0xD800 <= r && r <= 0xDFFF || r > 0x10FFFF {
				r = 0xFFFD
			}
			sb.WriteRune(r)
			i = j
			if i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
				i += 2
			} else if i < len(b) && isHTMLSpace(b[i]) {
				i++
			}
		default:
			sb.WriteByte(c)
			i++
		}
	}
	return sb.String()
}

// writeCSSURL writes v as a CSS string in quotes q, or as the text of an
// unquoted url() when q is 0, escaping what would end it (and '<', so that
// it cannot close a <style> element).
func writeCSSURL(b *bytes.Buffer, v string, q byte) {
	const digits = "0123456789abcdef"
	if q != 0 {
		b.WriteByte(q)
	}
	last := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		special := c < 0x20 || c == 0x7F || c == '\\' || c == '<'
		if q == 0 {
			special = special || c == ' ' || c == '"' || c == '\'' || c == '(' || c == ')'
		} else {
			special = special || c == q
		}
		if !special {
			continue
		}
		b.WriteString(v[last:i])
		b.WriteByte('\\')
		if c >= 0x10 {
			b.WriteByte(digits[c>>4])
		}
		b.WriteByte(digits[c&15])
		b.WriteByte(' ')
		last = i + 1
	}
	b.WriteString(v[last:])
	if q != 0 {
		b.WriteByte(q)
	}
}
