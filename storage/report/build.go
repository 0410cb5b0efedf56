package report

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/politecrawl/crawler/frontier"
)

// Names name the inputs in warnings; the zero value says "inventory",
// "link graph" and "previous inventory".
type Names struct {
	Inventory, Links, Previous string
}

// Build reads the inputs and makes the report. Malformed lines are
// skipped and said in Report.Warnings; an error means an input could not
// be read at all.
func Build(in Inputs, names Names) (*Report, error) {
	names.Inventory = cmp.Or(names.Inventory, "inventory")
	names.Links = cmp.Or(names.Links, "link graph")
	names.Previous = cmp.Or(names.Previous, "previous inventory")
	c := newCrawl()
	if err := c.readInventory(in.Inventory); err != nil {
		return nil, fmt.Errorf("read %s: %w", names.Inventory, err)
	}
	c.addAliases()
	rep := &Report{HasSitemap: c.sitemap, Sites: slices.Sorted(slices.Values(c.sites))}
	rep.warn(c.skip.warning(names.Inventory))

	j := newJudge(in.Options)
	broken := c.brokenSet(&j.opts)
	var g *graph
	if in.Links != nil {
		var err error
		if g, err = c.readLinks(in.Links, broken); err != nil {
			return nil, fmt.Errorf("read %s: %w", names.Links, err)
		}
		rep.HasLinks = true
		rep.warn(g.skip.warning(names.Links))
	} else {
		rep.warn("no link graph: the orphans, and the pages linking to broken URLs, are left out")
	}
	c.fill(rep, broken, g)
	if g != nil {
		// First: its edges, the largest of what the link graph left, are
		// freed before the findings are made.
		rep.Pages = c.linkScores(g.edges)
		g.edges = nil
	}
	if g != nil && len(g.fragPairs) > 0 && j.on("broken-fragment") {
		// The pages' anchors are read only now, for the pages that
		// links ask a fragment of: a second pass over the inventory.
		if sk, ok := in.Inventory.(io.Seeker); !ok {
			rep.warn("broken-fragment not judged: the inventory was not read from a file")
		} else if _, err := sk.Seek(0, io.SeekStart); err != nil {
			rep.warn("broken-fragment not judged: " + err.Error())
		} else if err := c.checkFragments(in.Inventory, g, j); err != nil {
			return nil, fmt.Errorf("read %s again: %w", names.Inventory, err)
		}
	}
	c.judgeAll(rep, j, broken, g)
	rep.Extracted = []Extracted{}
	for _, id := range c.order() {
		if x, ok := c.extract[id]; ok && c.pages[id].htmlOK() {
			rep.Extracted = append(rep.Extracted, Extracted{URL: c.urls[id], Values: x})
		}
	}

	if in.Previous != nil {
		old := newCrawl()
		if err := old.readInventory(in.Previous); err != nil {
			return nil, fmt.Errorf("read %s: %w", names.Previous, err)
		}
		old.addAliases()
		rep.warn(old.skip.warning(names.Previous))
		rep.Compare = compare(old, c)
	}
	return rep, nil
}

func (r *Report) warn(w string) {
	if w != "" {
		r.Warnings = append(r.Warnings, w)
	}
}

// own reports whether p is a URL of the crawl's own hosts with a record.
func (p *page) own() bool { return p.flags&(fRecord|fExternal) == fRecord }

// redirects reports whether p's answer is a redirect (a 304 is not).
func (p *page) redirects() bool {
	return p.has(fRecord) && p.status >= 300 && p.status <= 399 && p.status != 304
}

// htmlOK reports whether p is a 200 HTML page, a 304's earlier answer
// counting: the pages of titles, descriptions and depth.
func (p *page) htmlOK() bool { return p.own() && p.effStatus == 200 && p.has(fHTML) }

// maxHops bounds the following of final_url from record to record.
const maxHops = 64

// follow returns the end of the redirect chain starting at id, its hops,
// and whether it loops: redirect_chain when the record has one, else
// final_url followed from record to record.
func (c *crawl) follow(id uint32) (end uint32, hops int, loop bool) {
	p := &c.pages[id]
	if !p.redirects() {
		return id, 0, false
	}
	if len(p.chain) > 0 {
		seen := map[uint32]bool{id: true}
		for _, h := range p.chain {
			loop = loop || seen[h]
			seen[h] = true
		}
		return p.chain[len(p.chain)-1], len(p.chain), loop || p.has(fLoopError)
	}
	seen := []uint32{id}
	end = id
	for hops < maxHops {
		q := &c.pages[end]
		if !q.redirects() || q.final == 0 {
			break
		}
		end = q.final - 1
		hops++
		if slices.Contains(seen, end) {
			loop = true
			break
		}
		seen = append(seen, end)
	}
	return end, hops, loop || p.has(fLoopError)
}

