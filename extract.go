package crawler

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
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
	linkRequisite                 // img, script, stylesheet, CSS url(): mirror only
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
	links     []link
	canonical string
	hreflang  map[string]string // language → URL, from <link rel=alternate hreflang>
	nofollow  bool              // <meta name=robots content=nofollow|none>
	noindex   bool
}

// isHTML reports whether a response is HTML, by its Content-Type or, when
// that is missing, by sniffing the body.
func isHTML(contentType string, body []byte) bool {
	if strings.TrimSpace(contentType) == "" {
		contentType = http.DetectContentType(body)
	}
	mt, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	mt = strings.TrimSpace(mt)
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// isCSS reports whether a response is a stylesheet.
func isCSS(contentType string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	return strings.TrimSpace(mt) == "text/css"
}

// extractHTML parses an HTML page fetched from pageURL and returns its links,
// in document order, resolved against <base href> when there is one. agent
// is our product token, for <meta name=AGENT content=...>. Unparseable hrefs
// are skipped.
//
// The page is read as a browser without scripts would (so the content of
// <noscript> counts, as it does for wget) into the flat document of
// linkDocument, which goquery walks once.
func extractHTML(body []byte, contentType string, pageURL *url.URL, agent string) extracted {
	var r io.Reader = bytes.NewReader(body)
	if enc, name, _ := charset.DetermineEncoding(body, contentType); name != "utf-8" {
		r = enc.NewDecoder().Reader(r)
	}
	return extractFrom(linkDocument(r), pageURL, agent)
}

// extractFrom reads the links of a parsed page (see extractHTML).
func extractFrom(root *html.Node, pageURL *url.URL, agent string) extracted {
	var out extracted
	var refs []ref
	base := ""
	goquery.NewDocumentFromNode(root).Find("*").Each(func(_ int, s *goquery.Selection) {
		if css, ok := s.Attr("style"); ok {
			refs = appendCSS(refs, css)
		}
		switch goquery.NodeName(s) {
		case "base":
			if href, ok := s.Attr("href"); ok && base == "" {
				base = href
			}
		case "meta":
			refs = metaRefs(refs, s, agent, &out)
		case "a", "area":
			refs = appendRef(refs, s, "href", linkAnchor)
			if len(refs) > 0 && hasToken(s.AttrOr("rel", ""), "nofollow") {
				refs[len(refs)-1].nofollow = true
			}
		case "frame", "iframe":
			refs = appendRef(refs, s, "src", linkFrame)
		case "link":
			refs = linkRefs(refs, s)
		case "img", "source":
			refs = appendRef(refs, s, "src", linkRequisite)
			for _, c := range strings.Split(s.AttrOr("srcset", ""), ",") {
				if f := strings.Fields(c); len(f) > 0 {
					refs = append(refs, ref{raw: f[0], kind: linkRequisite})
				}
			}
		case "script", "audio", "embed", "track":
			refs = appendRef(refs, s, "src", linkRequisite)
		case "video":
			refs = appendRef(refs, s, "src", linkRequisite)
			refs = appendRef(refs, s, "poster", linkRequisite)
		case "input":
			if strings.EqualFold(strings.TrimSpace(s.AttrOr("type", "")), "image") {
				refs = appendRef(refs, s, "src", linkRequisite)
			}
		case "object":
			refs = appendRef(refs, s, "data", linkRequisite)
		case "body", "table", "td", "th":
			refs = appendRef(refs, s, "background", linkRequisite)
		case "style":
			refs = appendCSS(refs, s.Text())
		}
	})

	resolveAt := pageURL
	if b, err := pageURL.Parse(strings.TrimSpace(base)); base != "" && err == nil {
		resolveAt = b
	}
	for _, rf := range refs {
		raw := strings.TrimSpace(rf.raw)
		if raw == "" || strings.HasPrefix(raw, "#") {
			continue
		}
		u, err := resolveAt.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		out.links = append(out.links, link{url: u, kind: rf.kind, nofollow: rf.nofollow})
		if rf.kind == linkCanonical && out.canonical == "" {
			out.canonical = u.String()
		}
		if rf.hreflang != "" {
			if out.hreflang == nil {
				out.hreflang = map[string]string{}
			}
			out.hreflang[rf.hreflang] = u.String()
		}
	}
	return out
}

// ref is a link as written in a page, before it is resolved.
type ref struct {
	raw      string
	kind     linkKind
	nofollow bool
	hreflang string
}

// appendRef adds the URL in attribute attr of s, if it has one.
func appendRef(refs []ref, s *goquery.Selection, attr string, kind linkKind) []ref {
	if v, ok := s.Attr(attr); ok {
		refs = append(refs, ref{raw: v, kind: kind})
	}
	return refs
}

// appendCSS adds the url() and @import references of a stylesheet's text.
func appendCSS(refs []ref, css string) []ref {
	for _, raw := range cssURLs(css) {
		refs = append(refs, ref{raw: raw, kind: linkRequisite})
	}
	return refs
}

// metaRefs reads a <meta>: robots directives for everyone or for our
// agent, and the target of a refresh.
func metaRefs(refs []ref, s *goquery.Selection, agent string, out *extracted) []ref {
	name := strings.TrimSpace(s.AttrOr("name", ""))
	if strings.EqualFold(name, "robots") || (agent != "" && strings.EqualFold(name, agent)) {
		nofollow, noindex := robotsDirectives(s.AttrOr("content", ""))
		out.nofollow = out.nofollow || nofollow
		out.noindex = out.noindex || noindex
	}
	if strings.EqualFold(strings.TrimSpace(s.AttrOr("http-equiv", "")), "refresh") {
		if target := refreshURL(s.AttrOr("content", "")); target != "" {
			refs = append(refs, ref{raw: target, kind: linkRefresh})
		}
	}
	return refs
}

// linkRefs reads a <link href> by its rel: a canonical; navigation between
// pages (alternate with its hreflang, next, prev and the other HTML 4 link
// types that name documents), followed as links; or what a page needs to
// display (stylesheets, icons, preloads, a manifest, an OpenSearch
// description), fetched for the mirror. Other rels, such as preconnect or
// dns-prefetch, name no document.
func linkRefs(refs []ref, s *goquery.Selection) []ref {
	href, ok := s.Attr("href")
	if !ok {
		return refs
	}
	rel := s.AttrOr("rel", "")
	nofollow := hasToken(rel, "nofollow")
	for _, tok := range strings.Fields(strings.ToLower(rel)) {
		switch tok {
		case "canonical":
			return append(refs, ref{raw: href, kind: linkCanonical})
		case "alternate", "next", "prev", "previous", "first", "last", "up", "index", "contents", "start":
			lang := ""
			if tok == "alternate" {
				lang = strings.TrimSpace(s.AttrOr("hreflang", ""))
			}
			return append(refs, ref{raw: href, kind: linkAlternate, nofollow: nofollow, hreflang: lang})
		case "stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon",
			"preload", "modulepreload", "manifest", "search":
			return append(refs, ref{raw: href, kind: linkRequisite})
		}
	}
	return refs
}

// extractCSS returns the url() and @import references of a stylesheet,
// resolved against its URL: requisites of the mirror.
func extractCSS(body []byte, cssURL *url.URL) []link {
	var out []link
	for _, raw := range cssURLs(string(body)) {
		if u, err := cssURL.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			out = append(out, link{url: u, kind: linkRequisite})
		}
	}
	return out
}

