package report

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/politecrawl/crawler/frontier"
)

// record is the part of a storage.Record the report reads: decoding no
// more (no times, no hreflang) makes a million lines quicker to read.
type record struct {
	URL           string   `json:"url"`
	Status        int      `json:"status"`
	FinalURL      string   `json:"final_url"`
	ContentType   string   `json:"content_type"`
	Bytes         int64    `json:"bytes"`
	DurationMS    int64    `json:"duration_ms"`
	FoundVia      string   `json:"found_via"`
	Robots        string   `json:"robots"`
	InSitemap     bool     `json:"in_sitemap"`
	NotModified   bool     `json:"not_modified"`
	Error         string   `json:"error"`
	RedirectChain []string `json:"redirect_chain"`
	LinkDepth     *int     `json:"link_depth"`
	External      bool     `json:"external"`
	Title         string   `json:"title"`
	Description   string   `json:"description"`
	Canonical     string   `json:"canonical"`
	MetaRobots    []string `json:"meta_robots"`
	LinksOut      int      `json:"links_out"`
	H1            string   `json:"h1"`
	Hreflang      []struct {
		Lang string `json:"lang"`
		URL  string `json:"url"`
	} `json:"hreflang"`
	CanonicalConflict string `json:"canonical_conflict"`
	WordCount         int32  `json:"word_count"`
	ContentHash       string `json:"content_hash"`
	SimHash           string `json:"simhash"`
	Lang              string `json:"lang"`
	H1Count           int    `json:"h1_count"`
	ImgNoAlt          int    `json:"img_no_alt"`
	TTFBMS            *int64 `json:"ttfb_ms"`
	HSTS              bool   `json:"hsts"`

	Extracted map[string]any `json:"extracted"`
}

// The facts of a page kept as bits.
const (
	fRecord      uint32 = 1 << iota // the URL has a record (not only named by one)
	fExternal                       // of an out-of-scope host, asked by check_external
	fHTML                           // an HTML body
	fInSitemap                      // a sitemap lists it
	fNoindex                        // meta_robots: noindex or none
	fNofollow                       // meta_robots: nofollow or none
	fNotModified                    // the current record is a 304 revisit
	fDisallowed                     // refused by robots.txt
	fOutOfScope                     // refused by scope
	fNetError                       // no response, for want of one
	fLoopError                      // the engine said "redirect loop"
	fViaLinks                       // reached by following links from a seed (link_depth, or found_via)
	fViaSitemap                     // found in a sitemap
	fCanonSelf                      // the canonical is the URL as written (canonical is then "", to save memory)
	fH1                             // an <h1> with text
	fFacts                          // the body's facts were recorded (content_hash): the rules on them may judge
	fLang                           // <html lang>
	fImgNoAlt                       // an <img> without alt
	fH1Multi                        // more than one <h1>
	fHSTS                           // an https answer with Strict-Transport-Security
)

// factFlags are the flags of the body's facts, which a 304 carries over.
const factFlags = fFacts | fLang | fImgNoAlt | fH1Multi | fHSTS

// page is what the report keeps of one URL: its last record, bar the
// facts a 304 revisit carries over from the answer before it.
type page struct {
	status     int32 // the current record's
	effStatus  int32 // for the page tables: a 304's earlier answer's status
	linkDepth  int32 // -1 when absent
	flags      uint32
	final      uint32 // 1 + id of final_url; 0 for none
	bytes      int64
	durationMS int64
	chain      []uint32 // ids of redirect_chain
	words      int32    // word_count
	ttfb       int32    // ttfb_ms; -1 when absent
	content    uint64   // content_hash
	sim        uint64   // simhash
	errText    string
	title      string
	descr      string
	canonical  string // "" when none, or fCanonSelf
}

func (p *page) has(f uint32) bool { return p.flags&f != 0 }

// crawl is the inventory read: the URLs interned to ids, and each one's page.
type crawl struct {
	ids     index             // a URL as written to its id
	aliases map[string]uint32 // a recorded URL's canonical key, when it differs from the URL, to its id
	urls    []string          // id to URL
	pages   []page            // id to page
	sorted  []uint32          // the ids in URL order; see order
	rank    []uint32          // id to its place in URL order
	skip    skipped
	sitemap bool     // some record shows that a sitemap was read
	sites   []string // origins of the seeds, at most maxSites

	// Facts few pages have, kept beside pages rather than in each.
	hreflang map[uint32][]uint32       // a page's hreflang targets
	badLang  map[uint32]string         // a page's first hreflang lang that is no language tag
	conflict map[uint32]string         // a page's canonical that conflicts with canonical
	extract  map[uint32]map[string]any // a page's custom extractions
}

func newCrawl() *crawl {
	return &crawl{ids: newIndex(), aliases: map[string]uint32{},
		hreflang: map[uint32][]uint32{}, badLang: map[uint32]string{}, conflict: map[uint32]string{},
		extract: map[uint32]map[string]any{}}
}

