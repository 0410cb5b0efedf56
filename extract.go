package crawler

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/links"
)

// linkKind says how a page refers to a URL; it decides whether the URL is
// followed as a page or fetched only as a requisite for the mirror.
type linkKind uint8

const (
	linkAnchor    linkKind = iota // <a href>, <area href>
	linkFrame                     // <frame src>, <iframe src>
	linkAlternate                 // <link rel=alternate|next|prev>
	linkCanonical                 // <link rel=canonical>
	linkRefresh                   // <meta http-equiv=refresh>
	linkRequisite                 // img, script, stylesheet, CSS url(): see requisites.go
	linkRedirect                  // a Location header
	linkSitemap                   // a sitemap's entry
)

// link is one URL a page refers to, resolved against the page's base.
type link struct {
	url      *url.URL
	kind     linkKind
	nofollow bool // rel=nofollow on the element
}

// extracted is what a page says about itself and the URLs it refers to.
type extracted struct {
	links       []link
	canonical   string
	conflict    string             // a second canonical naming another URL than canonical (a second tag, or the Link header)
	facts       links.Facts        // what the audit reads in the body
	hreflang    []storage.Hreflang // <link rel=alternate hreflang>, in page order
	robots      []string           // lower-case directives of <meta name=robots> and <meta name=AGENT>
	title, h1   string
	description string
	refs        []links.Ref // as the page writes them, for graph
	base        *url.URL    // what they resolve against
	linksOut    int         // the links found on the page: graph's lines, whatever their scheme
	cut         int         // references past the limit, not read
}

// isHTML reports whether a response is HTML, by its Content-Type or, when
// that is missing, by sniffing the body.
func isHTML(contentType string, body []byte) bool {
	if strings.TrimSpace(contentType) == "" {
		contentType = http.DetectContentType(body)
	}
	return links.IsHTMLType(contentType)
}

// extractHTML reads an HTML page fetched from pageURL and returns its links,
// in document order, resolved against <base href> when there is one, with
// no fragment (none is fetched; the link graph reads refs). agent
// is our product token, for <meta name=AGENT content=...>. Unparseable hrefs
// are skipped. What counts as a link is storage/links' grammar; the page is
// read as a browser without scripts would (so the content of <noscript>
// counts, as it does for wget). At most limit references are read (all
// when limit is 0); the rest are counted in cut.
func extractHTML(body []byte, contentType string, pageURL *url.URL, agent string, limit int) extracted {
	p := links.ReadHTMLLimit(body, contentType, limit)
	e := extractFrom(p, pageURL, agent)
	e.cut = p.Cut
	return e
}

// extractFrom resolves what links.Read found in a page (see extractHTML).
func extractFrom(p *links.Page, pageURL *url.URL, agent string) extracted {
	var out extracted
	resolveAt := pageURL
	if base := p.Base(); base != "" {
		if b, err := pageURL.Parse(strings.TrimSpace(base)); err == nil {
			resolveAt = b
		}
	}
	out.refs, out.base = p.Refs, resolveAt
	out.links = make([]link, 0, len(p.Refs)) // at most one each, and most refs are links
	res := resolver{base: resolveAt, seen: make(map[string]*url.URL, len(p.Refs))}
	for _, r := range p.Refs {
		kind, ok := kindOf[r.Kind]
		var u *url.URL
		if ok {
			u = res.resolve(r.URL)
		}
		if u != nil {
			out.links = append(out.links, link{url: u, kind: kind, nofollow: r.Nofollow})
		}
		if graphKind(r) != "" && (u != nil || resolveRef(resolveAt, r.URL) != nil) {
			out.linksOut++
		}
	}
	for _, c := range p.Canonicals() {
		if u := resolveRef(resolveAt, c); u != nil {
			switch s := u.String(); {
			case out.canonical == "":
				out.canonical = s
			case s != out.canonical && out.conflict == "":
				out.conflict = s
			}
		}
	}
	for _, h := range p.Hreflangs() {
		if u := resolveRef(resolveAt, h.Href); u != nil {
			out.hreflang = append(out.hreflang, storage.Hreflang{Lang: h.Lang, URL: u.String()})
		}
	}
	for _, content := range p.MetaRobots(agent) {
		out.robots = appendDirectives(out.robots, content)
	}
	out.title, out.h1, out.description = p.Title(), p.H1(), p.Description()
	out.facts = p.Facts
	return out
}

// graph is every link of the page from, followed or not, for the link
// graph; pageNofollow marks them all nofollow. It is made only for a crawl
// that writes the link graph.
func (e extracted) graph(from string, pageNofollow bool) []storage.Link {
	var out []storage.Link
	for _, r := range e.refs {
		if gk := graphKind(r); gk != "" {
			if u := resolveRef(e.base, r.URL); u != nil {
				out = append(out, storage.Link{From: from, To: u.String(), Kind: gk, Rel: r.Rel,
					Nofollow: r.Nofollow || pageNofollow, Anchor: r.Anchor})
			}
		}
	}
	return out
}