var cssURLPattern = regexp.MustCompile(`(?i)url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')`)

// cssURLs lists the URLs a stylesheet refers to, skipping data: URIs.
func cssURLs(css string) []string {
	var out []string
	for _, m := range cssURLPattern.FindAllStringSubmatch(css, -1) {
		for _, g := range m[1:] {
			if g = strings.TrimSpace(g); g != "" && !strings.HasPrefix(strings.ToLower(g), "data:") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// refreshURL returns the URL of a meta refresh content such as
// `5; url=/next` or `0;URL='/x'`, or "" when there is none.
func refreshURL(content string) string {
	_, rest, ok := strings.Cut(content, ";")
	if !ok {
		_, rest, ok = strings.Cut(content, ",")
		if !ok {
			return ""
		}
	}
	rest = strings.TrimSpace(rest)
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "url") {
		rest = strings.TrimSpace(rest[3:])
		if !strings.HasPrefix(rest, "=") {
			return ""
		}
		rest = strings.TrimSpace(rest[1:])
	}
	return strings.Trim(rest, `'"`)
}

// robotsDirectives reads the content of a robots meta tag or an
// X-Robots-Tag value: "nofollow" and "none" stop links being followed,
// "noindex" and "none" mark the page as not to be indexed.
func robotsDirectives(content string) (nofollow, noindex bool) {
	for _, d := range strings.FieldsFunc(strings.ToLower(content), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		switch d {
		case "nofollow":
			nofollow = true
		case "noindex":
			noindex = true
		case "none":
			nofollow, noindex = true, true
		}
	}
	return nofollow, noindex
}

// xRobotsTag applies the X-Robots-Tag headers of a response: directives with
// no agent, or for our product token ("ExampleBot: nofollow"), count.
func xRobotsTag(h http.Header, agent string) (nofollow, noindex bool) {
	for _, v := range h.Values("X-Robots-Tag") {
		if name, rest, ok := strings.Cut(v, ":"); ok && !strings.ContainsAny(name, ", ") {
			if !strings.EqualFold(strings.TrimSpace(name), agent) {
				continue
			}
			v = rest
		}
		nf, ni := robotsDirectives(v)
		nofollow, noindex = nofollow || nf, noindex || ni
	}
	return nofollow, noindex
}

// hasToken reports whether a space-separated attribute such as rel holds tok,
// case-insensitively.
func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}
