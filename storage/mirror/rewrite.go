package mirror

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/politecrawl/crawler/storage/links"
)

// RewriteHTML returns body with the links of the page fetched from page
// (an absolute URL) rewritten for the mirror, as wget -k does, and the
// number of references it pointed at mirror files. selfPath is the page's
// own mirror path, as Mirror.Write returned it.
//
// Every reference storage/links finds is rewritten (a, area and link href,
// frames, images and srcset candidates, scripts, media, object data,
// backgrounds, CSS url() and @import in style attributes and <style>, the
// URL of a meta refresh, ...). Each is resolved against page, or the first
// <base href>, and resolve is called with the absolute URL, without its
// fragment. When resolve says ok, the reference becomes
// RelativeRef(selfPath, mirrorPath) with the original fragment; otherwise it
// becomes the absolute URL, so that it still works online. References
// already absolute stay as they were when not in the mirror; values that do
// not parse, other schemes (mailto:, data:, javascript:), and empty and
// fragment-only references (unless a <base> made them point elsewhere) are
// kept. resolve is called from the calling goroutine, once per reference.
//
// The href of every <base> element is removed, since relative links in the
// mirror must resolve against the file's own location; for the same reason
// the URLs nobody fetches (cite, img longdesc, <link> of other rels) are
// made absolute when not in the mirror. A form's action or formaction not
// in the mirror is kept as written, unless a <base> changed what it means
// (then it is made absolute): the mirror file sits where the page did, so
// a relative target still means the page's.
//
// A tag whose values change is written again from the tokenizer's
// attributes (see links.Rewrite); everything else is kept byte for byte.
// The result grows by about four times the size of body plus 1 MiB at
// most; references past that bound are left as they are.
func RewriteHTML(body []byte, page *url.URL, selfPath string, resolve func(target *url.URL) (mirrorPath string, ok bool)) ([]byte, int) {
	out, n, _ := rewriteHTML(body, page, selfPath, resolve, false)
	return out, n
}

// RewriteHTMLRefs is RewriteHTML that also returns the references of the
// result that Check reads, in order, as Check would find them there (see
// Known); refs is nil when Check must read the result itself (a <base
// href> is left in it).
func RewriteHTMLRefs(body []byte, page *url.URL, selfPath string, resolve func(target *url.URL) (mirrorPath string, ok bool)) (out []byte, n int, refs []string) {
	return rewriteHTML(body, page, selfPath, resolve, true)
}

func rewriteHTML(body []byte, page *url.URL, selfPath string, resolve func(*url.URL) (string, bool), keep bool) ([]byte, int, []string) {
	if page == nil {
		return bytes.Clone(body), 0, nil
	}
	base := page
	if href, ok := findBase(body); ok {
		base = baseURL(page, href)
	}
	r := newURLRewriter(page, base, selfPath, resolve, len(body))
	var refs []string
	out := links.Rewrite(body, func(ref links.Ref) (string, bool) {
		if ref.Kind == links.Base {
			return "", true // relative links must resolve against the file's own place
		}
		nv, changed := r.rewrite(ref.URL, refKindOf(ref))
		if keep && ref.Kind != links.Form { // as checkFile collects them
			if !changed {
				nv = ref.URL
			}
			refs = append(refs, nv)
		}
		return nv, changed
	})
	if !keep {
		return out, r.count, nil
	}
	if _, ok := findBase(out); ok {
		return out, r.count, nil
	}
	if refs == nil {
		refs = []string{}
	}
	return out, r.count, refs
}

// refKindOf says how RewriteHTML treats a reference.
func refKindOf(ref links.Ref) refKind {
	switch {
	case ref.CSS:
		return refCSS
	case ref.Kind == links.Form:
		return refForm
	case ref.Kind == links.Other && ref.Tag != "link":
		return refAbsolute // cite, longdesc: made absolute, as wget -k does
	}
	// A <link> of a rel the crawler does not fetch (author, copyright,
	// help) still points at the mirror's file when the mirror has its
	// target, as a followed one does.
	return refLink
}

// RewriteCSS returns the stylesheet body fetched from sheet with its url()
// and @import references rewritten for the mirror as RewriteHTML does, and
// the number pointed at mirror files. selfPath is the sheet's own mirror
// path. Fragment-only references (url(#clip)) and data: URIs are kept.
func RewriteCSS(body []byte, sheet *url.URL, selfPath string, resolve func(target *url.URL) (mirrorPath string, ok bool)) ([]byte, int) {
	out, n, _ := rewriteCSS(body, sheet, selfPath, resolve, false)
	return out, n
}

// RewriteCSSRefs is RewriteCSS that also returns the references of the
// result that Check reads, in order, as Check would find them there (see
// Known).
func RewriteCSSRefs(body []byte, sheet *url.URL, selfPath string, resolve func(target *url.URL) (mirrorPath string, ok bool)) (out []byte, n int, refs []string) {
	return rewriteCSS(body, sheet, selfPath, resolve, true)
}

