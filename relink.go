package crawler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/politecrawl/crawler/storage/mirror"
	"github.com/politecrawl/crawler/storage/relink"
)

// relinker keeps a mirror with mirror_links: relative browsable: at the
// end of an ad hoc crawl, and after a daemon's passes, it rewrites the
// links of the pages saved since to the mirror's files. It decides when;
// storage/relink's pass does the rewriting.
type relinker struct {
	cfg       Config // as the crawl was made: daemon.enabled
	conf      func() *liveConfig
	now       func() time.Time
	log       *slog.Logger
	out       *outputs
	pass      *relink.Relinker // nil without a mirror
	mirroring func() bool
	idle      func(time.Time) bool // the crawl is idle: see Crawler.crawlIdle
	// relinkWait is how often a daemon looks at its mirror after a change:
	// it is relinked then if the crawl is idle, else once a daemon.recrawl
	// has passed since the last relink (see relinkEvery).
	relinkWait time.Duration
	reloaded   chan struct{} // Reload's word to relinkEvery
}

// relinkEvery relinks the mirror of a daemon after its passes, until the
// returned stop is called: when the crawl is idle (see crawlIdle), looked
// at every r.relinkWait (a minute) at most, so that a daemon with a long
// recrawl does not leave its first pass unlinked for a day; and at least
// once per daemon.recrawl, the length of a pass, while it never is. The
// period follows daemon.recrawl across reloads. Relinking while new URLs
// wait would write links to them as absolute URLs for good (a relinked
// file is not relinked again). A mirror that did not change since the last
// relink is not checked again, unless that relink left pages a worker was
// visiting.
func (r *relinker) relinkEvery(ctx context.Context) (stop func()) {
	if !r.cfg.Daemon.Enabled {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		period := r.relinkPeriod()
		t := time.NewTicker(period)
		defer t.Stop()
		var last int64
		left := 0 // pages the last relink left for the next
		lastAt := r.now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-r.reloaded:
				if p := r.relinkPeriod(); p != period {
					period = p
					t.Reset(p)
				}
				continue
			case <-t.C:
			}
			n := r.out.mirrored.Load()
			if n == last && left == 0 {
				continue
			}
			now := r.now()
			if !r.idle(now) && now.Sub(lastAt) < r.conf().Daemon.Recrawl {
				continue
			}
			last, lastAt = n, now
			var err error
			if _, left, err = r.relinkMirrorLeft(); err != nil {
				r.log.Error("relink mirror", "err", err)
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// relinkPeriod is how often relinkEvery looks at the mirror, under the
// config in force: every c.relinkWait, or daemon.recrawl when shorter. It
// is never ≤ 0, which a ticker refuses.
func (r *relinker) relinkPeriod() time.Duration {
	p := r.relinkWait
	if r := r.conf().Daemon.Recrawl; r > 0 && r < p {
		p = r
	}
	if p <= 0 {
		p = time.Minute
	}
	return p
}

// relinkMirror ends a pass of a mirror with mirror_links: relative (see
// relink.Relinker.Pass): the links of every HTML and CSS page saved since
// the last pass are rewritten to the mirror's files, every relative link
// of the mirror is checked, and the broken links left are counted and
// listed in the log.
func (r *relinker) relinkMirror() (mirror.Report, error) {
	report, _, err := r.relinkMirrorLeft()
	return report, err
}

// relinkMirrorLeft is relinkMirror that also says how many pages it left
// for the next pass because a worker was visiting them.
func (r *relinker) relinkMirrorLeft() (report mirror.Report, left int, err error) {
	if r.pass == nil || !r.mirroring() || r.conf().Output.MirrorLinks != MirrorLinksRelative {
		return mirror.Report{}, 0, nil
	}
	return r.pass.Pass()
}

// relinkerOf returns the relinker of c, whose pass holds a page's URL as
// a worker visiting it does (c.visiting) and follows redirects up to the
// fetch.max_redirects in force.
func relinkerOf(c *Crawler) *relinker {
	r := &relinker{
		cfg: c.cfg, conf: c.conf, now: c.now, log: c.log, out: c.out,
		mirroring: c.mirroring, idle: c.crawlIdle,
		relinkWait: time.Minute, reloaded: make(chan struct{}, 1),
	}
	if c.out.mirror != nil {
		r.pass = &relink.Relinker{
			Pages: c.pages, Mirror: c.out.mirror,
			Hold: c.visiting.hold, Drop: c.visiting.drop,
			MaxRedirects: func() int { return c.conf().Fetch.MaxRedirects },
			Log:          c.log,
		}
	}
	return r
}
