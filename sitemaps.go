package crawler

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/sitemap"
	"github.com/politecrawl/crawler/storage"
)

// seed queues the configured seeds and sitemaps. Running it again on the
// same state adds nothing new: the frontier has seen them.
func (c *Crawler) seed() error {
	items := c.seedItems()
	c.dueWhenFound(items, c.now())
	n, err := c.queue("", items)
	if err != nil {
		return err
	}
	c.log.Info("seeded", "new", n, "given", len(items))
	c.wake()
	return nil
}

// seedItems are the seeds and sitemaps of the config in force, at depth 0.
// One whose host is out of scope is refused, with a record in the
// inventory.
func (c *Crawler) seedItems() []frontier.Item {
	cfg := c.conf()
	var items []frontier.Item
	add := func(raw string, kind frontier.Kind) {
		u, err := frontier.Canonicalize(raw, cfg.Scope.MaxURLLength)
		if err != nil {
			c.log.Warn("seed refused", "url", raw, "err", err)
			return
		}
		if why := cfg.scope.checkStart(u.Origin); why != "" {
			c.log.Warn("seed out of scope", "url", raw, "reason", why)
			c.refused(storage.Record{URL: u.Request, FoundVia: storage.FoundSeed}, u.Key, why)
			return
		}
		it := frontier.Item{URL: u, Kind: kind, Via: frontier.ViaSeed}
		if kind == frontier.KindSitemap {
			it.Priority, it.LinkDepth = sitemapPriority, frontier.NoLinkDepth
		}
		items = append(items, it)
	}
	for _, s := range cfg.Seeds {
		add(s, frontier.KindPage)
	}
	for _, s := range cfg.Sitemaps {
		add(s, frontier.KindSitemap)
	}
	return items
}

// sitemapPriority puts sitemaps first in their host's queue, so that the
// URLs they list are known at depth 0 before the host's links are fetched
// (see hosts.mustWait).
const sitemapPriority = 1

// listedPriority is the queue priority of a page a sitemap lists with
// priority p (the protocol's 0.5 when it gives none): 0.49 at most, below
// the linked pages' DefaultPriority and the steps below it by which the
// frontier orders them by link depth (frontier.Item.Priority), in the
// sitemap's order, so that a host's pages are fetched as links reach
// them, from the seeds out, and those only a sitemap lists come last. A
// link that reaches a listed page before it is fetched gives it its link
// depth and its place among the links (see frontier.Item.LinkDepth):
// fetched in that order, with the wait of hosts.mustWait, each page's
// link_depth is its shortest chain of links from a seed.
func listedPriority(p float64) float64 {
	// The sitemap package gives an entry without one the protocol's 0.5.
	if p = p * 0.98 * frontier.DefaultPriority; p <= 0 {
		return -1 // the lowest
	}
	return p
}

// seedSitemaps queues the Sitemap: lines of origin's robots.txt that are in
// scope, as sitemaps found at depth 0.
func (c *Crawler) seedSitemaps(origin string, urls []string) {
	base, err := frontier.Canonicalize(origin+"/robots.txt", 0)
	if err != nil {
		return
	}
	var items []frontier.Item
	for _, raw := range urls {
		// Sitemap: lines should be absolute; a relative one is resolved
		// against robots.txt rather than dropped.
		u, err := frontier.Resolve(base, raw, c.conf().Scope.MaxURLLength)
		if err != nil {
			c.log.Warn("sitemap of robots.txt not read", "sitemap", raw, "err", err)
			c.obs.reject(rejectReason(err))
			continue
		}
		// A sitemap is read whatever scope.include and exclude say, as a
		// configured one is: they judge the pages it lists.
		if why := c.conf().scope.checkStart(u.Origin); why != "" {
			c.log.Warn("sitemap of robots.txt not read", "sitemap", u.Request, "reason", why)
			c.obs.reject(why)
			continue
		}
		items = append(items, frontier.Item{
			URL: u, Kind: frontier.KindSitemap, Via: frontier.ViaSitemap,
			Referrer: origin + "/robots.txt", Priority: sitemapPriority, LinkDepth: frontier.NoLinkDepth,
		})
	}
	c.dueWhenFound(items, c.now())
	// The host's own sitemaps are added apart, to know whether any is
	// new: its pages wait for them (see hosts.firstSitemaps).
	own, others := splitOrigin(items, origin)
	for _, part := range [][]frontier.Item{own, others} {
		if len(part) == 0 {
			continue
		}
		n, err := c.queue(origin, part)
		if errors.Is(err, errNotOurs) {
			return // the host's new owner reads its robots.txt again
		}
		if err != nil {
			c.stop(fmt.Errorf("queue sitemaps: %w", err))
			return
		}
		if n > 0 && part[0].Origin == origin {
			c.hosts.sitemapsQueued(origin)
		}
	}
}

// splitOrigin splits items into those of origin and the others.
func splitOrigin(items []frontier.Item, origin string) (own, others []frontier.Item) {
	for _, it := range items {
		if it.Origin == origin {
			own = append(own, it)
		} else {
			others = append(others, it)
		}
	}
	return own, others
}

// readSitemap reads a fetched sitemap and returns what it lists: pages at
// depth 0, and, for an index that is not itself listed in an index, its
// child sitemaps (Google does not follow nested indexes, nor do we).
func (c *Crawler) readSitemap(l *frontier.Lease, resp *response, rec *storage.Record) []frontier.Item {
	lim := sitemap.Limits{
		MaxURLs:     c.conf().SitemapLimits.MaxURLs,
		MaxBytes:    int64(c.conf().SitemapLimits.MaxBytes),
		MaxChildren: c.conf().SitemapLimits.MaxChildren,
	}
	fromIndex := l.Via == frontier.ViaSitemap && l.Referrer != "" && !strings.HasSuffix(l.Referrer, "/robots.txt")
	var items []frontier.Item
	res, err := sitemap.Read(bytes.NewReader(resp.body), l.Request, lim, func(e sitemap.Entry) error {
		if e.Child && fromIndex {
			c.sitemapWarning(sitemap.Warning{Sitemap: l.Request, Rule: "nested_index", URL: e.Loc,
				Detail: "an index listed in an index is not followed"})
			return nil
		}
		u, err := frontier.Canonicalize(e.Loc, c.conf().Scope.MaxURLLength)
		if err != nil {
			c.obs.reject(rejectReason(err))
			return nil
		}
		check := c.conf().scope.check(u.Request, u.Origin, 0)
		if e.Child {
			check = c.conf().scope.checkStart(u.Origin) // an index's sitemaps are read as it is
		}
		if check != "" {
			c.refuse(l, u.Request, u.Key, linkSitemap, check)
			return nil
		}
		it := frontier.Item{URL: u, Via: frontier.ViaSitemap, Referrer: l.Request, LinkDepth: frontier.NoLinkDepth}
		if e.Child {
			it.Kind, it.Priority = frontier.KindSitemap, sitemapPriority
		} else {
			c.obs.sitemapURL()
			it.Priority, it.InSitemap = listedPriority(e.Priority), true
			if !e.Lastmod.IsZero() {
				it.Lastmod = e.Lastmod.UTC().Format(time.RFC3339)
			}
		}
		items = append(items, it)
		return nil
	}, c.sitemapWarning)
	if err != nil {
		rec.Error = "sitemap: " + err.Error()
	} else if res.Kind == sitemap.KindUnknown {
		rec.Error = "not a sitemap"
	}
	return items
}

func (c *Crawler) sitemapWarning(w sitemap.Warning) {
	c.obs.sitemapWarning(string(w.Rule))
	c.log.Warn("sitemap", "warning", w.String())
}
