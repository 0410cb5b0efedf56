package crawler

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
)

// relinker keeps a mirror with mirror_links: relative browsable: at the
// end of an ad hoc crawl, and after a daemon's passes, it rewrites the
// links of the pages saved since to the mirror's files.
type relinker struct {
	cfg       Config // as the crawl was made: daemon.enabled
	conf      func() *liveConfig
	now       func() time.Time
	log       *slog.Logger
	out       *outputs
	pages     *storage.Pages
	visiting  *visiting
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

// relinkBatch is how many pages one read of the page records gathers.
const relinkBatch = 1000

// relinkMarks is how many relinked pages' records one transaction marks:
// their URLs are held, and workers kept off them, until it commits.
const relinkMarks = 100

// relinkMirror ends a pass of a mirror with mirror_links: relative: the
// links of every HTML and CSS page saved since the last pass are rewritten
// to the mirror's files (links to pages not in the mirror become
// absolute), as wget -k does, and then every relative link of the mirror is
// checked to resolve to a saved file. Links to pages since removed from the
// mirror (gone: 404 or 410) are made absolute again; the broken links left
// are counted and listed in the log.
func (r *relinker) relinkMirror() (mirror.Report, error) {
	report, _, err := r.relinkMirrorLeft()
	return report, err
}

// relinkMirrorLeft is relinkMirror that also says how many pages it left
// for the next pass because a worker was visiting them.
func (r *relinker) relinkMirrorLeft() (report mirror.Report, left int, err error) {
	if !r.mirroring() || r.conf().Output.MirrorLinks != MirrorLinksRelative {
		return mirror.Report{}, 0, nil
	}
	known := map[string]mirror.Known{} // files rewritten, which Check need not read again
	rewritten, left, err := r.relinkPages(known)
	if err != nil {
		return mirror.Report{}, left, err
	}
	report, err = mirror.CheckKnown(r.out.mirror.Root(), known)
	if err != nil {
		return report, left, fmt.Errorf("check mirror: %w", err)
	}
	n, busy, err := r.unlinkGone(report.Broken)
	left += busy
	if err != nil {
		return report, left, err
	}
	if n > 0 {
		if report, err = mirror.CheckKnown(r.out.mirror.Root(), known); err != nil {
			return report, left, fmt.Errorf("check mirror: %w", err)
		}
	}
	r.log.Info("mirror links rewritten", "pages", rewritten, "files", report.Files,
		"links", report.Links, "broken", len(report.Broken)+report.Unlisted)
	for i, b := range report.Broken {
		if i == 20 {
			r.log.Warn("more broken mirror links", "count", len(report.Broken)-i+report.Unlisted)
			break
		}
		r.log.Warn("broken mirror link", "file", b.File, "ref", b.Ref)
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
//
// The files it rewrites are added to known (nil: none is kept), with the
// references they hold, for mirror.CheckKnown.
func (r *relinker) relinkPages(known map[string]mirror.Known) (done, busy int, err error) {
	pass := &relinkPass{rewritten: map[string]bool{}, known: known, located: r.locator()}
	for {
		var batch []storage.Page
		err = r.pages.ForEach(func(p storage.Page) error {
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
		for chunk := range slices.Chunk(batch, relinkMarks) {
			var marks []storage.Page // relinked, their URLs held until the records say so
			var firstErr error
			for _, res := range r.relinkAll(chunk, pass) {
				switch {
				case res.err != nil:
					firstErr = cmp.Or(firstErr, res.err)
				case !res.visited:
					left++ // the next pass tries again
				case res.rec == nil:
					done++
				default:
					marks = append(marks, *res.rec)
				}
			}
			// Every file rewritten is marked, even after an error: a file
			// rewritten twice would read the mirror's links as the site's.
			err := r.pages.PutAll(marks)
			for _, p := range marks {
				r.visiting.drop(p.Key)
			}
			if err != nil {
				return done, busy + left, errors.Join(firstErr, fmt.Errorf("save page records: %w", err))
			}
			done += len(marks)
			if firstErr != nil {
				return done, busy + left, firstErr
			}
		}
		busy += left
		if len(batch) < relinkBatch || left == len(batch) {
			return done, busy, nil
		}
	}
}

// relinkPass is what the pages relinked at once in one pass share: the
// files rewritten (each once per pass), what CheckKnown may know of them
// (known, nil: nothing is kept), and the look-ups of link targets.
type relinkPass struct {
	mu        sync.Mutex
	rewritten map[string]bool
	known     map[string]mirror.Known
	located   func(*url.URL) (string, bool)
}

// claim reports whether the file at path is still to be rewritten in this
// pass, and says it is taken.
func (p *relinkPass) claim(path string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rewritten[path] {
		return false
	}
	p.rewritten[path] = true
	return true
}

// keep adds what CheckKnown may know of the file written at at.
func (p *relinkPass) keep(at string, k mirror.Known) {
	if k.Info == nil || p.known == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.known[at] = k
}

// locate says where the mirror keeps target (see locator).
func (p *relinkPass) locate(target *url.URL) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.located(target)
}

// relinked is what relinkIdle made of one page.
type relinked struct {
	rec     *storage.Page
	visited bool
	err     error
}

// relinkAll relinks pages with a goroutine per processor, each page's
// outcome at its index: a pass reads, rewrites and writes every page, and
// at the end of an ad hoc crawl nothing else runs, so one goroutine left
// a core idle (a docs mirror's relink took 0.7 s of one of two cores; two
// goroutines took the crawl's wall from 1.41 s to 1.16 s).
func (r *relinker) relinkAll(pages []storage.Page, pass *relinkPass) []relinked {
	out := make([]relinked, len(pages))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(pages)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(pages); i = int(next.Add(1)) - 1 {
				res := &out[i]
				res.rec, res.visited, res.err = r.relinkIdle(pages[i].Key, pass)
			}
		})
	}
	wg.Wait()
	return out
}

// relinkIdle relinks the page of key unless a worker is visiting it: in a
// daemon a revisit may be saving a new body and page record at this very
// moment, which a rewrite of the old file and a write of the record read
// before would undo. Such a page is left for the next pass, and visited is
// false. The record is read again once the URL is held. A file the pass
// rewrote already is not rewritten again; one rewritten is kept in the
// pass as relinkPage knew it.
//
// A page relinked is returned as its record marked Relinked, with its URL
// still held: the caller writes the records of many in one transaction
// (a synced commit per page was a third of a docs mirror's relink), then
// lets the URLs go.
func (r *relinker) relinkIdle(key string, pass *relinkPass) (rec *storage.Page, visited bool, err error) {
	if !r.visiting.hold(key) {
		return nil, false, nil
	}
	p, ok, err := r.pages.Get(key)
	if err != nil || !ok || p.Relinked || p.MirrorPath == "" {
		// Changed since the batch was read: nothing to do now.
		r.visiting.drop(key)
		if err != nil {
			return nil, false, fmt.Errorf("read page record: %w", err)
		}
		return nil, true, nil
	}
	if pass.claim(p.MirrorPath) {
		at, k, err := r.relinkPage(p, pass.locate)
		if err != nil {
			r.log.Warn("rewrite mirror links", "url", p.URL, "err", err)
		}
		pass.keep(at, k)
	}
	p.Relinked = true // a page that cannot be rewritten is not tried again each pass
	return &p, true, nil
}

// errBatchFull stops a walk of the page records once a batch is gathered.
var errBatchFull = errors.New("batch full")

// relinkPage rewrites one mirrored file in place, if it still holds the
// body p describes (its Hash): a file that does not was rewritten already,
// for another URL saved at the same path (/py/ and /py/index.html) in an
// earlier pass, or holds that URL's body, which its own record relinks.
// It returns the path written and what mirror.CheckKnown may know of the
// file (Info nil: nothing).
func (r *relinker) relinkPage(p storage.Page, located func(*url.URL) (string, bool)) (string, mirror.Known, error) {
	u := mustParse(p.URL)
	m := r.out.mirror
	self, err := m.Locate(u, p.ContentType)
	if err != nil {
		return "", mirror.Known{}, err
	}
	body, err := os.ReadFile(filepath.Join(m.Root(), filepath.FromSlash(self)))
	if err != nil {
		return "", mirror.Known{}, err
	}
	if p.Hash != "" && storage.ContentHash(body) != p.Hash {
		return "", mirror.Known{}, nil
	}
	k := mirror.Known{CSS: isCSS(p.ContentType)}
	if k.CSS {
		body, _, k.Refs = mirror.RewriteCSSRefs(body, u, self, located)
	} else {
		body, _, k.Refs = mirror.RewriteHTMLRefs(body, u, self, located)
	}
	at, err := m.Write(u, p.ContentType, bytes.NewReader(body))
	if err != nil || k.Refs == nil {
		return at, mirror.Known{}, err
	}
	// The file as written, for CheckKnown to tell it is still that one.
	if k.Info, err = os.Lstat(filepath.Join(m.Root(), filepath.FromSlash(at))); err != nil {
		return at, mirror.Known{}, nil
	}
	return at, k, nil
}

// locator returns mirrored with a memory of the targets it looked up, for
// one pass: the pages of a site link to the same few pages over and over
// (a docs mirror: 132,000 links to 1,700 files), and each look-up reads
// and decodes a page record. Once it holds maxLocated targets it starts
// afresh.
func (r *relinker) locator() func(*url.URL) (string, bool) {
	type at struct {
		path string
		ok   bool
	}
	seen := map[string]at{}
	return func(target *url.URL) (string, bool) {
		key := target.String()
		if a, ok := seen[key]; ok {
			return a.path, a.ok
		}
		if len(seen) == maxLocated {
			clear(seen)
		}
		path, ok := r.mirrored(target)
		seen[key] = at{path, ok}
		return path, ok
	}
}

// maxLocated bounds the targets a locator remembers.
const maxLocated = 100_000

// mirrored says where the mirror keeps target, if it does. A URL that
// redirected is kept where the end of its chain is, as wget -k links it:
// its page record holds the 3xx and the next hop (FinalURL), which is
// followed up to fetch.max_redirects hops.
func (r *relinker) mirrored(target *url.URL) (string, bool) {
	raw := target.String()
	for range r.conf().Fetch.MaxRedirects + 1 {
		canon, err := frontier.Canonicalize(raw, 0)
		if err != nil {
			return "", false
		}
		p, ok, err := r.pages.Get(canon.Key)
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
		path, err := r.out.mirror.Locate(mustParse(p.URL), p.ContentType)
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
func (r *relinker) unlinkGone(broken []mirror.BrokenLink) (changed, left int, err error) {
	if len(broken) == 0 {
		return 0, 0, nil
	}
	gone := map[string]string{}        // mirror path a gone page had → its URL
	owner := map[string]storage.Page{} // mirror path → the page saved there
	need := map[string]bool{}          // files with broken links
	for _, b := range broken {
		need[b.File] = true
	}
	err = r.pages.ForEach(func(p storage.Page) error {
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
	root, err := os.OpenRoot(r.out.mirror.Root())
	if err != nil {
		return 0, 0, fmt.Errorf("unlink gone pages: %w", err)
	}
	defer root.Close()
	lookup := func(p string) (string, bool) { u, ok := gone[p]; return u, ok }
	for file, p := range owner {
		ok, busy, err := r.unlinkIdle(root, file, p.Key, lookup)
		if err != nil {
			r.log.Warn("unlink gone pages", "file", file, "err", err)
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
func (r *relinker) unlinkIdle(root *os.Root, file, key string, gone func(string) (string, bool)) (changed, busy bool, err error) {
	if !r.visiting.hold(key) {
		return false, true, nil
	}
	defer r.visiting.drop(key)
	p, ok, err := r.pages.Get(key)
	if err != nil || !ok || !p.Relinked || p.MirrorPath != file {
		return false, false, err
	}
	m := r.out.mirror
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
