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
	simHash simSums
	started bool // a word was hashed into ContentHash
}

// invisible reports whether name is an element whose text is not the
// page's visible text: script, style, template, noscript and title.
func invisible(name []byte) bool { return elementOf(name)&elHidden != 0 }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func newFactScan() *factScan {
	return &factScan{f: Facts{ContentHash: fnvOffset}}
}

// start notes a start tag of element el; selfClosing ones open nothing.
func (s *factScan) start(el element, selfClosing bool) {
	switch {
	case el&elH1 != 0:
		s.f.H1Count++
	case !selfClosing && el&elHidden != 0:
		s.skip++
	}
}

// end notes an end tag.
func (s *factScan) end(name []byte) {
	if s.skip > 0 && invisible(name) {
		s.skip--
	}
}

// needAttrs reports whether the element el has attributes the facts
// read, an id aside (any element may have one): <html>'s lang, an <img>'s
// alt, an <a name>.
func (s *factScan) needAttrs(el element) bool {
	return el&elFactAttrs != 0 || el&elHTML != 0 && !s.sawHTML
}

// attrs takes in the attributes of a tag needAttrs asked for.
func (s *factScan) attrs(name string, attrs []attr) {
	switch name {
	case "html":
		if !s.sawHTML {
			s.sawHTML = true
			s.f.Lang = strings.TrimSpace(attrValue(attrs, "lang"))
		}
	case "img":
		if _, ok := findBytes(attrs, "alt"); !ok {
			s.f.ImgNoAlt++
		}
	case "a":
		if v, ok := findBytes(attrs, "name"); ok {
			s.id(v)
		}
	}
	if v, ok := findBytes(attrs, "id"); ok {
		s.id(v)
	}
}

// id keeps a fragment target, copied only when it is kept: a docs page
// has an id on most of its headings and definitions.
func (s *factScan) id(v []byte) {
	if len(v) == 0 || len(v) > maxID || s.ids[string(v)] {
		return
	}
	if len(s.f.IDs) >= MaxIDs {
		s.f.IDsCut++
		return
	}
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	id := string(v)
	s.ids[id] = true
	s.f.IDs = append(s.f.IDs, id)
}

// text takes in a text token, decoded: its words, split at white space
// (unicode.IsSpace), are counted and hashed into the content hash and
// SimHash. One pass over the bytes, each told by byteClass, hashes a word
// as it finds its end: splitting first and hashing each word after, with a
// call per byte to tell white space, read every byte twice and was a fifth
// of reading a docs page; fused, Python's os.html reads 8% faster and
// PostgreSQL's sql-createtable.html 15%.
func (s *factScan) text(b []byte) {
	if s.skip > 0 {
		return
	}
	h, started := s.f.ContentHash, s.started
	for i := 0; i < len(b); {
		// White space: ASCII told here, not by a call per byte.
		switch byteClass[b[i]] {
		case classSpace:
			i++
			continue
		case classMulti:
			if n := spaceAt(b, i); n > 0 {
				i += n
				continue
			}
		}
		// A word, to the next white space or the end.
		if started {
			h = (h ^ ' ') * fnvPrime
		}
		started = true
		wh := uint64(fnvOffset)
	word:
		for i < len(b) {
			c := b[i]
			switch byteClass[c] {
			case classSpace:
				break word
			case classMulti:
				r, n := utf8.DecodeRune(b[i:])
				if unicode.IsSpace(r) {
					break word
				}
				for _, c := range b[i : i+n] {
					h = (h ^ uint64(c)) * fnvPrime
					wh = (wh ^ uint64(c)) * fnvPrime
				}
				i += n
				continue
			}
			h = (h ^ uint64(c)) * fnvPrime
			wh = (wh ^ uint64(c)) * fnvPrime
			i++
		}
		s.f.WordCount++
		s.simHash.add(mix(wh))
	}
	s.f.ContentHash, s.started = h, started
}

// What a byte of text is to the word split: a byte of an ASCII word, an
// ASCII white space, or the first (or a later) byte of a multi-byte
// character, which is decoded to tell.
const (
	classWord = iota
	classSpace
	classMulti
)

var byteClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = classMulti
		case asciiSpace[c]:
			t[c] = classSpace
		}
	}
	return t
}()

// spaceAt returns the length of the white space character (unicode.IsSpace)
// at b[i], 0 if there is none.
func spaceAt(b []byte, i int) int {
	switch byteClass[b[i]] {
	case classSpace:
		return 1
	case classMulti:
		if r, n := utf8.DecodeRune(b[i:]); unicode.IsSpace(r) {
			return n
		}
	}
	return 0
}

// asciiSpace are the ASCII characters unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// done finishes the facts: SimHash from its sums.
func (s *factScan) done() Facts {
	s.f.SimHash = s.simHash.sum()
	return s.f
}

// simSums are SimHash's sums: how many of the features added have each
// of the 64 bits set. A bit of the SimHash is set when more than half
// of the features have it.
//
// A page has thousands of words, and adding one bit at a time, with a
// branch each that the processor cannot predict, was a fifth of a docs
// mirror's CPU. So the 64 counts are kept in three stages, each emptied
// into the next before it can overflow:
//   - a batch of up to 15 features, added together (addBatch) into 64
//     four-bit counters, bit-sliced (bit i of digit k is binary digit k
//     of bit i's count), with seven word-wide logic operations each, the
//     digits held in registers;
//   - lanes: eight byte-wide counters per uint64, to which a digit word
//     is added eight bits at a time (spread), up to 255;
//   - ones, plain ints.
//
// Adding each feature into the lanes directly (16 memory operations) was
// a sixth of reading a PostgreSQL docs page, whose words are many; adding
// each into digits kept in memory, a call per word, 5% of reading the
// docs pages.
type simSums struct {
	batch   [15]uint64 // features not yet added
	inBatch int
	lanes   [8]uint64 // lanes[j]'s byte k counts bit 8j+k, since the last flush
	inLanes int       // features added into lanes since the last flush
	ones    [64]int   // bit i's count, up to the last flush
	n       int       // features added
}

// spread[b]'s byte k is bit k of b.
var spread = func() (t [256]uint64) {
	for b := range t {
		for k := range 8 {
			t[b] |= uint64(b>>k&1) << (8 * k)
		}
	}
	return t
}()

// add adds a feature's hash, in a batch.
func (s *simSums) add(h uint64) {
	s.batch[s.inBatch] = h
	if s.inBatch++; s.inBatch == len(s.batch) {
		s.addBatch()
	}
}

// addBatch adds the batch into the lanes: first into four digits, by a
// ripple-carry add of one to the counters of each feature's set bits,
// digit by digit; then the digits' counts (each at most 15) into the
// lanes.
func (s *simSums) addBatch() {
	var d0, d1, d2, d3 uint64
	for _, c := range s.batch[:s.inBatch] {
		d0, c = d0^c, d0&c
		d1, c = d1^c, d1&c
		d2, c = d2^c, d2&c
		d3 ^= c
	}
	if s.inLanes+s.inBatch > 255 {
		s.flush()
	}
	for j := range s.lanes {
		s.lanes[j] += spread[byte(d0>>(8*j))] + spread[byte(d1>>(8*j))]<<1 +
			spread[byte(d2>>(8*j))]<<2 + spread[byte(d3>>(8*j))]<<3
	}
	s.inLanes += s.inBatch
	s.n += s.inBatch
	s.inBatch = 0
}

func (s *simSums) flush() {
	for j, lane := range s.lanes {
		for k := range 8 {
			s.ones[8*j+k] += int(lane >> (8 * k) & 0xff)
		}
	}
	s.lanes, s.inLanes = [8]uint64{}, 0
}

// sum is the SimHash of the features added.
func (s *simSums) sum() uint64 {
	s.addBatch()
	s.flush()
	var h uint64
	for i, ones := range s.ones {
		if 2*ones > s.n {
			h |= 1 << i
		}
	}
	return h
}

// mix is SplitMix64's finaliser: it spreads a hash's bits.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
