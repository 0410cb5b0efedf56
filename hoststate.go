package crawler

import (
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/robots"
	"github.com/politecrawl/crawler/storage"
)

// robotsBucket keeps each host's robots.txt state (robots.State, as JSON),
// so that a restarted crawl neither fetches robots.txt again before it is
// due nor forgets a Crawl-delay for its first requests.
var robotsBucket = []byte("crawler.robots")

// saveRobots keeps origin's robots.txt state for the next run. A failure is
// logged: the next run fetches robots.txt again.
func (c *Crawler) saveRobots(origin string, st robots.State) {
	data, err := json.Marshal(st)
	if err == nil {
		err = c.db.Update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(robotsBucket)
			if err != nil {
				return err
			}
			return b.Put([]byte(origin), data)
		})
	}
	if err != nil {
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
	return c.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(robotsBucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var st robots.State
			if json.Unmarshal(v, &st) != nil {
				return nil // unreadable: robots.txt is fetched again
			}
			origin := string(k)
			c.robots.Restore(origin, st)
			d, _ := st.Rules().ForAgent(c.agent).CrawlDelay()
			c.gate.SetCrawlDelay(origin, d, now)
			return nil
		})
	})
}
