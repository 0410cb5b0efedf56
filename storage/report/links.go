package report

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
)

// linkChunk is how much of the link graph one worker parses at a time.
const linkChunk = 1 << 20

// linkWorkers is how many goroutines parse the link graph: reading it is
// the report's longest step, and the machines it runs on have two cores
// or more.
const linkWorkers = 2

// bitset is a set of URL ids.
type bitset []uint64

func newBitset(n int) bitset        { return make(bitset, (n+63)/64) }
func (b bitset) set(id uint32)      { b[id/64] |= 1 << (id % 64) }
func (b bitset) has(id uint32) bool { return b[id/64]&(1<<(id%64)) != 0 }
func (b bitset) clear(id uint32)    { b[id/64] &^= 1 << (id % 64) }
func (b bitset) or(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

// sameURL reports whether a link from from to to is to its own page: to
// is from, but for a fragment. (A link to another form of the same URL
// is found by toItself, which looks from up, for the links it matters to.)
func sameURL(from, to string) bool {
	if i := strings.IndexByte(to, '#'); i >= 0 {
		to = to[:i]
	}
	return from == to
}

// graph is what the report keeps of the link graph: which URLs fetched
// pages link to, and the pages linking to each broken URL.
type graph struct {
	linked  bitset
	inlinks map[uint32][]Inlink // by the broken URL's id, sorted by from
	skip    skipped

	// For the rules: broken URLs that a link (not a canonical, an
	// hreflang or a redirect) points at; URLs that redirect and an a
	// link points at; https pages with a requisite over http, and the
	// least such requisite.
	brokenLinked bitset
	toRedirect   bitset
	mixed        map[uint32]string
	fragPairs    []fragKey         // sorted, each once
	fragTexts    map[uint64]string // by hash
	edges        []*edgeList       // each worker's
}

// inKey is a broken URL's id and a page linking to it.
type inKey struct {
	to   uint32
	from string
}

// inVal is the anchor kept for an inKey: the first non-empty one, by line.
type inVal struct {
	anchor string
	line   int
}

// linkWorker parses chunks of the link graph; the crawl it looks URLs up
// in is only read.
type linkWorker struct {
	c      *crawl
	broken bitset
	linked bitset
	in     map[inKey]inVal
	skip   skipped

	// The 200 HTML pages, those with the body's facts, and the crawl's
	// URLs that redirect: bits, read for every line, rather than pages.
	ok, okFacts, redirecting bitset

	brokenLinked, toRedirect bitset
	mixed                    map[uint32]string
	fragPairs                []fragKey         // the (page, fragment) pairs links ask for
	fragTexts                map[uint64]string // a fragment's least spelling, by its hash: the same whichever worker reads which line
	edges                    edgeList          // a and area links between pages, for the link score
	raw                      rawLink
	l                        link

	// The page of the last line whose target a sitemap lists, and its
	// id: a page's lines come together, so one lookup serves them all.
	from    string // aliases fromBuf
	fromBuf []byte
	fromID  uint32
	fromOK  bool
}

// chunk is whole lines of the link graph, the first numbered first.
type chunk struct {
	buf   []byte
	first int // the number of its first line
	seq   int // its place among the chunks, from 0
}

// lines yields the chunk's lines that are not blank, white space trimmed,
// each with its number.
func (ch chunk) lines(yield func(no int, line []byte) bool) {
	no := ch.first
	for rest := ch.buf; len(rest) > 0; no++ {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 && !yield(no, line) {
			return
		}
	}
}

func (w *linkWorker) parse(ch chunk) {
	for no, line := range ch.lines {
		if len(line) > maxLine || !parseLink(line, &w.raw, &w.l) {
			w.skip.add(no)
			continue
		}
		w.link(no)
	}
}

// link takes in the line just parsed.
func (w *linkWorker) link(no int) {
	w.mixedContent()
	to, ok := w.c.lookup(w.l.to)
	if !ok {
		return // a URL the crawl has no record of: nothing to say of it
	}
	if !sameURL(w.l.from, w.l.to) && !w.toItself(to) {
		w.linked.set(to)
	}
	w.judged(to)
	w.wantFragment(to)
	if (w.l.kind == "a" || w.l.kind == "area") && w.ok.has(to) {
		if w.l.from != w.from {
			w.setFrom()
		}
		if w.fromOK && w.fromID != to {
			w.edges.add(w.fromID, to)
		}
	}
	if !w.broken.has(to) {
		return
	}
	// Lines come in order, so the first non-empty anchor is kept.
	k := inKey{to: to, from: w.l.from}
	v, seen := w.in[k]
	if seen && v.anchor != "" {
		return
	}
	anchor := anchorOf(&w.raw, &w.l)
	if seen && anchor == "" {
		return
	}
	// k.from points into the chunk, which is reused: the map keeps a
	// copy, and an assignment to an entry it has replaces its key too.
	k.from = strings.Clone(k.from)
	w.in[k] = inVal{anchor: anchor, line: no}
}

// judged notes what the rules ask of the line just parsed, to the URL to.
func (w *linkWorker) judged(to uint32) {
	kind := w.l.kind
	if w.broken.has(to) && isLinkKind(kind) {
		w.brokenLinked.set(to)
	}
	if kind == "a" && w.redirecting.has(to) {
		w.toRedirect.set(to)
	}
}

// mixedContent notes the line just parsed when it is a requisite over
// http of an https page, whether or not the crawl has a record of it.
func (w *linkWorker) mixedContent() {
	if !strings.HasPrefix(w.l.to, "http:") || !strings.HasPrefix(w.l.from, "https:") || !isRequisite(w.l.kind, w.l.rel) {
		return
	}
	if w.l.from != w.from {
		w.setFrom()
	}
	if old, ok := w.mixed[w.fromID]; w.fromOK && (!ok || w.l.to < old) {
		w.mixed[w.fromID] = strings.Clone(w.l.to)
	}
}

// isLinkKind reports whether a link graph kind is one of the README's
// "links" for the rules: not a canonical, an hreflang or a redirect.
func isLinkKind(kind string) bool {
	switch kind {
	case "a", "area", "frame", "iframe", "img", "script", "css", "link", "meta-refresh":
		return true
	}
	return false
}

// isRequisite reports whether a link graph line is of a page requisite
// (the README's "Whole sites"): an image, a script, CSS, or a <link> that
// a browser loads.
func isRequisite(kind, rel string) bool {
	switch kind {
	case "img", "script", "css":
		return true
	case "link":
		for _, r := range strings.Fields(strings.ToLower(rel)) {
			switch r {
			case "stylesheet", "icon", "preload", "modulepreload", "manifest":
				return true
			}
		}
	}
	return false
}

// setFrom looks up the page of the line just parsed, kept for the lines
// after it (a page's lines come together). The page's URL is copied into
// a buffer of the worker's, not a new string: a link graph whose lines
// are not grouped by page would otherwise allocate a string per line.
func (w *linkWorker) setFrom() {
	w.fromBuf = append(w.fromBuf[:0], w.l.from...)
	w.from = unsafeString(w.fromBuf)
	w.fromID, w.fromOK = w.c.lookup(w.from)
}

// toItself reports whether the line just parsed, to the URL to, is its
// page's link to another form of its own URL (the README: "a page's link
// to itself does not count"; a URL is its normal form). Only orphans ask
// whether a URL is linked, so only links to URLs a sitemap lists are
// looked at.
func (w *linkWorker) toItself(to uint32) bool {
	if !w.c.pages[to].has(fInSitemap) {
		return false
	}
	if w.l.from != w.from {
		w.setFrom()
	}
	return w.fromOK && w.fromID == to
}

// better reports whether v is the anchor to keep over old: a non-empty
// one over an empty one, else the one of the earlier line.
func (v inVal) better(old inVal) bool {
	if (v.anchor == "") != (old.anchor == "") {
		return v.anchor != ""
	}
	return v.line < old.line
}

// readLinks streams the link graph r through linkWorkers parsers, each
// into sets of its own that are merged at the end. broken is the ids
// whose inlinks are kept.
func (c *crawl) readLinks(r io.Reader, broken bitset) (*graph, error) {
	ok, okFacts, redirecting := newBitset(len(c.urls)), newBitset(len(c.urls)), newBitset(len(c.urls))
	for id := range c.pages {
		p := &c.pages[id]
		if p.htmlOK() {
			ok.set(uint32(id))
			if p.has(fFacts) {
				okFacts.set(uint32(id))
			}
		}
		if p.own() && p.redirects() {
			redirecting.set(uint32(id))
		}
	}
	workers := make([]*linkWorker, linkWorkers)
	for i := range workers {
		workers[i] = &linkWorker{c: c, broken: broken, linked: newBitset(len(c.urls)), in: map[inKey]inVal{},
			brokenLinked: newBitset(len(c.urls)), toRedirect: newBitset(len(c.urls)), mixed: map[uint32]string{},
			fragTexts: map[uint64]string{}, ok: ok, okFacts: okFacts, redirecting: redirecting}
	}
	g := &graph{}
	if err := pipeline(r, &g.skip, func(w int, ch chunk) { workers[w].parse(ch) }); err != nil {
		return nil, err
	}
	g.linked = workers[0].linked
	g.brokenLinked, g.toRedirect, g.mixed = workers[0].brokenLinked, workers[0].toRedirect, workers[0].mixed
	g.fragPairs, g.fragTexts = workers[0].fragPairs, workers[0].fragTexts
	all := workers[0].in
	for _, w := range workers[1:] {
		g.linked.or(w.linked)
		g.brokenLinked.or(w.brokenLinked)
		g.toRedirect.or(w.toRedirect)
		g.fragPairs = append(g.fragPairs, w.fragPairs...)
		for h, f := range w.fragTexts {
			if old, ok := g.fragTexts[h]; !ok || f < old {
				g.fragTexts[h] = f
			}
		}
		for id, u := range w.mixed {
			if old, ok := g.mixed[id]; !ok || u < old {
				g.mixed[id] = u
			}
		}
		for k, v := range w.in {
			if old, ok := all[k]; !ok || v.better(old) {
				all[k] = v
			}
		}
	}
	for _, w := range workers {
		g.skip.merge(w.skip)
		g.edges = append(g.edges, &w.edges)
	}
	g.fragPairs = sortFragPairs(g.fragPairs)
	g.inlinks = map[uint32][]Inlink{}
	for k, v := range all {
		g.inlinks[k.to] = append(g.inlinks[k.to], Inlink{From: k.from, Anchor: v.anchor})
	}
	return g, nil
}

// pipeline reads r in chunks of whole lines, numbered in order, and has
// linkWorkers goroutines run parse on them, each chunk once, the worker's
// number (0 to linkWorkers-1) given. It returns when all are parsed.
func pipeline(r io.Reader, skip *skipped, parse func(worker int, ch chunk)) error {
	work := make(chan chunk, linkWorkers)
	free := make(chan []byte, 2*linkWorkers)
	var wg sync.WaitGroup
	for w := range linkWorkers {
		wg.Go(func() {
			for ch := range work {
				parse(w, ch)
				select {
				case free <- ch.buf[:0]:
				default:
				}
			}
		})
	}
	err := splitChunks(r, free, work, skip)
	close(work)
	wg.Wait()
	return err
}

// splitChunks reads r into chunks of whole lines for work, taking buffers
// from free when it has some. A line longer than maxLine is skipped (and
// counted in skip) without being held whole.
func splitChunks(r io.Reader, free chan []byte, work chan<- chunk, skip *skipped) error {
	var carry []byte
	no, seq, eof, discarding := 1, 0, false, false
	for !eof {
		var buf []byte
		select {
		case buf = <-free:
		default:
			buf = make([]byte, 0, linkChunk)
		}
		if need := len(carry) + linkChunk/2; cap(buf) < need {
			buf = make([]byte, 0, need+linkChunk/2)
		}
		buf = append(buf[:0], carry...)
		for len(buf) < cap(buf) && !eof {
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			switch {
			case errors.Is(err, io.EOF):
				eof = true
			case err != nil:
				return err
			}
		}
		if discarding {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				carry = carry[:0]
				continue
			}
			buf, discarding = buf[:copy(buf, buf[i+1:])], false
			no++
		}
		end := bytes.LastIndexByte(buf, '\n') + 1
		if eof {
			end = len(buf) // the last line, with or without its newline
		}
		if end == 0 {
			if len(buf) > maxLine {
				skip.add(no)
				discarding, carry = true, carry[:0]
			} else {
				carry = append(carry[:0], buf...)
			}
			continue
		}
		carry = append(carry[:0], buf[end:]...)
		work <- chunk{buf: buf[:end], first: no, seq: seq}
		seq++
		no += bytes.Count(buf[:end], []byte{'\n'})
	}
	return nil
}
