package links

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// tokenizer gives the tokens of a document held in memory exactly as
// x/net/html's Tokenizer gives them: the same types, the same raw bytes,
// the same tag names, attributes and text. Its methods are those of
// Tokenizer that walker uses, with their meanings.
//
// It exists for speed. Tokenizer reads through an io.Reader a byte at a
// time, which made tokenizing three fifths of the crawler's parsing and a
// quarter of a docs mirror's CPU; this one skips text with bytes.IndexByte
// to the next '<', and reads tags, comments and raw text from the slice
// (BenchmarkTokenizer: four times the speed).
//
// It reads the common constructs (text, start and end tags, comments,
// doctypes, bogus comments, the raw text of script, style, title, ...)
// itself and leaves two rare and intricate ones to x/net/html: a script
// holding "<!--" (the script-escape states), and a token that the end of
// the document cuts short. From such a token on, the rest of the document
// is read by a Tokenizer started there, which is then in the state the
// whole document's would be in. Character references are decoded by
// x/net/html's UnescapeString, and a tag holding one that means something
// else in an attribute than in text (see sameInAttribute) is read again
// by x/net/html's Tokenizer.
// TestTokenizerAgrees and FuzzTokenizer check that the two agree on every
// token.
type tokenizer struct {
	doc    []byte
	pos    int // where the next token starts
	tt     html.TokenType
	raw    span // the current token
	data   span // a tag's name, a text's text
	attrs  []attrSpan
	seen   map[string]bool // lower-cased keys of attrs, for a tag with many
	nAttr  int             // attributes TagAttr returned
	tagAt  int             // where the last start tag began
	rawTag string          // the element whose raw text comes next, "" none
	// Of the current text token: its text is not decoded (script,
	// style, ...), and a NUL in it is replaced (raw text and RCDATA).
	textIsRaw, convertNUL bool
	text                  []byte          // the decoded text Text gave last, when it decoded it here
	keys                  []byte          // lower-cased keys of the current tag
	verbatim              bool            // the current tag's keys and values need no decoding (see verbatim)
	exact                 *html.Tokenizer // the current tag, when its attributes need decoding
	slow                  *html.Tokenizer // the rest of the document, once handed over
	// Of the current tag, found as it is read: its name is written as
	// TagName gives it (no upper-case letter, no NUL), and which of the
	// keys the walker asks for it has (see mayHaveAttr).
	nameLower bool
	keysSeen  uint8
}

type span struct{ start, end int }

type attrSpan struct{ key, val span }

func newTokenizer(doc []byte) *tokenizer { return &tokenizer{doc: doc} }

// manyAttrs is the count of attributes beyond which a tag's keys are
// looked up in a map rather than compared one by one.
const manyAttrs = 16

// rawElement returns the name of the element named name (ASCII case
// folded) if its content is raw text or RCDATA to the tokenizer, a
// constant rather than a copy per tag; "" for any other. A switch, not a
// map: it is asked for every start tag of every page, and hashing the name
// was 5% of a docs mirror's CPU.
func rawElement(name []byte) string {
	if len(name) < len("xmp") || len(name) > len("plaintext") {
		return ""
	}
	var buf [len("plaintext")]byte
	switch string(lower(buf[:0], name)) {
	case "iframe":
		return "iframe"
	case "noembed":
		return "noembed"
	case "noframes":
		return "noframes"
	case "noscript":
		return "noscript"
	case "plaintext":
		return "plaintext"
	case "script":
		return "script"
	case "style":
		return "style"
	case "textarea":
		return "textarea"
	case "title":
		return "title"
	case "xmp":
		return "xmp"
	}
	return ""
}

// isSpace reports whether c is HTML's white space, told by one test of a
// bit of spaces, not five comparisons: it is asked of most bytes of a tag.
func isSpace(c byte) bool { return c <= ' ' && spaces>>c&1 != 0 }

const spaces = 1<<' ' | 1<<'\n' | 1<<'\r' | 1<<'\t' | 1<<'\f'

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// handOver leaves the rest of the document, from at, to x/net/html. With
// skip, the token at at (a start tag) was given already.
func (z *tokenizer) handOver(at int, skip bool) html.TokenType {
	z.slow = html.NewTokenizer(bytes.NewReader(z.doc[at:]))
	if skip {
		z.slow.Next()
	}
	z.tt = z.slow.Next()
	return z.tt
}

