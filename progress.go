package crawler

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// startProgress reports progress until the returned stop is called: with
// Options.Status, a line twice a second (and "" at the end); otherwise a
// log line every Options.ProgressEvery (default 10s).
func (c *Crawler) startProgress(ctx context.Context) (stop func()) {
	every := c.opts.ProgressEvery
	if every <= 0 {
		every = 10 * time.Second
	}
	if c.opts.Status != nil {
		every = 500 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(min(every, time.Second))
		defer tick.Stop()
		start, last := c.now(), time.Time{}
		lastDone := int64(0)
		for {
			select {
			case <-ctx.Done():
				if c.opts.Status != nil {
					c.opts.Status("")
				}
				return
			case <-tick.C:
			}
			now := c.now()
			if now.Sub(last) < every {
				continue
			}
			p := c.progress() // only when reported: it sums the hosts' counts
			rate := float64(p.done-lastDone) / max(now.Sub(last).Seconds(), 0.001)
			if last.IsZero() {
				rate = float64(p.done) / max(now.Sub(start).Seconds(), 0.001)
			}
			last, lastDone = now, p.done
			if c.opts.Status != nil {
				// Fields in the order they matter: a narrow terminal
				// drops whole fields from the end (cmd/crawler's fit).
				c.opts.Status(fmt.Sprintf("%s · done %d · queued %d · errors %d · %.1f/s · hosts %d active, %d waiting",
					now.Sub(start).Round(time.Second), p.done, p.queued, p.errors, rate, p.active, p.waiting))
				continue
			}
			c.log.Info("progress", "elapsed", now.Sub(start).Round(time.Second).String(), "done", p.done,
				"queued", p.queued, "leased", p.leased, "pages_per_s", math.Round(rate*10)/10,
				"hosts_active", p.active, "hosts_waiting", p.waiting, "hosts_parked", p.parked, "errors", p.errors)
		}
	})
	return func() { cancel(); wg.Wait() }
}

type progressView struct {
	done, errors int64
	gauges
}

// progress reads the counts, from the observer and the crawl's gauges, as
// /metrics does.
func (c *Crawler) progress() progressView {
	var sum Summary
	c.obs.fill(&sum)
	return progressView{done: sum.Done, errors: c.obs.errors(), gauges: c.gauges()}
}