// finalState is the status and error at the end of id's redirects, and
// whether there is one to speak of: a loop, or an end with no record,
// has none.
func (c *crawl) finalState(id uint32) (status int32, netErr bool, errText string, ok bool) {
	p := &c.pages[id]
	if !p.redirects() {
		return p.status, p.has(fNetError), p.errText, true
	}
	end, _, loop := c.follow(id)
	e := &c.pages[end]
	if loop || !e.has(fRecord) {
		return 0, false, "", false
	}
	return e.status, e.has(fNetError), cmp.Or(p.errText, e.errText), true
}

// brokenSet is the ids of broken URLs: a final status of 400 or more
// that the options do not accept, or no answer for want of one (not a
// refusal).
func (c *crawl) brokenSet(o *Options) bitset {
	b := newBitset(len(c.urls))
	for id := range c.pages {
		if !c.pages[id].has(fRecord) {
			continue
		}
		if st, netErr, _, ok := c.finalState(uint32(id)); ok && (st >= 400 && !o.accepted(st) || netErr) {
			b.set(uint32(id))
		}
	}
	return b
}

// canonicalIssue is what is wrong with id's canonical: "" for none (no
// canonical, or one to itself).
func (c *crawl) canonicalIssue(id uint32) string {
	p := &c.pages[id]
	if p.canonical == "" { // none, or the URL itself
		return ""
	}
	k, err := frontier.Canonicalize(p.canonical, 1<<20)
	if err != nil {
		return "not-http"
	}
	self, err := frontier.Canonicalize(c.urls[id], 1<<20)
	if err == nil && self.Key == k.Key {
		return ""
	}
	if err == nil && self.Origin != k.Origin {
		return "other-host"
	}
	if t, ok := c.lookup(p.canonical); ok && c.pages[t].has(fRecord) {
		end, _, loop := c.follow(t)
		if e := &c.pages[end]; loop || !e.has(fRecord) || e.effStatus != 200 {
			return "not-200"
		}
	}
	return "elsewhere"
}

