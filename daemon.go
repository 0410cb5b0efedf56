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
func (c *Crawler) revisitAt(_ *frontier.Lease, _ storage.Record, page *storage.Page, now time.Time) time.Time {
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
