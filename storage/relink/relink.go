package relink

import (
	"bytes"
	"cmp"
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

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/links"
	"github.com/politecrawl/crawler/storage/mirror"
)

// Relinker relinks one mirror from the page records of the crawl that
// saved it. Its fields are what the engine gives it; a pass reads them
// and holds no state of its own between passes, so one Relinker may run
// pass after pass, but not two passes at once.
type Relinker struct {
	Pages  *storage.Pages // what the crawl saved, and where; marked Relinked
	Mirror *mirror.Mirror // output.mirror_dir
	// Hold takes the URL key (frontier.Canonicalize's Key) of a page a
	// worker may be visiting, and reports false when it is taken: the
	// page is left for the next pass. Drop gives a key taken back.
	Hold func(key string) bool
	Drop func(key string)
	// MaxRedirects is fetch.max_redirects in force: how many hops of
	// redirects a link is followed to the file the mirror keeps.
	MaxRedirects func() int
	Log          *slog.Logger // the pass's summary, broken links, files it could not rewrite
}

// relinkBatch is how many pages one read of the page records gathers.
const relinkBatch = 1000

// relinkMarks is how many relinked pages' records one transaction marks:
// their URLs are held, and workers kept off them, until it commits.
const relinkMarks = 100

// Pass ends a pass of a mirror with mirror_links: relative: the links of
// every HTML and CSS page saved since the last pass are rewritten to the
// mirror's files (links to pages not in the mirror become absolute), as
// wget -k does, and then every relative link of the mirror is checked to
// resolve to a saved file. Links to pages since removed from the mirror
// (gone: 404 or 410) are made absolute again; the broken links left are
// counted and listed in the log. It also says how many pages it left for
// the next pass because a worker was visiting them (Hold refused them).
func (r *Relinker) Pass() (report mirror.Report, left int, err error) {
	known := map[string]mirror.Known{} // files rewritten, which Check need not read again
	rewritten, left, err := r.relinkPages(known)
	if err != nil {
		return mirror.Report{}, left, err
	}
	report, err = mirror.CheckKnown(r.Mirror.Root(), known)
	if err != nil {
		return report, left, fmt.Errorf("check mirror: %w", err)
	}
	n, busy, err := r.unlinkGone(report.Broken)
	left += busy
	if err != nil {
		return report, left, err
	}
	if n > 0 {
		if report, err = mirror.CheckKnown(r.Mirror.Root(), known); err != nil {
			return report, left, fmt.Errorf("check mirror: %w", err)
		}
	}
	r.Log.Info("mirror links rewritten", "pages", rewritten, "files", report.Files,
		"links", report.Links, "broken", len(report.Broken)+report.Unlisted)
	for i, b := range report.Broken {
		if i == 20 {
			r.Log.Warn("more broken mirror links", "count", len(report.Broken)-i+report.Unlisted)
			break
		}
		r.Log.Warn("broken mirror link", "file", b.File, "ref", b.Ref)
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
func (r *Relinker) relinkPages(known map[string]mirror.Known) (done, busy int, err error) {
	pass := &relinkPass{rewritten: map[string]bool{}, known: known, located: r.locator()}
	for {
		var batch []storage.Page
		err = r.Pages.ForEach(func(p storage.Page) error {
			if p.MirrorPath != "" && !p.Relinked && (links.IsHTMLType(p.ContentType) || links.IsCSSType(p.ContentType)) {
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
			err := r.Pages.PutAll(marks)
			for _, p := range marks {
				r.Drop(p.Key)
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
func (r *Relinker) relinkAll(pages []storage.Page, pass *relinkPass) []relinked {
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
func (r *Relinker) relinkIdle(key string, pass *relinkPass) (rec *storage.Page, visited bool, err error) {
	if !r.Hold(key) {
		return nil, false, nil
	}
	p, ok, err := r.Pages.Get(key)
	if err != nil || !ok || p.Relinked || p.MirrorPath == "" {
		// Changed since the batch was read: nothing to do now.
		r.Drop(key)
		if err != nil {
			return nil, false, fmt.Errorf("read page record: %w", err)
		}
		return nil, true, nil
	}
	if pass.claim(p.MirrorPath) {
		at, k, err := r.relinkPage(p, pass.locate)
		if err != nil {
			r.Log.Warn("rewrite mirror links", "url", p.URL, "err", err)
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
func (r *Relinker) relinkPage(p storage.Page, located func(*url.URL) (string, bool)) (string, mirror.Known, error) {
	u := frontier.MustParse(p.URL)
	m := r.Mirror
	self, err := m.Locate(u, p.ContentType)
	if err != nil {
		return "", mirror.Known{}, err
	}
	body, err := os.ReadFile(filepath.Join(m.Root(), filepath.FromSlash(self)))
	if err != nil {
		return "", mirror.Known{}, err
	}
	if p.Hash != "" && !storage.SameContent(p.Hash, storage.ContentHash(body), body) {
		return "", mirror.Known{}, nil
	}
	k := mirror.Known{CSS: links.IsCSSType(p.ContentType)}
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
func (r *Relinker) locator() func(*url.URL) (string, bool) {
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
func (r *Relinker) mirrored(target *url.URL) (string, bool) {
	raw := target.String()
	for range r.MaxRedirects() + 1 {
		canon, err := frontier.Canonicalize(raw, 0)
		if err != nil {
			return "", false
		}
		p, ok, err := r.Pages.Get(canon.Key)
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
		path, err := r.Mirror.Locate(frontier.MustParse(p.URL), p.ContentType)
		return path, err == nil
	}
	return "", false
}