// id returns the id of u as written.
func (c *crawl) id(u string) (uint32, bool) { return c.ids.find(c.urls, u) }

// intern returns the id of u, giving it one if it has none.
func (c *crawl) intern(u string) uint32 {
	if id, ok := c.ids.findExact(c.urls, u); ok {
		return id
	}
	id := uint32(len(c.urls))
	c.urls = append(c.urls, u)
	c.ids.add(c.urls, id)
	c.pages = append(c.pages, page{linkDepth: -1, ttfb: -1})
	return id
}

// lookup finds the id of a URL as a link or a record names it: as
// written, without its fragment, or by its canonical key (the identity
// the crawler gives URLs, see the README's "Each URL once").
func (c *crawl) lookup(u string) (uint32, bool) {
	if id, ok := c.id(u); ok {
		return id, true
	}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		if id, ok := c.id(u[:i]); ok {
			return id, true
		}
	}
	k, err := frontier.Canonicalize(u, 1<<20)
	if err != nil {
		return 0, false
	}
	if id, ok := c.id(k.Key); ok {
		return id, true
	}
	id, ok := c.aliases[k.Key]
	return id, ok
}

// readInventory reads the JSON Lines inventory r into c, each record
// over the earlier ones of its URL. Malformed lines are counted in c.skip.
// Decoding, most of the work, is done by the pipeline's goroutines; one
// more applies the records in the order of the file.
func (c *crawl) readInventory(r io.Reader) error {
	type decoded struct {
		seq  int
		recs []record
	}
	done := make(chan decoded, linkWorkers)
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		next, held := 0, map[int][]record{}
		for d := range done {
			held[d.seq] = d.recs
			for recs, ok := held[next]; ok; recs, ok = held[next] {
				delete(held, next)
				for i := range recs {
					c.apply(&recs[i])
				}
				next++
			}
		}
	}()
	var skips [linkWorkers]skipped
	err := pipeline(r, &c.skip, func(w int, ch chunk) {
		var recs []record
		for no, line := range ch.lines {
			var rec record
			if len(line) > maxLine || json.Unmarshal(line, &rec) != nil || rec.URL == "" {
				skips[w].add(no)
				continue
			}
			recs = append(recs, rec)
		}
		done <- decoded{ch.seq, recs}
	})
	close(done)
	<-applied
	for _, s := range skips {
		c.skip.merge(s)
	}
	return err
}

// refusals are the starts of the errors the engine writes for a URL it
// did not ask for (see visit.go, admit.go, dispatch.go): anything else
// with no status is a network error.
var refusals = []string{
	"out of scope",
	"disallowed by robots.txt",
	"not fetched",
	"over the per-host page budget",
	"fetched already",
	"robots.txt unavailable",
}

// apply makes rec the current state of its URL.
func (c *crawl) apply(rec *record) {
	id := c.intern(rec.URL)
	prev := c.pages[id]
	p := page{
		status: int32(rec.Status), effStatus: int32(rec.Status), linkDepth: -1, ttfb: -1,
		flags: fRecord, bytes: rec.Bytes, durationMS: rec.DurationMS, errText: rec.Error,
		title: rec.Title, descr: rec.Description, canonical: rec.Canonical,
	}
	if d := rec.LinkDepth; d != nil && *d >= 0 && *d <= maxLinkDepth {
		// Out of that range it is no link depth a crawl writes: it
		// would only make the depth table as long as it says.
		p.linkDepth = int32(*d)
	}
	set := func(f uint32, on bool) {
		if on {
			p.flags |= f
		}
	}
	if rec.Canonical == rec.URL {
		p.flags, p.canonical = p.flags|fCanonSelf, ""
	}
	set(fExternal, rec.External)
	set(fHTML, isHTML(rec))
	// A URL a sitemap listed stays listed: a later record of it made
	// without the sitemap in hand (another worker's, a resumed run's)
	// does not unlist it.
	set(fInSitemap, rec.InSitemap || prev.has(fInSitemap))
	for _, d := range rec.MetaRobots {
		set(fNoindex, d == "noindex" || d == "none")
		set(fNofollow, d == "nofollow" || d == "none")
	}
	set(fH1, strings.TrimSpace(rec.H1) != "")
	if h, err := strconv.ParseUint(rec.ContentHash, 16, 64); err == nil {
		p.flags |= fFacts
		p.content, p.words = h, max(rec.WordCount, 0)
		p.sim, _ = strconv.ParseUint(rec.SimHash, 16, 64)
		set(fLang, strings.TrimSpace(rec.Lang) != "")
		set(fImgNoAlt, rec.ImgNoAlt > 0)
		set(fH1Multi, rec.H1Count > 1)
		set(fHSTS, rec.HSTS)
	}
	if rec.TTFBMS != nil && *rec.TTFBMS >= 0 {
		p.ttfb = int32(min(*rec.TTFBMS, 1<<31-1))
	}
	set(fDisallowed, rec.Robots == "disallowed")
	set(fOutOfScope, rec.Status == 0 && strings.HasPrefix(rec.Error, "out of scope"))
	set(fNetError, rec.Status == 0 && rec.Error != "" && rec.Robots != "disallowed" && !refused(rec.Error))
	set(fLoopError, strings.Contains(rec.Error, "redirect loop"))
	set(fViaLinks, rec.LinkDepth != nil || rec.FoundVia == "seed" || rec.FoundVia == "link" || prev.has(fViaLinks))
	set(fViaSitemap, rec.FoundVia == "sitemap" || prev.has(fViaSitemap))
	if rec.InSitemap || rec.FoundVia == "sitemap" {
		c.sitemap = true
	}
	if rec.FoundVia == "seed" && !rec.External && len(c.sites) < maxSites {
		if u, err := frontier.Canonicalize(rec.URL, 1<<20); err == nil && !slices.Contains(c.sites, u.Origin) {
			c.sites = append(c.sites, u.Origin)
		}
	}
	if rec.NotModified && rec.Status == 304 && prev.has(fRecord) {
		// Unchanged since the answer before: that answer's facts
		// stand, and its status is the page's for the tables.
		p.flags |= fNotModified | prev.flags&(fHTML|fNoindex|fNofollow|fCanonSelf|fH1|factFlags)
		p.words, p.content, p.sim = prev.words, prev.content, prev.sim
		if p.ttfb < 0 {
			p.ttfb = prev.ttfb
		}
		p.effStatus, p.bytes = prev.effStatus, prev.bytes
		p.title, p.descr, p.canonical = prev.title, prev.descr, prev.canonical
		if p.linkDepth < 0 {
			p.linkDepth = prev.linkDepth
		}
	}
	if rec.FinalURL != "" && rec.FinalURL != rec.URL {
		p.final = c.intern(rec.FinalURL) + 1
	}
	if len(rec.RedirectChain) > 0 {
		p.chain = make([]uint32, len(rec.RedirectChain))
		for i, u := range rec.RedirectChain {
			p.chain[i] = c.intern(u)
		}
	}
	if !p.has(fNotModified) {
		c.sideFacts(id, rec)
	}
	c.pages[id] = p
}

