package sitemap

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// bufSize is the parser's window on the input; a tag must fit in it.
const bufSize = 64 << 10

// Field capture bounds: a location is dropped as too long past maxLocRaw
// bytes as written (entities included); other values are invalid past
// maxFieldRaw.
const (
	maxLocRaw   = 16 << 10
	maxFieldRaw = 256
)

// Read reads one sitemap file from r: a urlset, a sitemap index, a plain
// text list, an RSS or an Atom feed, gzipped any number of times or not.
// sitemapURL is where the file was fetched from (after redirects); the
// location rules are applied against it and relative locations are
// resolved against it.
//
// Read calls yield for each accepted entry, in file order, as soon as the
// entry ends, and warn (which may be nil) for each entry dropped, each cap
// hit, each bad value and any damage; neither is called after Read
// returns. It reads at most lim.MaxBytes uncompressed bytes and stops early
// at a cap, at the end of the root element, or when yield returns an error,
// which Read then returns unchanged. yield may be nil, to only count.
//
// A malformed file is not an error: the entries before the damage are
// yielded and a Warning says where it was. Read returns an error only when
// sitemapURL is not an absolute http(s) URL, when r fails (the entries
// before the failure have been yielded), or when yield does.
func Read(r io.Reader, sitemapURL string, lim Limits, yield func(Entry) error, warn func(Warning)) (Result, error) {
	sc, err := newScope(sitemapURL)
	if err != nil {
		return Result{}, fmt.Errorf("sitemap URL %q: %w", sitemapURL, err)
	}
	if warn == nil {
		warn = func(Warning) {}
	}
	p := &parser{
		lim:     lim.withDefaults(),
		scope:   sc,
		sitemap: sitemapURL,
		yield:   yield,
		warn:    warn,
	}
	p.run(r)
	if p.capr != nil {
		p.res.Bytes = p.lim.MaxBytes - p.capr.left
	}
	return p.res, p.err
}

// parser reads one file. Its memory is bounded whatever the input: the
// window, the field buffers, the element stack and the gzip state.
type parser struct {
	lim     Limits
	scope   *scope
	sitemap string
	yield   func(Entry) error
	warn    func(Warning)

	raw  *rawReader
	capr *capReader
	src  io.Reader

	buf  []byte
	r, w int   // unread input is buf[r:w]
	base int64 // input offset of buf[0]
	eof  bool
	// inErr is why the input ended, if not at its end.
	inErr error

	res   Result
	err   error // what Read returns
	done  bool  // stop reading
	count int   // entries with a location, for the caps

	xml xmlState

	// The entry being read.
	inEntry                        bool
	loc, lastmod, changefreq, prio field
	capture                        *field // the field receiving text, if any
	scratch                        []byte
}

// field accumulates one value as written, up to a bound.
type field struct {
	b    []byte
	set  bool // the element was seen
	over bool // the value went past the bound
}

func (f *field) reset() { f.b, f.set, f.over = f.b[:0], false, false }

// add appends text to f, skipping leading white space and keeping at most
// limit bytes; non-space text past the limit marks f as over.
func (f *field) add(t []byte, limit int) {
	if len(f.b) == 0 {
		t = trimLeftSpace(t)
	}
	if room := limit - len(f.b); len(t) > room {
		if len(trimLeftSpace(t[room:])) > 0 {
			f.over = true
		}
		t = t[:room]
	}
	f.b = append(f.b, t...)
}

// value returns f trimmed, its XML entities decoded in place if xml is
// set, and read as Windows-1252 if it is not UTF-8. bad is the first
// entity reference that could not be decoded, if any.
func (f *field) value(xml bool) (v, bad []byte) {
	if xml {
		f.b, bad = decodeEntities(f.b)
	}
	f.b = trimSpace(f.b)
	if !utf8.Valid(f.b) {
		f.b = fromWindows1252(f.b)
	}
	return f.b, bad
}

