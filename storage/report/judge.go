package report

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// judgeAll applies the rules (see the README's "The audit's verdicts")
// to the crawl, its link graph (nil when there is none) and the tables
// fill made of them, into rep.Findings and rep.Rules.
func (c *crawl) judgeAll(rep *Report, j *judge, broken bitset, g *graph) {
	c.judgeBroken(rep, j, g)
	for _, r := range rep.Redirects {
		if r.Loop {
			j.add("redirect-loop", r.URL, "comes back to "+r.FinalURL)
		}
		if r.Hops >= 2 && !r.Loop { // a loop has no end to chain to: it is a loop
			j.add("redirect-chain", r.URL, fmt.Sprintf("%d hops to %s", r.Hops, r.FinalURL))
		}
	}
	for _, u := range rep.Orphans {
		j.add("orphan", u, "")
	}
	for _, u := range rep.NotInSitemap {
		j.add("not-in-sitemap", u, "")
	}
	for _, s := range rep.SitemapIssues {
		j.add("sitemap-"+s.Issue, s.URL, "")
	}
	c.judgeTexts(rep.Titles, "title", j)
	c.judgeTexts(rep.Descriptions, "description", j)
	c.resolveHreflang()
	for _, id := range c.order() {
		p := &c.pages[id]
		u := c.urls[id]
		if g != nil && g.toRedirect.has(id) {
			detail := "a redirect loop"
			if end, _, loop := c.follow(id); !loop {
				detail = "redirects to " + c.urls[end]
			}
			j.add("link-to-redirect", u, detail)
		}
		if !p.htmlOK() {
			continue
		}
		if g != nil {
			if req, ok := g.mixed[id]; ok && strings.HasPrefix(u, "https:") {
				j.add("mixed-content", u, "loads "+req)
			}
		}
		switch issue := c.canonicalIssue(id); issue {
		case "not-http":
			j.add("canonical-not-http", u, p.canonical)
		case "other-host":
			j.add("canonical-other-host", u, p.canonical)
		case "not-200":
			j.add("canonical-broken", u, p.canonical)
		case "elsewhere":
			j.add("canonical-elsewhere", u, p.canonical)
		}
		if other, ok := c.conflict[id]; ok {
			j.add("canonical-conflict", u, fmt.Sprintf("%s and %s", c.canonicalOf(id), other))
		}
		if p.has(fNoindex) {
			j.add("noindex", u, "")
		}
		if n := utf8.RuneCountInString(p.title); n > j.opts.TitleMax {
			j.add("title-too-long", u, fmt.Sprintf("%d characters", n))
		}
		if n := utf8.RuneCountInString(p.descr); n > j.opts.DescriptionMax {
			j.add("description-too-long", u, fmt.Sprintf("%d characters", n))
		}
		if !p.has(fH1) {
			j.add("h1-missing", u, "")
		}
		if p.linkDepth > int32(j.opts.MaxDepth) {
			j.add("deep-page", u, fmt.Sprintf("link depth %d", p.linkDepth))
		}
		c.judgeHreflang(id, j)
		c.judgeFacts(id, j)
	}
	c.judgeDuplicates(j)
	j.done(rep)
}

// judgeFacts makes the rules on the body's facts of the 200 HTML page
// id, when the crawl recorded them (an inventory of an older crawl has
// none, and is not judged so).
func (c *crawl) judgeFacts(id uint32, j *judge) {
	p, u := &c.pages[id], c.urls[id]
	if p.ttfb > int32(j.opts.SlowTTFB.Milliseconds()) {
		j.add("slow-page", u, fmt.Sprintf("first byte after %d ms", p.ttfb))
	}
	if !p.has(fFacts) {
		return
	}
	if p.has(fImgNoAlt) {
		j.add("img-alt-missing", u, "")
	}
	if !p.has(fLang) {
		j.add("lang-missing", u, "")
	}
	if p.has(fH1Multi) {
		j.add("h1-multiple", u, "")
	}
	if p.words < int32(j.opts.ThinWords) {
		j.add("thin-content", u, fmt.Sprintf("%d words", p.words))
	}
	if strings.HasPrefix(u, "https:") && !p.has(fHSTS) {
		j.add("hsts-missing", u, "")
	}
}

