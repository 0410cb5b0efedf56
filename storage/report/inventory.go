package report

import (
	"encoding/json"
	"io"
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
}

// The facts of a page kept as bits.
const (
	fRecord      uint16 = 1 << iota // the URL has a record (not only named by one)
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
)

// page is what the report keeps of one URL: its last record, bar the
// facts a 304 revisit carries over from the answer before it.
type page struct {
	status     int32 // the current record's
	effStatus  int32 // for the page tables: a 304's earlier answer's status
	linkDepth  int32 // -1 when absent
	flags      uint16
	final      uint32 // 1 + id of final_url; 0 for none
	bytes      int64
	durationMS int64
	chain      []uint32 // ids of redirect_chain
	errText    string
	title      string
	descr      string
	canonical  string
}

func (p *page) has(f uint16) bool { return p.flags&f != 0 }

// crawl is the inventory read: the URLs interned to ids, and each one's page.
type crawl struct {
	ids     map[string]uint32 // a URL as written, and its canonical key when that differs, to its id
	urls    []string          // id to URL
	pages   []page            // id to page
	skip    skipped
	sitemap bool // some record shows that a sitemap was read
}

func newCrawl() *crawl { return &crawl{ids: map[string]uint32{}} }

// intern returns the id of u, giving it one if it has none.
func (c *crawl) intern(u string) uint32 {
	if id, ok := c.ids[u]; ok {
		return id
	}
	id := uint32(len(c.urls))
	c.ids[u] = id
	c.urls = append(c.urls, u)
	c.pages = append(c.pages, page{linkDepth: -1})
	return id
}

// lookup finds the id of a URL as a link or a record names it: as
// written, without its fragment, or by its canonical key (the identity
// the crawler gives URLs, see the README's "Each URL once").
func (c *crawl) lookup(u string) (uint32, bool) {
	if id, ok := c.ids[u]; ok {
		return id, true
	}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		if id, ok := c.ids[u[:i]]; ok {
			return id, true
		}
	}
	if k, err := frontier.Canonicalize(u, 1<<20); err == nil {
		id, ok := c.ids[k.Key]
		return id, ok
	}
	return 0, false
}

// readInventory reads the JSON Lines inventory r into c, each record
// over the earlier ones of its URL. Malformed lines are counted in c.skip.
func (c *crawl) readInventory(r io.Reader) error {
	var rec record
	return eachLine(r, &c.skip, func(line []byte, no int) {
		rec = record{}
		if err := json.Unmarshal(line, &rec); err != nil || rec.URL == "" {
			c.skip.add(no)
			return
		}
		c.apply(&rec)
	})
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
		status: int32(rec.Status), effStatus: int32(rec.Status), linkDepth: -1,
		flags: fRecord, bytes: rec.Bytes, durationMS: rec.DurationMS, errText: rec.Error,
		title: rec.Title, descr: rec.Description, canonical: rec.Canonical,
	}
	if rec.LinkDepth != nil {
		p.linkDepth = int32(*rec.LinkDepth)
	}
	set := func(f uint16, on bool) {
		if on {
			p.flags |= f
		}
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
	set(fDisallowed, rec.Robots == "disallowed")
	set(fOutOfScope, rec.Status == 0 && strings.HasPrefix(rec.Error, "out of scope"))
	set(fNetError, rec.Status == 0 && rec.Error != "" && rec.Robots != "disallowed" && !refused(rec.Error))
	set(fLoopError, strings.Contains(rec.Error, "redirect loop"))
	set(fViaLinks, rec.LinkDepth != nil || rec.FoundVia == "seed" || rec.FoundVia == "link" || prev.has(fViaLinks))
	set(fViaSitemap, rec.FoundVia == "sitemap" || prev.has(fViaSitemap))
	if rec.InSitemap || rec.FoundVia == "sitemap" {
		c.sitemap = true
	}
	if rec.NotModified && rec.Status == 304 && prev.has(fRecord) {
		// Unchanged since the answer before: that answer's facts
		// stand, and its status is the page's for the tables.
		p.flags |= fNotModified | prev.flags&(fHTML|fNoindex|fNofollow)
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
	c.pages[id] = p
}

func refused(errText string) bool {
	for _, r := range refusals {
		if strings.HasPrefix(errText, r) {
			return true
		}
	}
	return false
}

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
		if _, taken := c.ids[k.Key]; !taken {
			c.ids[k.Key] = uint32(id)
		}
	}
}