func (p *parser) run(src io.Reader) {
	if !p.open(src) {
		return
	}
	p.buf = make([]byte, bufSize)
	p.need(4)
	p.detectUTF16()
	// A UTF-8 byte order mark, then white space, come before anything.
	if bytes.HasPrefix(p.buf[p.r:p.w], []byte("\xef\xbb\xbf")) {
		p.r += 3
	}
	for {
		p.r += len(p.buf[p.r:p.w]) - len(trimLeftSpace(p.buf[p.r:p.w]))
		if p.r < p.w || !p.fill() {
			break
		}
	}
	if p.r == p.w {
		p.ended("")
		if p.inErr == nil && !p.res.Cut {
			p.warnf(RuleFormat, "", 0, "empty file")
		}
		return
	}
	p.need(4096)
	if p.buf[p.r] == '<' {
		p.parseXML()
		return
	}
	if head := p.buf[p.r:min(p.w, p.r+1024)]; bytes.IndexByte(head, 0) >= 0 {
		p.res.Cut = true
		p.done = true
		p.warnf(RuleFormat, "", 0, "binary data: not a sitemap")
		return
	}
	if i := xmlStart(p.buf[p.r:p.w]); i >= 0 {
		p.warnf(RuleMalformed, "", 0, "%d bytes of text before the XML ignored", i)
		p.r += i
		p.parseXML()
		return
	}
	p.parseText()
}

// xmlStart finds the start of a sitemap's XML after junk (a server's error
// message, say) in b, or returns -1 when b is not XML.
func xmlStart(b []byte) int {
	for _, m := range []string{"<?xml", "<urlset", "<sitemapindex", "<rss", "<feed"} {
		if i := bytes.Index(b, []byte(m)); i >= 0 {
			return i
		}
	}
	return -1
}

// open sets up the layers below the parser: the raw byte bound, each gzip
// layer found by its magic bytes, and the cap on uncompressed bytes.
func (p *parser) open(src io.Reader) bool {
	p.raw = &rawReader{r: src, left: rawLimit(p.lim.MaxBytes)}
	var r io.Reader = p.raw
	for {
		br := bufio.NewReaderSize(r, 4096)
		if !isGzip(br) {
			r = br
			break
		}
		if p.res.Gzip == maxGzipLayers {
			p.res.Cut = true
			p.warnf(RuleFormat, "", 0, "more than %d layers of gzip; not read", maxGzipLayers)
			return false
		}
		z, err := newGunzip(br)
		if err != nil {
			p.inputFailed(err)
			return false
		}
		p.res.Gzip++
		r = z
	}
	p.capr = &capReader{r: r, left: p.lim.MaxBytes}
	p.src = p.capr
	return true
}

// detectUTF16 switches to a UTF-16 decoder when the file starts with a
// UTF-16 byte order mark, or without one with two ASCII characters in
// UTF-16 ("<?", "<u", "ht"): NUL bytes that UTF-8 text never has.
func (p *parser) detectUTF16() {
	b := p.buf[p.r:p.w]
	var big, skip bool
	switch {
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		big, skip = true, true
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		skip = true
	case len(b) >= 4 && b[0] == 0 && isASCIIText(b[1]) && b[2] == 0 && isASCIIText(b[3]):
		big = true
	case len(b) >= 4 && isASCIIText(b[0]) && b[1] == 0 && isASCIIText(b[2]) && b[3] == 0:
	default:
		return
	}
	if skip {
		b = b[2:]
	}
	pending := bytes.Clone(b)
	p.src = newUTF16Reader(io.MultiReader(bytes.NewReader(pending), p.capr), big)
	p.base += int64(p.w)
	p.r, p.w, p.eof = 0, 0, false
	p.need(4)
}

// isASCIIText reports whether c is a printable ASCII character or white
// space.
func isASCIIText(c byte) bool { return ' ' <= c && c < 0x7f || isSpace(c) }