func rewriteCSS(body []byte, sheet *url.URL, selfPath string, resolve func(*url.URL) (string, bool), keep bool) ([]byte, int, []string) {
	if sheet == nil {
		return bytes.Clone(body), 0, nil
	}
	r := newURLRewriter(sheet, sheet, selfPath, resolve, len(body))
	var refs []string
	if keep {
		refs = []string{}
	}
	out := links.RewriteCSS(body, func(ref string) (string, bool) {
		nv, changed := r.rewrite(ref, refCSS)
		if keep {
			if !changed {
				nv = ref
			}
			refs = append(refs, nv)
		}
		return nv, changed
	})
	return out, r.count, refs
}

// refKind says what a reference is used for.
type refKind uint8

const (
	refLink     refKind = iota // followed or mirrored by the crawler
	refCSS                     // a url() or @import: mirrored; "#x" means this document
	refAbsolute                // never mirrored: only made absolute
	refForm                    // a form's target: mirrored, else kept as written when it means the same
)

// The values of a rewritten document grow by at most maxGrowthFactor times
// its size plus maxGrowthSlack bytes (quotes and escapes aside): a page of a million one-letter links, each made
// a long absolute URL, would otherwise take gigabytes. References past the
// bound are left as they are.
const (
	maxGrowthFactor = 4
	maxGrowthSlack  = 1 << 20
)

// urlRewriter decides what each reference of one document becomes.
type urlRewriter struct {
	base       *url.URL
	baseIsPage bool // fragment-only references can stay as they are
	selfPath   string
	resolve    func(*url.URL) (string, bool)
	count      int // references pointed at mirror files
	growth     int // bytes the document may still grow by
}

func newURLRewriter(page, base *url.URL, selfPath string, resolve func(*url.URL) (string, bool), size int) *urlRewriter {
	return &urlRewriter{
		base:       base,
		baseIsPage: withoutFragment(base) == withoutFragment(page),
		selfPath:   selfPath,
		resolve:    resolve,
		growth:     maxGrowthFactor*size + maxGrowthSlack,
	}
}

func withoutFragment(u *url.URL) string {
	v := *u
	v.Fragment, v.RawFragment = "", ""
	return v.String()
}

// rewrite returns what ref becomes, within the growth bound.
func (r *urlRewriter) rewrite(ref string, kind refKind) (string, bool) {
	nv, local, changed := r.replacement(ref, kind)
	if !changed {
		if local {
			r.count++
		}
		return ref, false
	}
	if grow := len(nv) - len(ref); grow > r.growth {
		return ref, false
	} else if grow > 0 {
		r.growth -= grow
	}
	if local {
		r.count++
	}
	return nv, true
}

// replacement returns what ref becomes, whether that is a mirror file, and
// whether it changed.
func (r *urlRewriter) replacement(ref string, kind refKind) (nv string, local, changed bool) {
	s := cleanURL(ref)
	if (s == "" || s[0] == '#') && (r.baseIsPage || kind == refCSS) {
		return ref, false, false
	}
	u, err := r.base.Parse(s)
	if err != nil {
		return ref, false, false
	}
	absolute := hasScheme(s)
	if kind != refAbsolute && r.resolve != nil && (u.Scheme == "http" || u.Scheme == "https") {
		target := *u
		target.Fragment, target.RawFragment = "", ""
		if mp, ok := r.resolve(&target); ok {
			rel := RelativeRef(r.selfPath, mp)
			if _, frag, ok := strings.Cut(s, "#"); ok {
				rel += "#" + frag
			}
			return rel, true, rel != ref
		}
	}
	if absolute || kind == refForm && r.baseIsPage {
		// A form's relative target means the same in the mirror as on
		// the site, and is submitted to the site's live URL by nobody
		// offline: it is kept as written, as wget keeps it.
		return ref, false, false
	}
	abs := u.String()
	return abs, false, abs != ref
}

// cleanURL strips what a browser strips from a URL before parsing it:
// leading and trailing C0 controls and spaces, and tabs and newlines
// anywhere.
func cleanURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// hasScheme reports whether s starts with a URL scheme (RFC 3986 section
// 3.1) and a colon.
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return false
			}
		case c == ':':
			return i > 0
		default:
			return false
		}
	}
	return false
}

// baseURL is the document base URL given the first <base href>: the href
// resolved against the page, unless it fails to parse or names a data: or
// javascript: URL (HTML, "frozen base URL").
func baseURL(page *url.URL, href string) *url.URL {
	b, err := page.Parse(cleanURL(href))
	if err != nil || b.Scheme == "data" || b.Scheme == "javascript" {
		return page
	}
	return b
}

// findBase returns the href of the first <base> element that has one.
func findBase(body []byte) (string, bool) {
	if !containsFold(body, "<base") {
		return "", false
	}
	href, found := "", false
	links.Scan(body, func(ref links.Ref) {
		if ref.Kind == links.Base && !found {
			href, found = ref.URL, true
		}
	})
	return href, found
}

// containsFold reports whether b contains the lower-case ASCII s in any case.
func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		j := bytes.IndexByte(b[i:], s[0])
		if j < 0 {
			return false
		}
		i += j
		if i+len(s) <= len(b) && strings.EqualFold(string(b[i:i+len(s)]), s) {
			return true
		}
	}
	return false
}