// Next scans the next token and returns its type.
func (z *tokenizer) Next() html.TokenType {
	if z.slow != nil {
		z.tt = z.slow.Next()
		return z.tt
	}
	z.attrs, z.nAttr, z.exact, z.seen = z.attrs[:0], 0, nil, nil
	z.nameLower, z.keysSeen = false, 0
	z.raw = span{z.pos, z.pos}
	z.data = z.raw
	if tag := z.rawTag; tag != "" {
		z.rawTag = ""
		end, ok := z.rawTextEnd(tag)
		if !ok {
			return z.handOver(z.tagAt, true)
		}
		if end > z.pos {
			z.raw, z.data, z.pos = span{z.pos, end}, span{z.pos, end}, end
			z.textIsRaw = tag != "textarea" && tag != "title"
			z.convertNUL = true
			z.tt = html.TextToken
			return z.tt
		}
	}
	z.textIsRaw, z.convertNUL = false, false
	doc, start := z.doc, z.pos
	i := start
	if i >= len(doc) || doc[i] != '<' || !opensMarkup(doc, i) {
		i = z.textEnd(start) // not called between two tags, where most tokens start
	}
	if i > start {
		z.raw, z.data, z.pos = span{start, i}, span{start, i}, i
		z.tt = html.TextToken
		return z.tt
	}
	if i >= len(doc) {
		z.tt = html.ErrorToken
		return z.tt
	}
	switch c := doc[i+1]; {
	case isLetter(c):
		return z.tag(i, true)
	case c == '/' && i+2 < len(doc) && isLetter(doc[i+2]):
		return z.tag(i, false)
	case c == '!' && bytes.HasPrefix(doc[i+2:], []byte("--")):
		return z.comment(i)
	case c == '!' && len(doc) >= i+9 && equalFold(doc[i+2:i+9], "doctype"):
		return z.untilClose(i, i+9, html.DoctypeToken)
	case c == '!' && len(doc) >= i+4, c == '?', c == '/':
		// A bogus comment: "<!" but a comment or doctype (CDATA
		// included, as x/net/html reads it by default), "<?xml ...?>",
		// or "</" and no letter.
		return z.untilClose(i, i+2, html.CommentToken)
	}
	return z.handOver(i, false)
}

// shortText is how far textEnd looks for a '<' byte by byte before it
// calls bytes.IndexByte. Most texts of a docs page are a few bytes between
// two tags ("os.", "path", a space), for which the call cost more than
// the search (BenchmarkTokenizer: -6%).
const shortText = 16

// textEnd returns where the text starting at i ends: at the first '<'
// that starts a tag, comment or the like, or at the end of the document.
func (z *tokenizer) textEnd(i int) int {
	doc := z.doc
	for end := min(i+shortText, len(doc)); i < end; i++ {
		if doc[i] == '<' && opensMarkup(doc, i) {
			return i
		}
	}
	for {
		j := bytes.IndexByte(doc[i:], '<')
		if j < 0 {
			return len(doc)
		}
		i += j
		if opensMarkup(doc, i) {
			return i
		}
		i++ // this '<' is text
	}
}

// opensMarkup reports whether the '<' at doc[i] starts a tag, comment or
// the like; if not, it is text.
func opensMarkup(doc []byte, i int) bool {
	if i+1 >= len(doc) {
		return false
	}
	c := doc[i+1]
	return isLetter(c) || c == '/' || c == '!' || c == '?'
}

// untilClose ends the token that starts at i at the first '>' from from.
func (z *tokenizer) untilClose(i, from int, tt html.TokenType) html.TokenType {
	end := bytes.IndexByte(z.doc[from:], '>')
	if end < 0 {
		return z.handOver(i, false)
	}
	return z.token(tt, i, from+end+1)
}