// fill makes the tables of rep from the crawl, its broken URLs and the
// link graph (nil when there is none).
func (c *crawl) fill(rep *Report, broken bitset, g *graph) {
	linked := newBitset(len(c.urls))
	if g != nil {
		linked = g.linked
	}
	for id := range c.pages { // a redirect links to its hops
		if p := &c.pages[id]; p.redirects() {
			prev := uint32(id)
			for _, h := range p.chain {
				if h != prev { // a redirect to itself is no way in
					linked.set(h)
				}
				prev = h
			}
			if p.final != 0 {
				linked.set(p.final - 1)
			}
		}
	}
	rep.Broken, rep.Redirects = []Broken{}, []Redirect{}
	rep.SitemapIssues, rep.Canonicals = []SitemapIssue{}, []CanonicalIssue{}
	rep.Noindex, rep.Nofollow = []string{}, []string{}
	if g != nil {
		rep.Orphans = []string{}
	}
	if c.sitemap {
		rep.NotInSitemap = []string{}
	}
	var titled, described []uint32
	var slow, large top
	for _, id := range c.order() { // in URL order, so the lists are too
		p := &c.pages[id]
		if !p.has(fRecord) {
			continue
		}
		c.count(&rep.Overview, p)
		if broken.has(id) {
			st, _, errText, _ := c.finalState(id)
			b := Broken{URL: c.urls[id], Status: int(st), Error: errText}
			if g != nil {
				b.Inlinks = sortInlinks(g.inlinks[id])
			}
			rep.Broken = append(rep.Broken, b)
		}
		if !p.own() {
			continue
		}
		u := c.urls[id]
		if p.redirects() {
			end, hops, loop := c.follow(id)
			r := Redirect{URL: u, FinalURL: c.urls[end], Hops: hops, Loop: loop}
			if e := &c.pages[end]; e.has(fRecord) {
				r.FinalStatus = int(e.status)
			}
			rep.Redirects = append(rep.Redirects, r)
		}
		issue := c.canonicalIssue(id)
		if issue != "" {
			rep.Canonicals = append(rep.Canonicals, CanonicalIssue{URL: u, Canonical: p.canonical, Issue: issue})
		}
		if g != nil && p.has(fInSitemap) && !linked.has(id) {
			rep.Orphans = append(rep.Orphans, u)
		}
		if c.sitemap && p.htmlOK() && !p.has(fNoindex) && issue == "" && p.has(fViaLinks) && !p.has(fInSitemap) {
			rep.NotInSitemap = append(rep.NotInSitemap, u)
		}
		if p.has(fInSitemap) {
			if s := sitemapIssue(p, issue); s != "" {
				rep.SitemapIssues = append(rep.SitemapIssues, SitemapIssue{URL: u, Issue: s})
			}
		}
		if p.has(fNoindex) {
			rep.Noindex = append(rep.Noindex, u)
		}
		if p.has(fNofollow) {
			rep.Nofollow = append(rep.Nofollow, u)
		}
		if p.htmlOK() {
			titled = append(titled, id)
			described = append(described, id)
			if p.linkDepth >= 0 {
				for len(rep.Depth) <= int(p.linkDepth) {
					rep.Depth = append(rep.Depth, 0)
				}
				rep.Depth[p.linkDepth]++
			}
		}
		if p.status != 0 {
			slow.offer(id, p.durationMS, u)
			large.offer(id, p.bytes, u)
		}
	}
	rep.Titles = c.textCheck(titled, func(p *page) string { return p.title }, false)
	rep.Descriptions = c.textCheck(described, func(p *page) string { return p.descr }, true)
	for _, e := range slow.sorted() {
		rep.Slowest = append(rep.Slowest, Slow{URL: c.urls[e.id], DurationMS: e.v})
	}
	for _, e := range large.sorted() {
		rep.Largest = append(rep.Largest, Large{URL: c.urls[e.id], Bytes: e.v})
	}
	rep.Slowest, rep.Largest = orEmpty(rep.Slowest), orEmpty(rep.Largest)
	if rep.Depth == nil {
		rep.Depth = DepthCounts{}
	}
	sortLists(rep)
}

// count adds p to the overview.
func (c *crawl) count(o *Overview, p *page) {
	o.URLs++
	switch {
	case p.has(fDisallowed):
		o.Disallowed++
	case p.has(fOutOfScope):
		o.OutOfScope++
	}
	if p.status == 0 && (!p.has(fNetError) || strings.HasPrefix(p.errText, robotsUnreachable)) {
		// Not asked: refused, or of a host given up on before its
		// first page, its robots.txt having got no answer (broken all
		// the same, but never requested).
		return
	}
	o.Fetched++
	switch s := p.status; {
	case s == 0:
		o.ByStatus.Error++
	case s == 304:
		o.ByStatus.S304++
	case s >= 200 && s <= 299:
		o.ByStatus.S2xx++
	case s >= 300 && s <= 399:
		o.ByStatus.S3xx++
	case s >= 400 && s <= 499:
		o.ByStatus.S4xx++
	case s >= 500:
		o.ByStatus.S5xx++
	}
	if p.own() && p.effStatus >= 200 && p.effStatus <= 299 && p.has(fHTML) {
		o.PagesHTML++
	}
}

// sitemapIssue is the first issue of a URL a sitemap lists: disallowed,
// redirect, not-200, noindex, canonicalised; canonical is its
// canonicalIssue.
func sitemapIssue(p *page, canonical string) string {
	switch {
	case p.has(fDisallowed):
		return "disallowed"
	case p.redirects():
		return "redirect"
	case p.effStatus != 200:
		return "not-200"
	case p.has(fNoindex):
		return "noindex"
	case canonical != "":
		return "canonicalised"
	}
	return ""
}

