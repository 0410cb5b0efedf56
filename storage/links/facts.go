package links

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxIDs bounds Facts.IDs: a page's fragment targets past it are counted
// in IDsCut, not kept.
const MaxIDs = 1000

// maxID bounds one id kept, in bytes; a longer one is no fragment a
// link would name.
const maxID = 256

// Facts are what the audit reads in a page's body besides its links
// (README, "The audit's verdicts"), gathered by the same scan.
type Facts struct {
	// WordCount is the number of words of the visible text: the text
	// outside <script>, <style>, <template>, <noscript> and <title>,
	// split at white space (and at tags).
	WordCount int
	// ContentHash is a 64-bit FNV-1a hash of the visible text with white
	// space collapsed: pages with the same text have the same hash.
	ContentHash uint64
	// SimHash is a 64-bit SimHash (Charikar's) of the visible text's
	// words, each occurrence counted: the share of bits two pages differ
	// in estimates the angle between their texts' word counts, so texts
	// that differ in a few words differ in a few bits.
	SimHash uint64
	// Lang is the lang attribute of the first <html>, trimmed; "" without one.
	Lang string
	// H1Count counts <h1> elements; ImgNoAlt the <img> without an alt
	// attribute (alt="" is an alt).
	H1Count, ImgNoAlt int
	// IDs are the page's fragment targets: each element's id and each
	// <a name>, distinct, in page order, at most MaxIDs; IDsCut counts
	// those past it.
	IDs    []string
	IDsCut int
}

// factScan gathers Facts as the walker goes.
type factScan struct {
	f       Facts
	skip    int // depth inside elements whose text is not visible
	sawHTML bool
	ids     map[string]bool
	// SimHash's sums, one per bit.
	sums    [64]int32
	started bool // a word was hashed into ContentHash
}

// invisible are the elements whose text is not the page's visible text.
var invisible = map[string]bool{"script": true, "style": true, "template": true, "noscript": true, "title": true}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func newFactScan() *factScan {
	return &factScan{f: Facts{ContentHash: fnvOffset}}
}

// start notes a start tag; selfClosing ones open nothing.
func (s *factScan) start(name []byte, selfClosing bool) {
	switch n := string(name); {
	case n == "h1":
		s.f.H1Count++
	case invisible[n] && !selfClosing:
		s.skip++
	}
}

// end notes an end tag.
func (s *factScan) end(name []byte) {
	if invisible[string(name)] && s.skip > 0 {
		s.skip--
	}
}

// needAttrs reports whether the tag raw has attributes the facts read:
// <html>'s lang, an <img>'s alt, an id or an <a name>.
func (s *factScan) needAttrs(name, raw []byte) bool {
	switch string(name) {
	case "html":
		return !s.sawHTML
	case "img", "a":
		return true
	}
	return hasAttrID(raw)
}

// hasAttrID reports whether a raw tag may have an id attribute: "id"
// after white space, then '=' (a cheap test, so that the attributes of
// most tags are not read).
func hasAttrID(raw []byte) bool {
	for i := 1; i+2 < len(raw); i++ {
		if (raw[i] == 'i' || raw[i] == 'I') && (raw[i+1] == 'd' || raw[i+1] == 'D') && isSpaceByte(raw[i-1]) {
			j := i + 2
			for j < len(raw) && isSpaceByte(raw[j]) {
				j++
			}
			if j < len(raw) && raw[j] == '=' {
				return true
			}
		}
	}
	return false
}

func isSpaceByte(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' }

// attrs takes in the attributes of a tag needAttrs asked for.
func (s *factScan) attrs(name string, attrs []attr) {
	switch name {
	case "html":
		if !s.sawHTML {
			s.sawHTML = true
			s.f.Lang = strings.TrimSpace(attrValue(attrs, "lang"))
		}
	case "img":
		if _, ok := find(attrs, "alt"); !ok {
			s.f.ImgNoAlt++
		}
	case "a":
		if v, ok := find(attrs, "name"); ok {
			s.id(v)
		}
	}
	if v, ok := find(attrs, "id"); ok {
		s.id(v)
	}
}

// id keeps a fragment target.
func (s *factScan) id(v string) {
	if v == "" || len(v) > maxID {
		return
	}
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	if s.ids[v] {
		return
	}
	if len(s.f.IDs) >= MaxIDs {
		s.f.IDsCut++
		return
	}
	s.ids[v] = true
	s.f.IDs = append(s.f.IDs, strings.Clone(v))
}

// text takes in a text token, decoded.
func (s *factScan) text(b []byte) {
	if s.skip > 0 {
		return
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(b) {
			r, n := utf8.DecodeRune(b[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		s.word(b[i:j])
		i = j
	}
}

// word hashes one word into the content hash and SimHash.
func (s *factScan) word(w []byte) {
	h := s.f.ContentHash
	if s.started {
		h = (h ^ ' ') * fnvPrime
	}
	wh := uint64(fnvOffset)
	for _, c := range w {
		h = (h ^ uint64(c)) * fnvPrime
		wh = (wh ^ uint64(c)) * fnvPrime
	}
	s.f.ContentHash, s.started = h, true
	s.f.WordCount++
	s.shingle(mix(wh))
}

// shingle adds a feature's hash (a word's) to SimHash's sums.
func (s *factScan) shingle(h uint64) {
	for i := range s.sums {
		if h&(1<<i) != 0 {
			s.sums[i]++
		} else {
			s.sums[i]--
		}
	}
}

// done finishes the facts: SimHash from its sums.
func (s *factScan) done() Facts {
	for i, v := range s.sums {
		if v > 0 {
			s.f.SimHash |= 1 << i
		}
	}
	return s.f
}

// mix is SplitMix64's finaliser: it spreads a hash's bits.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
