package crawler

import (
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
)

// revisitAt is when a URL completed at now is due again: never in an ad hoc
// crawl. In daemon mode every URL (pages, sitemaps, redirects, URLs robots.txt
// refused) is due daemon.recrawl after its visit; a page found unchanged
// visit after visit waits twice as long each time, up to
// daemon.max_interval, and one that changed goes back to daemon.recrawl.
func (c *Crawler) revisitAt(page *storage.Page, now time.Time) time.Time {
	if !c.conf().Daemon.Enabled {
		return time.Time{}
	}
	iv, most := c.conf().Daemon.Recrawl, c.conf().Daemon.RevisitMax()
	if page != nil {
		for i := 0; i < page.Unchanged && iv < most; i++ {
			iv *= 2
		}
	}
	return now.Add(min(iv, max(most, c.conf().Daemon.Recrawl)))
}

// dueWhenFound gives the URLs a daemon finds their turn in time: each new
// item is due at now, when it was found, and goes after the revisits due
// before it and before those due later. Left undelayed, it would wait
// behind every due revisit (the frontier hands those out first), and on a
// host that cannot keep up with its revisits a link found on a changed
// page, or the rest of a first pass longer than daemon.recrawl, would
// never be fetched. Sitemaps are due at a moment long past instead, so
// they still go first in their host's queue (see sitemapPriority). An ad
// hoc crawl has no revisits and keeps the frontier's order: priority, then
// first in first out.
func (c *Crawler) dueWhenFound(items []frontier.Item, now time.Time) {
	if !c.conf().Daemon.Enabled {
		return
	}
	for i := range items {
		switch {
		case !items[i].NotBefore.IsZero():
		case items[i].Kind == frontier.KindSitemap:
			items[i].NotBefore = time.Unix(1, 0)
		default:
			items[i].NotBefore = now
		}
	}
}