// textCheck finds, among the pages ids, those without the text and the
// texts more than one has. The pages are sorted by a hash of their text,
// numbers rather than strings in memory all over the heap; only the pages
// of one hash are compared by text.
func (c *crawl) textCheck(ids []uint32, text func(*page) string, descr bool) TextCheck {
	tc := TextCheck{Missing: []string{}, Duplicates: []Duplicate{}}
	type hashed struct {
		h  uint64
		id uint32
	}
	seed := maphash.MakeSeed()
	hs := make([]hashed, 0, len(ids))
	for _, id := range ids {
		if t := text(&c.pages[id]); t == "" {
			tc.Missing = append(tc.Missing, c.urls[id])
		} else {
			hs = append(hs, hashed{maphash.String(seed, t), id})
		}
	}
	slices.SortFunc(hs, func(a, b hashed) int { return cmp.Compare(a.h, b.h) })
	var group []uint32
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j].h == hs[i].h {
			j++
		}
		if j-i > 1 {
			group = group[:0]
			for _, e := range hs[i:j] {
				group = append(group, e.id)
			}
			c.byURL(group)
			// Split the pages of one hash by their text, in URL order:
			// almost always one text, however many pages.
			byText := map[string][]uint32{}
			var texts []string
			for _, id := range group {
				t := text(&c.pages[id])
				if byText[t] == nil {
					texts = append(texts, t)
				}
				byText[t] = append(byText[t], id)
			}
			for _, t := range texts {
				if ids := byText[t]; len(ids) > 1 {
					d := Duplicate{URLs: make([]string, len(ids))}
					for k, id := range ids {
						d.URLs[k] = c.urls[id]
					}
					if descr {
						d.Description = t
					} else {
						d.Title = t
					}
					tc.Duplicates = append(tc.Duplicates, d)
				}
			}
		}
		i = j
	}
	slices.SortFunc(tc.Duplicates, func(a, b Duplicate) int { return cmp.Compare(a.URLs[0], b.URLs[0]) })
	return tc
}

// order returns every id in the order of their URLs, found once: each
// sort by URL after that (byURL) compares numbers.
func (c *crawl) order() []uint32 {
	if c.sorted == nil {
		c.sorted = make([]uint32, len(c.urls))
		for i := range c.sorted {
			c.sorted[i] = uint32(i)
		}
		slices.SortFunc(c.sorted, func(a, b uint32) int { return cmp.Compare(c.urls[a], c.urls[b]) })
		c.rank = make([]uint32, len(c.urls))
		for r, id := range c.sorted {
			c.rank[id] = uint32(r)
		}
	}
	return c.sorted
}

// byURL sorts ids by their URLs.
func (c *crawl) byURL(ids []uint32) {
	c.order()
	slices.SortFunc(ids, func(a, b uint32) int { return cmp.Compare(c.rank[a], c.rank[b]) })
}

// top keeps the TopN greatest values offered, ties to the lesser URL.
type top struct{ e []topEntry }

type topEntry struct {
	id  uint32
	v   int64
	url string
}

func (e topEntry) before(o topEntry) bool { return e.v > o.v || e.v == o.v && e.url < o.url }

func (t *top) offer(id uint32, v int64, url string) {
	e := topEntry{id, v, url}
	if len(t.e) == TopN && !e.before(t.e[TopN-1]) {
		return
	}
	i, _ := slices.BinarySearchFunc(t.e, e, func(a, b topEntry) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	t.e = slices.Insert(t.e, i, e)
	if len(t.e) > TopN {
		t.e = t.e[:TopN]
	}
}

// sorted is the entries by URL, as every list of the report is.
func (t *top) sorted() []topEntry {
	s := slices.Clone(t.e)
	slices.SortFunc(s, func(a, b topEntry) int { return cmp.Compare(a.url, b.url) })
	return s
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func sortInlinks(in []Inlink) []Inlink {
	in = orEmpty(in)
	slices.SortFunc(in, func(a, b Inlink) int { return cmp.Compare(a.From, b.From) })
	return in
}

// sortLists sorts every list of rep by URL.
func sortLists(rep *Report) {
	slices.SortFunc(rep.Broken, func(a, b Broken) int { return cmp.Compare(a.URL, b.URL) })
	slices.SortFunc(rep.Redirects, func(a, b Redirect) int { return cmp.Compare(a.URL, b.URL) })
	slices.SortFunc(rep.SitemapIssues, func(a, b SitemapIssue) int { return cmp.Compare(a.URL, b.URL) })
	slices.SortFunc(rep.Canonicals, func(a, b CanonicalIssue) int { return cmp.Compare(a.URL, b.URL) })
	for _, s := range [][]string{rep.Orphans, rep.NotInSitemap, rep.Noindex, rep.Nofollow, rep.Titles.Missing, rep.Descriptions.Missing} {
		slices.Sort(s)
	}
}

// itoa is strconv.Itoa for the formats.
func itoa[T int | int32 | int64](n T) string { return strconv.FormatInt(int64(n), 10) }
