package crawler

import (
	"errors"
	"math"
	"net/url"
	"strings"
	"sync"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
)

// admit turns the links of a page into frontier items: canonical, in scope,
// not nofollow, each once. What is refused is counted by reason, and URLs
// refused by scope get an inventory record so an audit sees them.
func (c *Crawler) admit(parent *frontier.Lease, links []link) []frontier.Item {
	// Not sized by len(links): a page links to each URL several times,
	// and most of its links are seen already.
	var items []frontier.Item
	seen := map[string]bool{}
	// Links to one URL share its *url.URL (see resolver): it is
	// canonicalised once.
	canons := map[*url.URL]canonical{}
	for _, ln := range links {
		if c.cfg.Daemon.Enabled && ln.kind != linkRedirect && ln.kind != linkRequisite && c.budget.reached() {
			// A daemon at max_pages keeps revisiting what it has, and
			// takes no new pages; a page's new requisite is no page.
			c.obs.reject("max-pages")
			continue
		}
		if ln.nofollow && c.conf().Links.HonorNofollow {
			c.obs.reject("nofollow")
			continue
		}
		cn, ok := canons[ln.url]
		if !ok {
			ln.url.Fragment, ln.url.RawFragment = "", ""
			cn.raw = ln.url.String()
			cn.url, cn.err = frontier.Canonicalize(cn.raw, c.conf().Scope.MaxURLLength)
			canons[ln.url] = cn
		}
		raw, canon, err := cn.raw, cn.url, cn.err
		if err != nil {
			c.refuse(parent, raw, raw, ln.kind, rejectReason(err))
			continue
		}
		if seen[canon.Key] || (strings.HasSuffix(canon.Key, "/robots.txt") && ln.kind != linkRedirect) {
			continue // robots.txt is fetched as robots.txt, not as a page
		}
		seen[canon.Key] = true
		depth, via, ld := parent.Depth+1, frontier.ViaLink, linkDepthOf(parent, ln.kind)
		switch ln.kind {
		case linkRedirect:
			depth, via = parent.Depth, frontier.ViaRedirect
		case linkRequisite:
			// A page's images, scripts and stylesheets are part of it, not
			// a hop away: they are at its depth, so a mirror's pages at
			// max_depth are whole (as wget -p has them) and no URL is
			// fetched deeper than max_depth.
			depth = parent.Depth
		}
		// A page's requisite, and where a requisite redirects, is one
		// too: fetched or checked for the page, never crawled from.
		requisite := ln.kind == linkRequisite || (ln.kind == linkRedirect && parent.Requisite)
		why := c.conf().scope.check(canon.Request, canon.Origin, depth)
		switch {
		case why != rejectHost:
		case requisite && c.requisiteWay(canon.Origin) != requisiteRefused,
			!requisite && c.conf().Scope.CheckExternal:
			// Of a host out of scope that scope.requisites allows, or
			// asked once whether it works, and followed no further.
			why = c.conf().scope.checkExternal(frontier.MustParse(canon.Request))
		}
		nest := requisiteNesting(parent, ln.kind)
		if why == "" && requisite && nest > maxRequisiteNesting {
			why = rejectNesting
		}
		if why != "" {
			// Recorded in its request form, as a fetched URL is: the
			// same URL written two ways (http://h and http://h/) is one
			// record.
			c.refuse(parent, canon.Request, canon.Key, ln.kind, why)
			continue
		}
		kind := frontier.KindPage
		if ln.kind == linkRedirect {
			kind = parent.Kind
		}
		it := frontier.Item{URL: canon, Depth: depth, Via: via, Referrer: parent.Request, Kind: kind,
			LinkDepth: ld, Requisite: requisite}
		if requisite {
			// Before its host's pages: a page's requisites come soon after
			// it, and max_pages, which stops the pages, leaves none behind.
			// One step lower per nesting below the page, which is how
			// requisiteNesting reads it back.
			it.Priority = 1 - float64(nest-1)/10000
		}
		items = append(items, it)
	}
	return items
}