// comment reads the comment starting at i ("<!--"), ending it where
// x/net/html does: at "-->", "--!>", or the '>' of "<!-->" and "<!--->".
func (z *tokenizer) comment(i int) html.TokenType {
	doc := z.doc
	dashes, beginning := 0, true
	for k := i + 4; k < len(doc); k++ {
		switch doc[k] {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return z.token(html.CommentToken, i, k+1)
			}
		case '!':
			if dashes >= 2 {
				k++
				if k >= len(doc) {
					return z.handOver(i, false)
				}
				switch doc[k] {
				case '>':
					return z.token(html.CommentToken, i, k+1)
				case '-':
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	return z.handOver(i, false)
}

func (z *tokenizer) token(tt html.TokenType, start, end int) html.TokenType {
	z.raw, z.pos, z.tt = span{start, end}, end, tt
	return tt
}

// tag reads the start (or end) tag starting at i with its attributes, as
// x/net/html's readTag does; a tag the document ends in is handed over.
func (z *tokenizer) tag(i int, start bool) html.TokenType {
	doc := z.doc
	k := i + 1
	if !start {
		k++
	}
	// The name: up to white space (consumed), '/' or '>'. Whether it
	// holds a byte TagName changes is told as it is read, not by reading
	// it again for every tag.
	z.data.start = k
	seen := tagByte[doc[k]]
	for k++; k < len(doc); k++ {
		c := tagByte[doc[k]]
		if c&(tagSpace|tagSlash|tagClose) != 0 {
			break
		}
		seen |= c
	}
	if k >= len(doc) {
		return z.handOver(i, false)
	}
	z.data.end = k
	z.nameLower = seen&tagFolds == 0
	k = z.skipSpace(k)
	for k < len(doc) && doc[k] != '>' {
		var a attrSpan
		// The key: up to white space, '/', '>', or an '=' not first.
		a.key.start = k
		if doc[k] == '=' {
			k++
		}
		for k < len(doc) && tagByte[doc[k]]&tagEnds == 0 {
			k++
		}
		a.key.end = k
		// The value.
		a.val = span{k, k}
		k = z.skipSpace(k)
		if k >= len(doc) {
			break
		}
		switch doc[k] {
		case '/':
			k++
		case '=':
			k = z.skipSpace(k + 1)
			if k >= len(doc) {
				break
			}
			switch q := doc[k]; q {
			case '>':
			case '\'', '"':
				end := bytes.IndexByte(doc[k+1:], q)
				if end < 0 {
					k = len(doc)
					break
				}
				a.val = span{k + 1, k + 1 + end}
				k += end + 2
			default:
				a.val.start = k
				for k++; k < len(doc) && tagByte[doc[k]]&(tagSpace|tagClose) == 0; k++ {
				}
				a.val.end = k
				if k < len(doc) && doc[k] != '>' {
					k++ // the white space after it
				}
			}
		}
		if start && a.key.end > a.key.start && !z.hasKey(doc[a.key.start:a.key.end]) {
			z.attrs = append(z.attrs, a)
			z.keysSeen |= keyFlag(doc[a.key.start:a.key.end])
		}
		k = z.skipSpace(k)
	}
	if k >= len(doc) {
		return z.handOver(i, false)
	}
	k++ // '>'
	z.raw, z.pos = span{i, k}, k
	if !start {
		z.tt = html.EndTagToken
		return z.tt
	}
	z.tagAt = i
	if tag := rawElement(doc[z.data.start:z.data.end]); tag != "" {
		z.rawTag = tag
	}
	z.tt = html.StartTagToken
	if n := len(z.attrs); doc[k-2] == '/' && (n == 0 || k-2 != z.attrs[n-1].val.end-1) {
		z.tt = html.SelfClosingTagToken
	}
	return z.tt
}

// lowerBit is what ORing an ASCII letter with lower-cases it: 0x20 for
// 'A'..'Z', 0 for any other byte.
func lowerBit(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return 0x20
	}
	return 0
}

// tagByte classes the bytes that end a tag's name, key or value, so that
// each byte of a tag is told by one look-up rather than up to eight
// comparisons, and those TagName changes in a name.
var tagByte = func() (t [256]uint8) {
	for _, c := range []byte(" \n\r\t\f") {
		t[c] = tagSpace
	}
	t['/'], t['>'], t['='] = tagSlash, tagClose, tagEquals
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = tagFolds
	}
	t[0] = tagFolds
	return t
}()

const (
	tagSpace = 1 << iota
	tagSlash
	tagClose
	tagEquals
	tagFolds // an upper-case ASCII letter or NUL: TagName lower-cases or replaces it

	tagEnds = tagSpace | tagSlash | tagClose | tagEquals // what ends a key
)

// The keys mayHaveAttr answers for from keysSeen rather than by looking
// at every key again: a docs page asks for these two of nearly every tag.
const (
	keyID = 1 << iota
	keyStyle
)

// keyFlag is key's bit in keysSeen (ASCII case folded), 0 for other keys.
func keyFlag(key []byte) uint8 {
	switch {
	case len(key) == 2 && equalFold(key, "id"):
		return keyID
	case len(key) == 5 && equalFold(key, "style"):
		return keyStyle
	}
	return 0
}

func (z *tokenizer) skipSpace(k int) int {
	for k < len(z.doc) && tagByte[z.doc[k]] == tagSpace {
		k++
	}
	return k
}

// hasKey reports whether the tag has an attribute key already (ASCII case
// folded); x/net/html keeps the first of each.
func (z *tokenizer) hasKey(key []byte) bool {
	if len(z.attrs) < manyAttrs {
		for _, a := range z.attrs {
			if equalFoldBytes(z.doc[a.key.start:a.key.end], key) {
				return true
			}
		}
		return false
	}
	if z.seen == nil {
		z.seen = make(map[string]bool, 2*manyAttrs)
		for _, a := range z.attrs {
			z.seen[string(lower(nil, z.doc[a.key.start:a.key.end]))] = true
		}
	}
	low := string(lower(nil, key))
	if z.seen[low] {
		return true
	}
	z.seen[low] = true
	return false
}

// lower appends b to dst with ASCII letters lower-cased, as x/net/html
// lower-cases names (bytes.ToLower would change other letters too).
func lower(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, c|lowerBit(c))
	}
	return dst
}