// judgeBroken makes broken-link and broken-external-link of the broken
// URLs that a link points at (without a link graph: that were found by
// a link, or asked as external links).
func (c *crawl) judgeBroken(rep *Report, j *judge, g *graph) {
	for _, b := range rep.Broken {
		id, ok := c.id(b.URL)
		if !ok {
			continue
		}
		p := &c.pages[id]
		if g != nil && !g.brokenLinked.has(id) || g == nil && !p.has(fViaLinks) && !p.has(fExternal) {
			continue
		}
		detail := "no answer"
		if b.Status != 0 {
			detail = "status " + itoa(b.Status)
		} else if b.Error != "" {
			detail += ": " + b.Error
		}
		if len(b.Inlinks) > 0 {
			detail += ", linked from " + b.Inlinks[0].From
			if n := len(b.Inlinks) - 1; n > 0 {
				detail += fmt.Sprintf(" and %d more", n)
			}
		}
		rule := "broken-link"
		if p.has(fExternal) {
			rule = "broken-external-link"
		}
		j.add(rule, b.URL, detail)
	}
}

// judgeTexts makes KIND-missing and KIND-duplicate of a text check.
func (c *crawl) judgeTexts(tc TextCheck, kind string, j *judge) {
	for _, u := range tc.Missing {
		j.add(kind+"-missing", u, "")
	}
	rule := kind + "-duplicate"
	for _, d := range tc.Duplicates {
		// One detail for every page but the first, shared: a text
		// that a million pages have makes a million findings.
		more := ""
		if n := len(d.URLs) - 2; n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		j.add(rule, d.URLs[0], "same "+kind+" as "+d.URLs[1]+more)
		rest := "same " + kind + " as " + d.URLs[0] + more
		for _, u := range d.URLs[1:] {
			j.add(rule, u, rest)
		}
	}
}

// resolveHreflang turns each hreflang target into the id lookup finds it
// by (its canonical key, a fragment aside), for the pages to be compared.
func (c *crawl) resolveHreflang() {
	for _, ts := range c.hreflang {
		for i, t := range ts {
			if id, ok := c.lookup(c.urls[t]); ok {
				ts[i] = id
			}
		}
	}
}

// judgeHreflang makes the hreflang rules of the page id.
func (c *crawl) judgeHreflang(id uint32, j *judge) {
	u := c.urls[id]
	if lang, ok := c.badLang[id]; ok {
		j.add("hreflang-bad-code", u, fmt.Sprintf("%q", lang))
	}
	var broken, noReturn string
	for _, t := range c.hreflang[id] {
		q := &c.pages[t]
		if t == id || !q.has(fRecord) {
			continue // itself, or a page the crawl has no record of: not judged
		}
		end, _, loop := c.follow(t)
		if e := &c.pages[end]; broken == "" && (loop || !e.has(fRecord) || e.effStatus != 200) {
			broken = c.urls[t]
		}
		if noReturn == "" && q.effStatus == 200 && !slices.Contains(c.hreflang[t], id) {
			noReturn = c.urls[t]
		}
	}
	if broken != "" {
		j.add("hreflang-broken", u, broken)
	}
	if noReturn != "" {
		j.add("hreflang-no-return", u, noReturn+" does not name it")
	}
}

// validLang reports whether s is x-default or a BCP 47 language tag of
// the form hreflang takes: a language of 2 or 3 letters, then optionally
// a script of 4 letters, then optionally a region of 2 letters or 3
// digits, separated by '-'.
func validLang(s string) bool {
	if strings.EqualFold(s, "x-default") {
		return true
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || !alpha(parts[0], 2, 3) {
		return false
	}
	rest := parts[1:]
	if len(rest) > 0 && alpha(rest[0], 4, 4) {
		rest = rest[1:]
	}
	if len(rest) > 0 && (alpha(rest[0], 2, 2) || digits(rest[0], 3)) {
		rest = rest[1:]
	}
	return len(rest) == 0
}

func alpha(s string, least, most int) bool {
	if len(s) < least || len(s) > most {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i] | 0x20; b < 'a' || b > 'z' {
			return false
		}
	}
	return true
}

func digits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
