package crawler

import (
	"fmt"
	"time"

	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/robots"
	"github.com/politecrawl/crawler/storage"
)

// saveRobots keeps origin's robots.txt state for the next run. A failure is
// logged: the next run fetches robots.txt again.
func (c *Crawler) saveRobots(origin string, st robots.State) {
	if err := c.state.Robots.Put(origin, st); err != nil {
		c.fail("save robots.txt state", err)
	}
}

// restoreHosts gives the gate and the robots cache what earlier runs knew of
// each host: Retry-After waits, parked hosts, robots.txt and its
// Crawl-delay.
func (c *Crawler) restoreHosts(now time.Time) error {
	for _, h := range c.front.Hosts() {
		if h.Wait.After(now) {
			c.gate.Wait(h.Origin, h.Wait, politeness.WhyRetryAfter)
		}
		if h.Parked {
			c.gate.Park(h.Origin, h.ParkReason)
		}
	}
	if c.cfg.Scope.MaxPages > 0 {
		// max_pages counts pages fetched, by earlier runs too.
		if err := c.pages.ForEach(func(p storage.Page) error {
			if p.Status >= 200 && p.Status < 300 {
				c.stats.doneBefore++
			}
			return nil
		}); err != nil {
			return fmt.Errorf("count pages fetched: %w", err)
		}
	}
	return c.state.Robots.ForEach(func(origin string, st robots.State) error {
		c.robots.Restore(origin, st)
		d, _ := st.Rules().ForAgent(c.agent).CrawlDelay()
		c.gate.SetCrawlDelay(origin, d, now)
		return nil
	})
}