// equalFoldBytes is bytes.EqualFold for ASCII only, as x/net/html folds
// keys (equalFold, for a key against a lower-case name, would need a
// string of one of the two).
func equalFoldBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i]|lowerBit(a[i]) != b[i]|lowerBit(b[i]) {
			return false
		}
	}
	return true
}

// rawTextEnd returns where the raw text of tag, starting at z.pos, ends:
// at "</tag" followed by white space, '/' or '>', in any case, or at the
// end of the document. It reports false for a script whose text holds
// "<!--", which x/net/html reads by the script-escape rules.
func (z *tokenizer) rawTextEnd(tag string) (int, bool) {
	doc := z.doc
	if tag == "plaintext" {
		return len(doc), true
	}
	end := len(doc)
	for i := z.pos; ; {
		j := bytes.IndexByte(doc[i:], '<')
		if j < 0 {
			break
		}
		i += j
		if k := i + 2 + len(tag); k < len(doc) && doc[i+1] == '/' && equalFold(doc[i+2:k], tag) &&
			(isSpace(doc[k]) || doc[k] == '/' || doc[k] == '>') {
			end = i
			break
		}
		i++
	}
	if tag == "script" && bytes.Contains(doc[z.pos:end], []byte("<!--")) {
		return 0, false
	}
	return end, true
}

// lowerName returns the current tag's name as TagName gives it, the
// document's own bytes, when the document writes it so: lower case, no
// NUL (TagName replaces it); false when it does not, or when x/net/html
// reads the tag. Do not change it.
func (z *tokenizer) lowerName() ([]byte, bool) {
	if z.slow != nil || !z.nameLower {
		return nil, false
	}
	return z.doc[z.data.start:z.data.end], true
}

// mayHaveAttr reports whether the current start tag may have an attribute
// key (lower case) as TagAttr gives them: exactly, from the keys the tag
// was read with; true for a tag that x/net/html reads, whose caller then
// finds out from TagAttr. It spares the walker decoding the attributes of
// the many tags that hold neither a URL nor a fact; scanning the raw tag
// for "style" and " id=" to tell was 8% of reading a docs page.
func (z *tokenizer) mayHaveAttr(key string) bool {
	if f := keyFlag([]byte(key)); f != 0 {
		return z.mayHaveKeys(f)
	}
	if z.slow != nil {
		return true
	}
	for _, a := range z.attrs {
		if a.key.end-a.key.start == len(key) && equalFold(z.doc[a.key.start:a.key.end], key) {
			return true
		}
	}
	return false
}

// mayHaveKeys is mayHaveAttr for the keys of keyFlag, any of keys (bits
// of keysSeen): one bit test, noted as the tag was read, where looking at
// each key again for id and style was 3% of reading a docs page.
func (z *tokenizer) mayHaveKeys(keys uint8) bool {
	return z.slow != nil || z.keysSeen&keys != 0
}

// NextIsNotRawText says the text after the current start tag is markup.
func (z *tokenizer) NextIsNotRawText() {
	if z.slow != nil {
		z.slow.NextIsNotRawText()
		return
	}
	z.rawTag = ""
}