// fill moves the unread input to the front of the window and reads more.
// It returns false when nothing more can be read: the input ended, or the
// window is full.
func (p *parser) fill() bool {
	if p.eof {
		return false
	}
	if p.r > 0 {
		n := copy(p.buf, p.buf[p.r:p.w])
		p.base += int64(p.r)
		p.r, p.w = 0, n
	}
	if p.w == len(p.buf) {
		return false
	}
	for range 100 {
		n, err := p.src.Read(p.buf[p.w:])
		p.w += n
		if err != nil {
			p.eof = true
			if err != io.EOF {
				p.inErr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	p.eof = true
	p.inErr = io.ErrNoProgress
	return false
}

// need fills the window until it holds n unread bytes, if the input has
// them.
func (p *parser) need(n int) bool {
	for p.w-p.r < n {
		if !p.fill() {
			return false
		}
	}
	return true
}

// inputFailed records why the input stopped before its end: the caller's
// reader failed (an error for Read to return), too many compressed bytes
// (the byte cap), or damaged gzip (a warning).
func (p *parser) inputFailed(err error) {
	p.res.Cut = true
	p.done = true
	p.inErr = nil
	switch {
	case p.raw.err != nil:
		if p.err == nil {
			p.err = fmt.Errorf("read sitemap: %w", p.raw.err)
		}
	case p.raw.capped:
		p.warnf(RuleMaxBytes, "", p.lim.MaxBytes, "compressed input larger than the cap of %d bytes allows; the rest is not read", p.lim.MaxBytes)
	default:
		p.warnf(RuleMalformed, "", 0, "damaged gzip after %d bytes: %v; entries after the damage are lost", p.offset(), err)
	}
}

// ended stops the reading at the end of the input or at damage, and
// reports why: the input failing (see inputFailed), the byte cap, or the
// damage described by why (nothing when why is empty).
func (p *parser) ended(why string) {
	p.done = true
	switch {
	case p.inErr != nil:
		p.inputFailed(p.inErr)
	case p.capr != nil && p.capr.over:
		p.res.Cut = true
		p.warnf(RuleMaxBytes, "", p.lim.MaxBytes, "file larger than %d bytes: cut there, entries not ended by then are dropped", p.lim.MaxBytes)
	case why != "":
		p.res.Cut = true
		p.warnf(RuleMalformed, "", 0, "%s", why)
	}
}

// offset is the input position of the next unread byte.
func (p *parser) offset() int64 { return p.base + int64(p.r) }

// warnf reports a Warning about the file.
func (p *parser) warnf(rule Rule, u string, limit int64, format string, args ...any) {
	p.warn(Warning{Sitemap: p.sitemap, Rule: rule, URL: u, Limit: limit, Detail: fmt.Sprintf(format, args...)})
}

// beginEntry starts a new entry.
func (p *parser) beginEntry() {
	p.inEntry = true
	p.loc.reset()
	p.lastmod.reset()
	p.changefreq.reset()
	p.prio.reset()
}

// endEntry applies the caps and the location rules to the entry just
// ended and yields it or reports why not.
func (p *parser) endEntry() {
	p.inEntry = false
	p.capture = nil
	loc, bad := p.loc.value(p.res.Kind != KindText)
	if len(loc) == 0 {
		if p.res.Kind == KindURLSet || p.res.Kind == KindIndex {
			p.res.Dropped++
			p.warnf(RuleInvalidURL, "", 0, "entry without a <loc> at byte %d; dropped", p.offset())
		}
		return
	}
	child := p.res.Kind == KindIndex
	p.count++
	if child && p.count > p.lim.MaxChildren {
		p.capHit(RuleMaxChildren, loc, int64(p.lim.MaxChildren), "more than %d sitemaps in the index: this one and the rest are dropped")
		return
	}
	if !child && p.count > p.lim.MaxURLs {
		p.capHit(RuleMaxURLs, loc, int64(p.lim.MaxURLs), "more than %d URLs in the file: this one and the rest are dropped")
		return
	}
	if p.loc.over {
		p.drop(loc, RuleTooLong, "longer than 2048 characters; dropped")
		return
	}
	if bad != nil {
		p.drop(loc, RuleInvalidURL, "reference "+string(bad)+" is neither a predefined entity nor a character (entities are never expanded from a DOCTYPE); dropped")
		return
	}
	mode := modePage
	switch p.res.Kind {
	case KindIndex:
		mode = modeChild
	case KindText:
		mode = modeText
	}
	var u string // the URL to yield when it is not loc as written
	if !p.scope.fast(loc, mode) {
		var rule Rule
		var why string
		if u, rule, why = p.scope.checkSlow(string(loc), mode); rule != "" {
			p.drop(loc, rule, why)
			return
		}
	}
	e := Entry{Child: child, Sitemap: p.sitemap}
	lastmod := p.metadata(&e, loc, u)
	if u == "" {
		// The usual case: one allocation holds the URL and the lastmod.
		p.scratch = append(append(p.scratch[:0], loc...), lastmod...)
		both := string(p.scratch)
		e.Loc, e.LastmodRaw = both[:len(loc)], both[len(loc):]
	} else {
		e.Loc, e.LastmodRaw = u, string(lastmod)
	}
	if child {
		p.res.Children++
	} else {
		p.res.Pages++
	}
	if p.yield == nil {
		return
	}
	if err := p.yield(e); err != nil {
		p.err = err
		p.done = true
	}
}

// capHit ends the reading at a cap, reporting the first entry past it.
func (p *parser) capHit(rule Rule, loc []byte, limit int64, format string) {
	p.res.Cut = true
	p.res.Dropped++
	p.done = true
	p.warnf(rule, string(loc), limit, format, limit)
}

// drop reports an entry dropped by a location rule.
func (p *parser) drop(loc []byte, rule Rule, why string) {
	p.res.Dropped++
	p.warn(Warning{Sitemap: p.sitemap, Rule: rule, URL: string(loc), Detail: why})
}

// changefreqs are the values <changefreq> may take.
var changefreqs = [...]string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}

// metadata fills in the lastmod time, changefreq and priority of e (whose
// location is u, or loc if u is empty), keeping the entry and reporting
// any value that is invalid. It returns the lastmod as written when it is
// valid.
func (p *parser) metadata(e *Entry, loc []byte, u string) (lastmod []byte) {
	shown := func() string {
		if u != "" {
			return u
		}
		return string(loc)
	}
	if !e.Child {
		e.Priority = DefaultPriority
	}
	if v, _ := p.lastmod.value(true); p.lastmod.set && (len(v) > 0 || p.lastmod.over) {
		var t time.Time
		ok := false
		if !p.lastmod.over {
			if p.res.Kind == KindRSS {
				t, ok = parseFeedDate(v)
			} else {
				t, ok = parseW3C(v)
			}
		}
		if ok {
			e.Lastmod, lastmod = t, v
		} else {
			p.warnf(RuleLastmod, shown(), 0, "%q is not a W3C Datetime; lastmod ignored, URL kept", v)
		}
	}
	if e.Child {
		return lastmod
	}
	if v, _ := p.changefreq.value(true); len(v) > 0 || p.changefreq.over {
		if e.ChangeFreq = changefreq(v); e.ChangeFreq == "" || p.changefreq.over {
			e.ChangeFreq = ""
			p.warnf(RuleChangefreq, shown(), 0, "%q is not always, hourly, daily, weekly, monthly, yearly or never; changefreq ignored, URL kept", v)
		}
	}
	if v, _ := p.prio.value(true); len(v) > 0 || p.prio.over {
		if f, ok := parsePriority(v); ok && !p.prio.over {
			e.Priority = f
		} else {
			p.warnf(RulePriority, shown(), 0, "%q is not a number from 0.0 to 1.0; priority 0.5 used, URL kept", v)
		}
	}
	return lastmod
}

// changefreq returns the valid value v names, in any case, or "".
func changefreq(v []byte) string {
	for _, c := range changefreqs {
		if bytes.EqualFold(v, []byte(c)) {
			return c
		}
	}
	return ""
}

// parsePriority parses a priority: a number from 0.0 to 1.0.
func parsePriority(v []byte) (float64, bool) {
	// The usual "0.8" or "1.0" without strconv: digits, a point, at most
	// five decimals, divided exactly as ParseFloat would round them.
	whole, frac, scale, i := 0, 0, 1, 0
	for ; i < len(v) && '0' <= v[i] && v[i] <= '9' && i < 3; i++ {
		whole = whole*10 + int(v[i]-'0')
	}
	simple := i > 0 || len(v) > 1
	if i < len(v) && v[i] == '.' {
		for i++; i < len(v) && '0' <= v[i] && v[i] <= '9' && scale < 100_000; i++ {
			frac, scale = frac*10+int(v[i]-'0'), scale*10
		}
	}
	var f float64
	if simple && i == len(v) {
		f = float64(whole*scale+frac) / float64(scale)
	} else {
		var err error
		if f, err = strconv.ParseFloat(string(v), 64); err != nil {
			return 0, false
		}
	}
	return f, f >= 0 && f <= 1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimLeftSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func trimSpace(b []byte) []byte {
	b = trimLeftSpace(b)
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// cp1252 maps the bytes 0x80 to 0x9F of Windows-1252 (the superset of
// ISO-8859-1 that pages declared as ISO-8859-1 use); the other bytes map
// to the code point of the same value.
var cp1252 = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8d, 'Ž', 0x8f,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9d, 'ž', 'Ÿ',
}

// fromWindows1252 converts b, which is not valid UTF-8, from Windows-1252:
// a file that declared a single-byte encoding and used it.
func fromWindows1252(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		switch {
		case c < 0x80:
			out = append(out, c)
		case c < 0xa0:
			out = utf8.AppendRune(out, cp1252[c-0x80])
		default:
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return out
}