// sideFacts keeps the facts of rec that few pages have (hreflang, a
// canonical conflict) beside the pages; a 304 revisit keeps the earlier ones.
func (c *crawl) sideFacts(id uint32, rec *record) {
	delete(c.hreflang, id)
	delete(c.badLang, id)
	delete(c.conflict, id)
	delete(c.extract, id)
	if len(rec.Extracted) > 0 {
		c.extract[id] = rec.Extracted
	}
	if len(rec.Hreflang) > 0 {
		ts := make([]uint32, 0, len(rec.Hreflang))
		for _, h := range rec.Hreflang {
			if !validLang(h.Lang) {
				if _, ok := c.badLang[id]; !ok {
					c.badLang[id] = h.Lang
				}
			}
			if h.URL != "" {
				ts = append(ts, c.intern(h.URL))
			}
		}
		c.hreflang[id] = ts
	}
	if rec.CanonicalConflict != "" {
		c.conflict[id] = rec.CanonicalConflict
	}
}

// canonicalOf is the canonical URL of id's page; "" for none.
func (c *crawl) canonicalOf(id uint32) string {
	if c.pages[id].has(fCanonSelf) {
		return c.urls[id]
	}
	return c.pages[id].canonical
}

func refused(errText string) bool {
	if why, ok := strings.CutPrefix(errText, robotsUnreachable); ok {
		// A host whose robots.txt could not be reached at all (no
		// answer) is broken as its pages are; one that answered 5xx or
		// 429 asked not to be crawled.
		return strings.Trim(why, "0123456789") == ""
	}
	for _, r := range refusals {
		if strings.HasPrefix(errText, r) {
			return true
		}
	}
	return false
}

// robotsUnreachable starts the error of a URL of a host given up on for
// its robots.txt: the status it answered, or the network error.
const robotsUnreachable = "robots.txt unavailable: "

// isHTML reports whether rec is of an HTML body: by its type, or, for a
// body that had none, by the page facts only HTML yields.
func isHTML(rec *record) bool {
	ct := strings.ToLower(rec.ContentType)
	if ct == "" {
		return rec.Title != "" || rec.LinksOut > 0 || rec.Canonical != "" || len(rec.MetaRobots) > 0
	}
	return strings.Contains(ct, "text/html") || strings.Contains(ct, "application/xhtml+xml")
}

// addAliases lets lookup find each recorded URL by its canonical key too,
// for links written in another form of it.
func (c *crawl) addAliases() {
	n := len(c.urls)
	for id := 0; id < n; id++ {
		if !c.pages[id].has(fRecord) {
			continue
		}
		k, err := frontier.Canonicalize(c.urls[id], 1<<20)
		if err != nil || k.Key == c.urls[id] {
			continue
		}
		if _, taken := c.id(k.Key); !taken {
			c.aliases[k.Key] = uint32(id)
		}
	}
}
