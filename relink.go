package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
)

// relinkEvery relinks the mirror of a daemon after its passes, until the
// returned stop is called: when the crawl is idle (see crawlIdle), looked
// at every c.relinkWait (a minute) at most, so that a daemon with a long
// recrawl does not leave its first pass unlinked for a day; and at least
// once per daemon.recrawl, the length of a pass, while it never is. The
// period follows daemon.recrawl across reloads. Relinking while new URLs
// wait would write links to them as absolute URLs for good (a relinked
// file is not relinked again). A mirror that did not change since the last
// relink is not checked again, unless that relink left pages a worker was
// visiting.
func (c *Crawler) relinkEvery(ctx context.Context) (stop func()) {
	if !c.cfg.Daemon.Enabled {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		period := c.relinkPeriod()
		t := time.NewTicker(period)
		defer t.Stop()
		var last int64
		left := 0 // pages the last relink left for the next
		lastAt := c.now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.reloaded:
				if p := c.relinkPeriod(); p != period {
					period = p
					t.Reset(p)
				}
				continue
			case <-t.C:
			}
			n := c.out.mirrored.Load()
			if n == last && left == 0 {
				continue
			}
			now := c.now()
			if !c.crawlIdle(now) && now.Sub(lastAt) < c.conf().Daemon.Recrawl {
				continue
			}
			last, lastAt = n, now
			var err error
			if _, left, err = c.relinkMirrorLeft(); err != nil {
				c.log.Error("relink mirror", "err", err)
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// relinkPeriod is how often relinkEvery looks at the mirror, under the
// config in force: every c.relinkWait, or daemon.recrawl when shorter. It
// is never ≤ 0, which a ticker refuses.
func (c *Crawler) relinkPeriod() time.Duration {
	p := c.relinkWait
	if r := c.conf().Daemon.Recrawl; r > 0 && r < p {
		p = r
	}
	if p <= 0 {
		p = time.Minute
	}
	return p
}

// crawlIdle reports whether the crawl is idle, for relinking: no request
// is in flight, and every host with URLs queued is given up on for now
// (see hosts.idle). Relinking while URLs of a host that is fetched this
// pass wait would write links to them as absolute URLs for good (a
// relinked file is not relinked again). Near the end of its rest, a
// resting host holds relinking back too; the relink that a daemon.recrawl
// forces bounds that.
func (c *Crawler) crawlIdle(now time.Time) bool {
	if c.working.Load() != 0 {
		return false
	}
	return c.front.Stats().Queued == 0 || c.hosts.idle(now)
}

// relinkBatch is how many pages one read of the page records gathers.
const relinkBatch = 1000

// relinkMirror ends a pass of a mirror with mirror_links: relative: the
// links of every HTML and CSS page saved since the last pass are rewritten
// to the mirror's files (links to pages not in the mirror become
// absolute), as wget -k does, and then every relative link of the mirror is
// checked to resolve to a saved file. Links to pages since removed from the
// mirror (gone: 404 or 410) are made absolute again; the broken links left
// are counted and listed in the log.
func (c *Crawler) relinkMirror() (mirror.Report, error) {
	report, _, err := c.relinkMirrorLeft()
	return report, err
}

// relinkMirrorLeft is relinkMirror that also says how many pages it left
// for the next pass because a worker was visiting them.
func (c *Crawler) relinkMirrorLeft() (report mirror.Report, left int, err error) {
	if !c.mirroring() || c.conf().Output.MirrorLinks != MirrorLinksRelative {
		return mirror.Report{}, 0, nil
	}
	rewritten, left, err := c.relinkPages()
	if err != nil {
		return mirror.Report{}, left, err
	}
	report, err = mirror.Check(c.out.mirror.Root())
	if err != nil {
		return report, left, fmt.Errorf("check mirror: %w", err)
	}
	n, busy, err := c.unlinkGone(report.Broken)
	left += busy
	if err != nil {
		return report, left, err
	}
	if n > 0 {
		if report, err = mirror.Check(c.out.mirror.Root()); err != nil {
			return report, left, fmt.Errorf("check mirror: %w", err)
		}
	}
	c.log.Info("mirror links rewritten", "pages", rewritten, "files", report.Files,
		"links", report.Links, "broken", len(report.Broken)+report.Unlisted)
	for i, b := range report.Broken {
		if i == 20 {
			c.log.Warn("more broken mirror links", "count", len(report.Broken)-i+report.Unlisted)
			break
		}
		c.log.Warn("broken mirror link", "file", b.File, "ref", b.Ref)
	}
	return report, left, nil
}

// relinkPages rewrites the pages not yet relinked, a batch at a time so
// that no transaction is held while files are written. It returns how many
// it rewrote and how many it left because a worker was visiting them.
//
// Several URLs may share one file (/py/ and /py/index.html): the file is
// rewritten once per pass, for the first of them, and the others are only
// marked relinked. A second rewrite would read the mirror's relative links
// as the site's, and make absolute those whose mirror name differs from
// their URL (site.css for /css/site, a query's '@').
func (c *Crawler) relinkPages() (done, busy int, err error) {
	rewritten := map[string]bool{} // mirror paths rewritten in this pass
	for {
		var batch []storage.Page
		err = c.pages.ForEach(func(p storage.Page) error {
			if p.MirrorPath != "" && !p.Relinked && (isHTML(p.ContentType, nil) || isCSS(p.ContentType)) {
				batch = append(batch, p)
			}
			if len(batch) == relinkBatch {
				return errBatchFull
			}
			return nil
		})
		if err != nil && !errors.Is(err, errBatchFull) {
			return done, busy, fmt.Errorf("read page records: %w", err)
		}
		left := 0
		for _, p := range batch {
			ok, err := c.relinkIdle(p.Key, rewritten)
			if err != nil {
				return done, busy + left, err
			}
			if ok {
				done++
			} else {
				left++ // the next pass tries again
			}
		}
		busy += left
		if len(batch) < relinkBatch || left == len(batch) {
			return done, busy, nil
		}
	}
}

// relinkIdle relinks the page of key unless a worker is visiting it: in a
// daemon a revisit may be saving a new body and page record at this very
// moment, which a rewrite of the old file and a write of the record read
// before would undo. Such a page is left for the next pass, and false
// returned. The record is read again once the URL is held. A file in
// rewritten is not rewritten again; a file rewritten is added.
func (c *Crawler) relinkIdle(key string, rewritten map[string]bool) (bool, error) {
	if !c.visiting.hold(key) {
		return false, nil
	}
	defer c.visiting.drop(key)
	p, ok, err := c.pages.Get(key)
	if err != nil {
		return false, fmt.Errorf("read page record: %w", err)
	}
	if !ok || p.Relinked || p.MirrorPath == "" {
		return true, nil // changed since the batch was read: nothing to do now
	}
	if !rewritten[p.MirrorPath] {
		if err := c.relinkPage(p); err != nil {
			c.log.Warn("rewrite mirror links", "url", p.URL, "err", err)
		}
		rewritten[p.MirrorPath] = true
	}
	p.Relinked = true // a page that cannot be rewritten is not tried again each pass
	if err := c.pages.Put(p); err != nil {
		return false, fmt.Errorf("save page record: %w", err)
	}
	return true, nil
}

// errBatchFull stops a walk of the page records once a batch is gathered.
var errBatchFull = errors.New("batch full")

// relinkPage rewrites one mirrored file in place, if it still holds the
// body p describes (its Hash): a file that does not was rewritten already,
// for another URL saved at the same path (/py/ and /py/index.html) in an
// earlier pass, or holds that URL's body, which its own record relinks.
func (c *Crawler) relinkPage(p storage.Page) error {
	u := mustParse(p.URL)
	m := c.out.mirror
	self, err := m.Locate(u, p.ContentType)
	if err != nil {
		return err
	}
	body, err := os.ReadFile(filepath.Join(m.Root(), filepath.FromSlash(self)))
	if err != nil {
		return err
	}
	if p.Hash != "" && storage.ContentHash(body) != p.Hash {
		return nil
	}
	if isCSS(p.ContentType) {
		body, _ = mirror.RewriteCSS(body, u, self, c.mirrored)
	} else {
		body, _ = mirror.RewriteHTML(body, u, self, c.mirrored)
	}
	_, err = m.Write(u, p.ContentType, bytes.NewReader(body))
	return err
}

// mirrored says where the mirror keeps target, if it does. A URL that
// redirected is kept where the end of its chain is, as wget -k links it:
// its page record holds the 3xx and the next hop (FinalURL), which is
// followed up to fetch.max_redirects hops.
func (c *Crawler) mirrored(target *url.URL) (string, bool) {
	raw := target.String()
	for range c.conf().Fetch.MaxRedirects + 1 {
		canon, err := frontier.Canonicalize(raw, 0)
		if err != nil {
			return "", false
		}
		p, ok, err := c.pages.Get(canon.Key)
		if err != nil || !ok {
			return "", false
		}
		if p.Status >= 300 && p.Status <= 399 && p.FinalURL != "" && p.FinalURL != p.URL {
			raw = p.FinalURL
			continue
		}
		if p.MirrorPath == "" {
			return "", false
		}
		path, err := c.out.mirror.Locate(mustParse(p.URL), p.ContentType)
		return path, err == nil
	}
	return "", false
}

// unlinkGone makes absolute again the broken links of mirror files that
// lead to pages removed from the mirror since they were relinked (404 or
// 410 on a revisit), as a link to a page the mirror does not have is
// written. Only links still broken when a file is rewritten change (see
// mirror.UnlinkGone): a page saved since where a gone one was keeps its
// links. A file whose page a worker is visiting is left for the next pass.
// It returns how many files changed and how many were left.
func (c *Crawler) unlinkGone(broken []mirror.BrokenLink) (changed, left int, err error) {
	if len(broken) == 0 {
		return 0, 0, nil
	}
	gone := map[string]string{}        // mirror path a gone page had → its URL
	owner := map[string]storage.Page{} // mirror path → the page saved there
	need := map[string]bool{}          // files with broken links
	for _, b := range broken {
		need[b.File] = true
	}
	err = c.pages.ForEach(func(p storage.Page) error {
		switch {
		case need[p.MirrorPath] && p.Relinked:
			owner[p.MirrorPath] = p // its relative links are mirror paths
		case p.MirrorPath == "" && (p.Status == 404 || p.Status == 410):
			at := mirror.Path(mustParse(p.URL), p.ContentType)
			gone[at], gone[mirror.AsidePath(at)] = p.URL, p.URL // where Locate may have put it
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("read page records: %w", err)
	}
	if len(gone) == 0 {
		return 0, 0, nil
	}
	root, err := os.OpenRoot(c.out.mirror.Root())
	if err != nil {
		return 0, 0, fmt.Errorf("unlink gone pages: %w", err)
	}
	defer root.Close()
	lookup := func(p string) (string, bool) { u, ok := gone[p]; return u, ok }
	for file, p := range owner {
		ok, busy, err := c.unlinkIdle(root, file, p.Key, lookup)
		if err != nil {
			c.log.Warn("unlink gone pages", "file", file, "err", err)
		}
		if ok {
			changed++
		}
		if busy {
			left++
		}
	}
	return changed, left, nil
}

// unlinkIdle rewrites file, the mirror file of the page of key, with
// UnlinkGone, unless a worker is visiting that page (it is left for the
// next pass, as relinkIdle does, and busy is true). The record is read
// again once the URL is held. It reports whether the file changed.
func (c *Crawler) unlinkIdle(root *os.Root, file, key string, gone func(string) (string, bool)) (changed, busy bool, err error) {
	if !c.visiting.hold(key) {
		return false, true, nil
	}
	defer c.visiting.drop(key)
	p, ok, err := c.pages.Get(key)
	if err != nil || !ok || !p.Relinked || p.MirrorPath != file {
		return false, false, err
	}
	m := c.out.mirror
	body, err := os.ReadFile(filepath.Join(m.Root(), filepath.FromSlash(file)))
	if err != nil {
		return false, false, err
	}
	body, n := mirror.UnlinkGone(root, body, file, isCSS(p.ContentType), gone)
	if n == 0 {
		return false, false, nil
	}
	_, err = m.Write(mustParse(p.URL), p.ContentType, bytes.NewReader(body))
	return err == nil, false, err
}