// maxRequisiteNesting is how deep requisites are taken below their page: a
// page's stylesheet is 1, what it imports 2, a font that one loads 3. A
// requisite counts toward no page budget and is at its page's depth, so
// without it a stylesheet importing a new one without end (a trap) would
// be fetched for ever, whatever max_pages, max_pages_per_host and
// max_depth say.
const maxRequisiteNesting = 5

// requisiteNesting is the nesting below its page of a requisite found on
// parent by a link of kind (see maxRequisiteNesting); 0 when parent is
// no requisite. A requisite's own nesting is kept in its priority, one
// step of the frontier's scale (0.0001) below 1 per level (admit), so that
// it lasts across restarts and workers; a requisite whose priority is
// not one of those counts as a page's own.
func requisiteNesting(parent *frontier.Lease, kind linkKind) int {
	n := 0
	if parent.Requisite {
		n = 1
		if steps := int(math.Round((1 - parent.Priority) * 10000)); steps > 0 && steps < maxRequisiteNesting {
			n += steps
		}
	}
	if kind == linkRequisite {
		n++ // a redirect is at the nesting of what redirected
	}
	return n
}

// canonical is a link's URL as written, without its fragment, and its
// canonical form, or why it has none.
type canonical struct {
	raw string
	url frontier.URL
	err error
}

// linkDepthOf is the link depth of a URL the lease's page links to by a
// link of kind: one more than the page's, none for what a sitemap lists,
// and the page's own through a redirect (README, "Outputs").
func linkDepthOf(parent *frontier.Lease, kind linkKind) int {
	switch {
	case parent.LinkDepth < 0 || kind == linkSitemap:
		return frontier.NoLinkDepth
	case kind == linkRedirect:
		return parent.LinkDepth
	}
	return parent.LinkDepth + 1
}

// linkDepthField is a link depth as the inventory has it: left out when
// there is none.
func linkDepthField(ld int) *int {
	if ld < 0 {
		return nil
	}
	return &ld
}

func rejectReason(err error) string {
	var re *frontier.URLError
	if errors.As(err, &re) {
		return string(re.Reason)
	}
	return "invalid"
}

// refuse counts a URL kept out of the frontier and records it once (per
// run, within a bounded memory) in the inventory. key is its frontier key
// (http://h:80/ and http://h/ are one URL, recorded once), raw when it
// has none.
func (c *Crawler) refuse(parent *frontier.Lease, raw, key string, kind linkKind, why string) {
	depth, via := parent.Depth+1, storage.FoundLink
	switch {
	case kind == linkRedirect:
		depth, via = parent.Depth, storage.FoundRedirect
	case kind == linkRequisite:
		depth = parent.Depth
	case kind == linkSitemap:
		depth, via = 0, storage.FoundSitemap
	}
	c.refused(storage.Record{URL: raw, Depth: depth, FoundVia: via, Referrer: parent.Request,
		LinkDepth: linkDepthField(linkDepthOf(parent, kind))}, key, why)
}

// refused counts a URL kept out for why and gives it an inventory record,
// the first time this run; key is as refuse's.
//
// The record is held, not handed to the operating system at once: it
// goes with the next record written at once, at the latest with those of
// the visit that found it, before that URL is done (complete). A page of
// a docs site links to thousands of URLs of other hosts, and a write of
// their own was a write system call for each. A kill before the visit is
// done loses the record with the visit, which is made again, and the
// refusal with it (refusals are remembered only in memory).
func (c *Crawler) refused(rec storage.Record, key, why string) {
	c.obs.reject(why)
	if !c.refusals.first(key) {
		return
	}
	rec.FetchedAt, rec.Error = c.now(), "out of scope: "+why
	if err := c.out.inventoryHeld(rec); err != nil {
		c.writeFailed(&writeError{output: "output.urls", err: err})
	}
}

// maxRefusals bounds the set of refused URLs remembered so that each is
// recorded in the inventory once; past it the set starts again, and a URL
// may be recorded twice.
const maxRefusals = 100_000

// refusals remembers the URLs refused this run, within maxRefusals.
type refusals struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// first reports whether raw was not refused before.
func (r *refusals) first(raw string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[raw]; ok {
		return false
	}
	if r.seen == nil || len(r.seen) >= maxRefusals {
		r.seen = map[string]struct{}{}
	}
	r.seen[raw] = struct{}{}
	return true
}