// graphKind is the link graph's kind of a reference (see the README,
// "Outputs"), or "" for one that is no link (a form's target, <base>, a
// cite).
func graphKind(r links.Ref) string {
	switch {
	case r.Kind == links.Form || r.Kind == links.Base:
		return ""
	case r.CSS:
		return "css"
	case r.Kind == links.Refresh:
		return "meta-refresh"
	case r.Kind == links.Canonical:
		return "canonical"
	case r.Hreflang != "":
		return "hreflang"
	}
	switch r.Tag {
	case "a", "area", "frame", "iframe", "link", "script":
		return r.Tag
	}
	if r.Kind == links.Requisite {
		return "img" // images, and the media and objects a page shows as they are
	}
	return ""
}

// kindOf maps the kinds of links.Ref the crawler follows or fetches to its
// own; the others (forms, cite, <base>) it neither follows nor fetches.
var kindOf = map[links.Kind]linkKind{
	links.Anchor: linkAnchor, links.Frame: linkFrame, links.Alternate: linkAlternate,
	links.Canonical: linkCanonical, links.Refresh: linkRefresh, links.Requisite: linkRequisite,
}

// resolveLink resolves a reference as written against base, for the
// crawl to follow or fetch, or returns nil when it is empty,
// fragment-only, unparseable or not http(s).
func resolveLink(base *url.URL, raw string) *url.URL {
	u := resolveRef(base, raw)
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	return u
}

// resolveRef resolves a reference as written against base, whatever its
// scheme, for what a page says (its canonical, a file:// one included, and
// the link graph, mailto: and ftp: links included), or returns nil when it
// is empty, fragment-only, unparseable, or a script or inline data, which
// lead nowhere.
func resolveRef(base *url.URL, raw string) *url.URL {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.HasPrefix(raw, "#") {
		return nil
	}
	u, err := base.Parse(raw)
	if err != nil || u.Scheme == "javascript" || u.Scheme == "data" {
		return nil
	}
	return u
}

// resolver resolves the links of one page as resolveLink does, each
// distinct reference once, less its fragment: a page often links to one
// URL many times, at different anchors (the Python docs, 5 times on
// average). Links to one URL share one *url.URL, with no fragment; only
// admit reads it, and it drops the fragment anyway.
type resolver struct {
	base *url.URL
	seen map[string]*url.URL // by the reference before its '#'; nil: refused
}

func (r *resolver) resolve(raw string) *url.URL {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw[0] == '#' {
		return nil
	}
	ref, frag, _ := strings.Cut(raw, "#")
	if !validEscapes(frag) {
		return nil // url.Parse refuses a fragment with a bad escape
	}
	u, ok := r.seen[ref]
	if !ok {
		u = resolveLink(r.base, ref)
		r.seen[ref] = u
	}
	return u
}

// validEscapes reports whether each '%' of s starts an escape of two hex
// digits, which is all url.Parse asks of a fragment.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// extractCSS returns the url() and @import references of a stylesheet,
// resolved against its URL: requisites of the mirror. At most limit
// references are read (all when limit is 0); cut counts the rest.
func extractCSS(body []byte, cssURL *url.URL, limit int) (out []link, cut int) {
	n := 0
	links.ScanCSS(body, func(raw string) {
		if n++; limit > 0 && n > limit {
			cut++
			return
		}
		if u := resolveLink(cssURL, raw); u != nil {
			out = append(out, link{url: u, kind: linkRequisite})
		}
	})
	return out, cut
}

// appendDirectives adds the lower-case directives of a robots meta tag's
// content or an X-Robots-Tag value to list, each once.
func appendDirectives(list []string, content string) []string {
	for _, d := range strings.FieldsFunc(strings.ToLower(content), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if !slices.Contains(list, d) {
			list = append(list, d)
		}
	}
	return list
}

// nofollow reports whether directives stop a page's links being followed.
func nofollow(directives []string) bool {
	return slices.Contains(directives, "nofollow") || slices.Contains(directives, "none")
}

// noindex reports whether directives ask that the page not be indexed.
func noindex(directives []string) bool {
	return slices.Contains(directives, "noindex") || slices.Contains(directives, "none")
}

// xRobotsTag adds to list the directives of a response's X-Robots-Tag
// headers that apply to us: those with no agent, or for our product token
// ("ExampleBot: nofollow").
func xRobotsTag(list []string, h http.Header, agent string) []string {
	for _, v := range h.Values("X-Robots-Tag") {
		if name, rest, ok := strings.Cut(v, ":"); ok && !strings.ContainsAny(name, ", ") {
			if !strings.EqualFold(strings.TrimSpace(name), agent) {
				continue
			}
			v = rest
		}
		list = appendDirectives(list, v)
	}
	return list
}

// linkCanonical is the target of a Link: <…>; rel="canonical" header
// (RFC 8288), resolved against base; nil when there is none.
func linkHeaderCanonical(h http.Header, base *url.URL) *url.URL {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(strings.TrimSpace(k), "rel") && hasToken(strings.Trim(strings.TrimSpace(val), `"`), "canonical") {
					return resolveRef(base, target[1:len(target)-1])
				}
			}
		}
	}
	return nil
}

// hasToken reports whether a space-separated list such as rel holds tok,
// case-insensitively.
func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}
