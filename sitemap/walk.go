package sitemap

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
)

// FetchFunc fetches one sitemap file. It returns the body, which the
// caller closes, and the URL the body finally came from after redirects
// (empty means url itself). Any outcome other than a body to read — a
// network error, a 404, a 503 — is an error; it should not wrap ctx's
// error unless ctx is done.
type FetchFunc func(ctx context.Context, url string) (body io.ReadCloser, finalURL string, err error)

// Walker reads whole sitemap trees: each root, and the sitemaps listed by
// a root that is an index, one file at a time. A Walker holds no state
// between walks and may be reused, but not by two walks at once (its Warn
// would be called from both).
type Walker struct {
	// Fetch fetches one file; it must be set. It is called for one URL at
	// a time.
	Fetch FetchFunc
	// Limits caps each file; the zero value means DefaultLimits.
	Limits Limits
	// Warn, if not nil, receives every Warning of every file and of the
	// walk itself (fetch failures, duplicates, nested indexes).
	Warn func(Warning)
}

// WalkStats sums up a walk.
type WalkStats struct {
	Roots     int // distinct root URLs
	RootsRead int // roots whose fetch succeeded
	Files     int // files read: roots and children
	Pages     int // distinct pages yielded
	Warnings  int // warnings passed to Warn
}

// errNested stops the reading of an index found among an index's children.
var errNested = errors.New("nested sitemap index")

// yieldError carries the caller's own error out of Read, to tell it from
// a failing body.
type yieldError struct{ err error }

func (e yieldError) Error() string { return e.err.Error() }

// Walk reads each root in turn and, when a root is a sitemap index, each
// sitemap it lists, in order, one at a time. It calls yield for every
// accepted page, each distinct URL (see below) once, in the order read.
//
// A sitemap listed twice (or given twice as a root), or an index listing
// itself, is read once. An index listed by an index is fetched, reported
// (RuleNestedIndex) and not followed, as search engines do. A file that
// cannot be fetched or fails part-way is reported (RuleFetch) and the walk
// goes on.
//
// Walk returns when all roots are done, with an error only when ctx is
// done or yield returns one (returned unchanged). To remember pages seen,
// it keeps 16 bytes per distinct page URL: at most the number of roots ×
// Limits.MaxChildren × Limits.MaxURLs entries.
func (w *Walker) Walk(ctx context.Context, roots []string, yield func(Entry) error) (WalkStats, error) {
	k := &walk{
		ctx:   ctx,
		fetch: w.Fetch,
		lim:   w.Limits.withDefaults(),
		yield: yield,
		warn:  w.Warn,
		files: make(map[string]bool),
		pages: make(map[[2]uint64]struct{}),
		seed1: maphash.MakeSeed(),
		seed2: maphash.MakeSeed(),
	}
	var unique []string
	for _, r := range roots {
		key := canonical(r)
		if k.files[key] {
			k.report(Warning{Sitemap: r, Rule: RuleDuplicate, URL: r, Detail: "given twice; read once"})
			continue
		}
		k.files[key] = true
		unique = append(unique, r)
	}
	k.stats.Roots = len(unique)
	for _, root := range unique {
		if err := k.root(root); err != nil {
			return k.stats, err
		}
	}
	return k.stats, nil
}

// walk is the state of one Walk.
type walk struct {
	ctx   context.Context
	fetch FetchFunc
	lim   Limits
	yield func(Entry) error
	warn  func(Warning)

	files        map[string]bool // canonical URLs of the sitemaps fetched or queued
	pages        map[[2]uint64]struct{}
	seed1, seed2 maphash.Seed
	stats        WalkStats
}

func (k *walk) report(w Warning) {
	k.stats.Warnings++
	if k.warn != nil {
		k.warn(w)
	}
}

// root reads one root and, if it is an index, its children.
func (k *walk) root(u string) error {
	if err := k.ctx.Err(); err != nil {
		return err
	}
	res, final, children, fetched, err := k.file(u, false)
	if err != nil {
		return err
	}
	if fetched {
		k.stats.RootsRead++
	}
	if res.Kind != KindIndex {
		return nil
	}
	self := canonical(final)
	for _, c := range children {
		if err := k.ctx.Err(); err != nil {
			return err
		}
		key := canonical(c.Loc)
		if k.files[key] {
			why := "listed again or already read; read once"
			if key == self || key == canonical(u) {
				why = "the index lists itself; read once"
			}
			k.report(Warning{Sitemap: final, Rule: RuleDuplicate, URL: c.Loc, Detail: why})
			continue
		}
		k.files[key] = true
		res, _, _, _, err := k.file(c.Loc, true)
		if err != nil {
			return err
		}
		if res.Kind == KindIndex {
			k.report(Warning{Sitemap: final, Rule: RuleNestedIndex, URL: c.Loc,
				Detail: "a sitemap index listed by a sitemap index is not followed"})
		}
	}
	return nil
}

// file fetches and reads one file. It yields the file's pages and returns
// an index's children. Failures to fetch or read are reported, not
// returned; the error is ctx's or yield's.
func (k *walk) file(u string, child bool) (res Result, final string, children []Entry, fetched bool, err error) {
	body, final, err := k.fetch(k.ctx, u)
	if err != nil {
		if ctxErr := k.ctx.Err(); ctxErr != nil {
			return res, u, nil, false, ctxErr
		}
		k.report(Warning{Sitemap: u, Rule: RuleFetch, URL: u, Detail: err.Error() + "; skipped"})
		return res, u, nil, false, nil
	}
	defer body.Close()
	if final == "" {
		final = u
	}
	if fk := canonical(final); fk != canonical(u) {
		if child && k.files[fk] {
			k.report(Warning{Sitemap: u, Rule: RuleDuplicate, URL: u, Detail: "redirected to " + final + ", already read; read once"})
			return res, final, nil, true, nil
		}
		k.files[fk] = true
	}
	k.stats.Files++
	res, err = Read(body, final, k.lim, func(e Entry) error {
		if e.Child {
			if child {
				return errNested
			}
			children = append(children, e)
			return nil
		}
		id := canonical(e.Loc)
		key := [2]uint64{maphash.String(k.seed1, id), maphash.String(k.seed2, id)}
		if _, dup := k.pages[key]; dup {
			return nil
		}
		k.pages[key] = struct{}{}
		k.stats.Pages++
		if err := k.yield(e); err != nil {
			return yieldError{err}
		}
		return nil
	}, k.report)
	var ye yieldError
	switch {
	case err == nil, errors.Is(err, errNested):
		return res, final, children, true, nil
	case errors.As(err, &ye):
		return res, final, nil, true, ye.err
	case k.ctx.Err() != nil:
		return res, final, nil, true, k.ctx.Err()
	}
	k.report(Warning{Sitemap: final, Rule: RuleFetch, URL: u, Detail: err.Error() + "; entries read before the failure were kept"})
	return res, final, children, true, nil
}