// Raw returns the current token's bytes, as they are in the document.
func (z *tokenizer) Raw() []byte {
	if z.slow != nil {
		return z.slow.Raw()
	}
	return z.doc[z.raw.start:z.raw.end]
}

// Text returns the decoded text of a text token (nil for any other), as
// Tokenizer.Text does. It may be the document's own bytes, or the
// tokenizer's, valid until the next call: do not change it.
func (z *tokenizer) Text() []byte {
	if z.slow != nil {
		if z.tt != html.TextToken {
			return nil
		}
		return z.slow.Text()
	}
	if z.tt != html.TextToken {
		return nil
	}
	s := z.doc[z.data.start:z.data.end]
	if verbatim(s) {
		return s
	}
	s = convert(s, z.convertNUL)
	if !z.textIsRaw && bytes.IndexByte(s, '&') >= 0 {
		if t, ok := unescapeCommon(z.text[:0], s); ok {
			z.text = t
			return t
		}
		s = []byte(html.UnescapeString(string(s)))
	}
	return s
}

// unescapeCommon appends s to dst with its character references decoded,
// as html.UnescapeString decodes them, when each is one of commonRef's;
// false when one is not. The text of a docs page's code holds many
// (&gt;&gt;&gt;, &#39;), and a text holding one cost three copies
// through UnescapeString.
func unescapeCommon(dst, s []byte) ([]byte, bool) {
	for {
		i := bytes.IndexByte(s, '&')
		if i < 0 {
			return append(dst, s...), true
		}
		dst = append(dst, s[:i]...)
		r, n := commonRef(s[i:])
		if n == 0 {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
		s = s[i+n:]
	}
}

// commonRef decodes the character reference at the start of s, which
// begins with '&', when it is one that reads the same in text and in an
// attribute and needs no table: &amp;, &lt;, &gt;, &quot; or &nbsp;, or a
// decimal reference of at most three digits to an ASCII character other
// than NUL, each ended by ';'. It returns the character and the
// reference's length, 0 for any other.
func commonRef(s []byte) (rune, int) {
	if len(s) > 1 && s[1] == '#' {
		v, k := 0, 2
		for ; k < len(s) && k < 5 && '0' <= s[k] && s[k] <= '9'; k++ {
			v = 10*v + int(s[k]-'0')
		}
		if k > 2 && k < len(s) && s[k] == ';' && 0 < v && v < utf8.RuneSelf {
			return rune(v), k + 1
		}
		return 0, 0
	}
	k := 1
	for k < len(s) && isAlnum(s[k]) {
		k++
	}
	if k == len(s) || s[k] != ';' {
		return 0, 0
	}
	var r rune
	switch string(s[1:k]) {
	case "amp":
		r = '&'
	case "lt":
		r = '<'
	case "gt":
		r = '>'
	case "quot":
		r = '"'
	case "nbsp":
		r = '\u00a0'
	default:
		return 0, 0
	}
	return r, k + 1
}

var (
	nul         = []byte{0}
	replacement = []byte("\ufffd")
)

// convert returns s with "\r\n" and "\r" made "\n" and, when nuls is
// set, NUL replaced by U+FFFD, as x/net/html converts text and attribute
// values; s itself when nothing changes.
func convert(s []byte, nuls bool) []byte {
	if nuls && bytes.IndexByte(s, 0) >= 0 {
		s = bytes.ReplaceAll(s, nul, replacement)
	}
	if bytes.IndexByte(s, '\r') >= 0 {
		s = bytes.ReplaceAll(s, []byte("\r\n"), []byte("\n"))
		s = bytes.ReplaceAll(s, []byte("\r"), []byte("\n"))
	}
	return s
}

// TagName returns the lower-cased name of a tag token, a NUL in it
// replaced, as Tokenizer.TagName does (without its second result).
func (z *tokenizer) TagName() []byte {
	if z.slow != nil {
		name, _ := z.slow.TagName()
		return name
	}
	switch z.tt {
	case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
		return lower(nil, bytes.ReplaceAll(z.doc[z.data.start:z.data.end], nul, replacement))
	}
	return nil
}

// TagAttr returns the lower-cased key and decoded value of the start tag's
// next attribute, and whether there are more, as Tokenizer.TagAttr does.
// The slices hold until the next call of Next; do not change them.
func (z *tokenizer) TagAttr() (key, val []byte, more bool) {
	if z.slow != nil {
		return z.slow.TagAttr()
	}
	if z.tt != html.StartTagToken && z.tt != html.SelfClosingTagToken || z.nAttr >= len(z.attrs) {
		return nil, nil, false
	}
	if z.nAttr == 0 {
		z.verbatim = verbatim(z.Raw())
		if !z.verbatim && z.needsTokenizer() {
			// Read the tag again with x/net/html, which decodes its values.
			z.exact = html.NewTokenizer(bytes.NewReader(z.Raw()))
			z.exact.Next()
		}
		z.keys = z.keys[:0]
		if cap(z.keys) < len(z.Raw()) {
			z.keys = make([]byte, 0, len(z.Raw())) // never grown: earlier keys stay valid
		}
	}
	if z.exact != nil {
		z.nAttr++
		return z.exact.TagAttr()
	}
	a := z.attrs[z.nAttr]
	z.nAttr++
	key, val = z.doc[a.key.start:a.key.end], z.doc[a.val.start:a.val.end]
	switch {
	case !z.verbatim && bytes.IndexByte(key, 0) >= 0:
		key = lower(nil, bytes.ReplaceAll(key, nul, replacement))
	case hasUpper(key):
		n := len(z.keys)
		z.keys = lower(z.keys, key)
		key = z.keys[n:len(z.keys):len(z.keys)]
	}
	if !z.verbatim {
		val = convert(val, true)
		if bytes.IndexByte(val, '&') >= 0 {
			val = []byte(html.UnescapeString(string(val))) // as in an attribute: see needsTokenizer
		}
	}
	return key, val, z.nAttr < len(z.attrs)
}

// hasUpper reports whether b holds an ASCII upper-case letter.
func hasUpper(b []byte) bool {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// verbatim reports whether s is its own decoded text or attribute value,
// holding none of the bytes decoding reads: '&' (a character reference),
// CR (a line end, made LF) and NUL (replaced). Most texts and tags of a
// page are, and are then taken as they are, where asking bytes.IndexByte
// for each of the three in every text, key and value was 6% of reading a
// docs page. Short ones are read byte by byte, for which the call costs
// more than the search.
func verbatim(s []byte) bool {
	if len(s) > 64 {
		return bytes.IndexByte(s, '&') < 0 && bytes.IndexByte(s, '\r') < 0 && bytes.IndexByte(s, 0) < 0
	}
	for _, c := range s {
		if decodes[c] {
			return false
		}
	}
	return true
}

// decodes are the bytes verbatim looks for.
var decodes = [256]bool{'&': true, '\r': true, 0: true}

// needsTokenizer reports whether a value of the current tag holds a
// character reference that x/net/html decodes otherwise in an attribute
// than in text (html.UnescapeString): those it decodes only in text.
func (z *tokenizer) needsTokenizer() bool {
	for _, a := range z.attrs {
		if !sameInAttribute(z.doc[a.val.start:a.val.end]) {
			return true
		}
	}
	return false
}

// sameInAttribute reports whether every character reference of v means
// the same in an attribute value as in text. The two differ for a named
// reference that is not a whole entity name, such as "&notit;" or "&ampx"
// (text decodes the longest entity it starts with, "&not", an attribute
// keeps it as written), and for one without ';' before '=', such as
// "&amp=" (kept in an attribute). A whole name decodes in both; so does a
// numeric reference; an '&' before no name stays in both.
func sameInAttribute(v []byte) bool {
	for i := bytes.IndexByte(v, '&'); i >= 0; {
		j := i + 1
		for j < len(v) && isAlnum(v[j]) {
			j++
		}
		if j > i+1 { // a name
			semi := j < len(v) && v[j] == ';'
			if !semi && j < len(v) && v[j] == '=' {
				return false
			}
			if semi {
				j++
			}
			ref := string(v[i:j])
			// Decoded whole, the reference gives one or two characters
			// and nothing of it is left; decoded in part, its end is left
			// as written. (An entity that decodes to its own last byte,
			// as "&semi;" does, is taken for a part, to be safe.)
			if got := html.UnescapeString(ref); got != ref && got[len(got)-1] == ref[len(ref)-1] {
				return false
			}
		}
		k := bytes.IndexByte(v[j:], '&')
		if k < 0 {
			break
		}
		i = j + k
	}
	return true
}

func isAlnum(c byte) bool { return isLetter(c) || '0' <= c && c <= '9' }
