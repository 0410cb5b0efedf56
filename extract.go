package crawler

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
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
// resolved against <base href> when there is one. agent is our product token,
// for <meta name=AGENT content=...>. Unparseable hrefs are skipped.
func extractHTML(body []byte, contentType string, pageURL *url.URL, agent string) extracted {
	var out extracted
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	doc, err := goquery.NewDocumentFromReader(r)
	if err != nil {
		return out
	}
	base := pageURL
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if b, err := pageURL.Parse(strings.TrimSpace(href)); err == nil {
			base = b
		}
	}
	add := func(raw string, kind linkKind, nofollow bool) *url.URL {
		raw = strings.TrimSpace(raw)
		if raw == "" || strings.HasPrefix(raw, "#") {
			return nil
		}
		u, err := base.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return nil
		}
		out.links = append(out.links, link{url: u, kind: kind, nofollow: nofollow})
		return u
	}

	doc.Find("meta[name]").Each(func(_ int, s *goquery.Selection) {
		name := strings.ToLower(strings.TrimSpace(s.AttrOr("name", "")))
		if name == "robots" || (agent != "" && name == strings.ToLower(agent)) {
			nofollow, noindex := robotsDirectives(s.AttrOr("content", ""))
			out.nofollow = out.nofollow || nofollow
			out.noindex = out.noindex || noindex
		}
	})
	doc.Find("a[href], area[href]").Each(func(_ int, s *goquery.Selection) {
		add(s.AttrOr("href", ""), linkAnchor, hasToken(s.AttrOr("rel", ""), "nofollow"))
	})
	doc.Find("frame[src], iframe[src]").Each(func(_ int, s *goquery.Selection) {
		add(s.AttrOr("src", ""), linkFrame, false)
	})
	doc.Find("link[href]").Each(func(_ int, s *goquery.Selection) {
		rel, href := s.AttrOr("rel", ""), s.AttrOr("href", "")
		switch {
		case hasToken(rel, "canonical"):
			if u := add(href, linkCanonical, false); u != nil && out.canonical == "" {
				out.canonical = u.String()
			}
		case hasToken(rel, "alternate"), hasToken(rel, "next"), hasToken(rel, "prev"):
			u := add(href, linkAlternate, hasToken(rel, "nofollow"))
			if lang := strings.TrimSpace(s.AttrOr("hreflang", "")); u != nil && lang != "" {
				if out.hreflang == nil {
					out.hreflang = map[string]string{}
				}
				out.hreflang[lang] = u.String()
			}
		case hasToken(rel, "stylesheet"), hasToken(rel, "icon"), hasToken(rel, "preload"):
			add(href, linkRequisite, false)
		}
	})
	doc.Find(`meta[http-equiv]`).Each(func(_ int, s *goquery.Selection) {
		if strings.EqualFold(strings.TrimSpace(s.AttrOr("http-equiv", "")), "refresh") {
			if target := refreshURL(s.AttrOr("content", "")); target != "" {
				add(target, linkRefresh, false)
			}
		}
	})
	for _, sel := range []struct{ query, attr string }{
		{"img[src]", "src"}, {"script[src]", "src"}, {"source[src]", "src"},
		{"video[poster]", "poster"}, {"audio[src]", "src"}, {"embed[src]", "src"},
		{"input[type=image][src]", "src"}, {"track[src]", "src"},
	} {
		doc.Find(sel.query).Each(func(_ int, s *goquery.Selection) {
			add(s.AttrOr(sel.attr, ""), linkRequisite, false)
		})
	}
	doc.Find("img[srcset], source[srcset]").Each(func(_ int, s *goquery.Selection) {
		for _, c := range strings.Split(s.AttrOr("srcset", ""), ",") {
			if f := strings.Fields(c); len(f) > 0 {
				add(f[0], linkRequisite, false)
			}
		}
	})
	doc.Find("style").Each(func(_ int, s *goquery.Selection) {
		for _, raw := range cssURLs(s.Text()) {
			add(raw, linkRequisite, false)
		}
	})
	doc.Find("[style]").Each(func(_ int, s *goquery.Selection) {
		for _, raw := range cssURLs(s.AttrOr("style", "")) {
			add(raw, linkRequisite, false)
		}
	})
	return out
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
