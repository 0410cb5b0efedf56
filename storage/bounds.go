package storage

import "unicode/utf8"

// MaxLine is the longest line an Inventory writes, newline included, and
// so the longest that readers of the inventory and the link graph (the
// report, ReadInventory) need take. Every field of a Record and a Link is
// capped (see the README, "Outputs") so that even a record whose every
// field is at its cap, in characters JSON writes as six bytes (\u0001),
// stays under it.
const MaxLine = 1 << 20

// The caps of what a page or a server says, as written to the inventory and
// the link graph. A URL is cut at MaxURLBytes, the largest
// scope.max_url_length, so that no URL the crawl queues is ever cut.
const (
	MaxURLBytes       = 16 << 10 // url, final_url, referrer, canonical, each hop and alternate; a link's from and to
	MaxTextChars      = 1024     // title, description, h1
	MaxErrorChars     = 1024     // error, content_type
	MaxChainHops      = 64       // redirect_chain entries
	MaxListBytes      = 32 << 10 // redirect_chain, hreflang: URLs (and languages) in all
	MaxHreflangs      = 200      // hreflang entries
	MaxLangChars      = 64       // an hreflang's lang
	MaxDirectives     = 32       // meta_robots entries
	MaxDirectiveChars = 64       // a meta_robots entry
	MaxRelChars       = 256      // a link's rel
)

// bounded is r with each field cut to its cap.
func (r Record) bounded() Record {
	r.URL, r.FinalURL = cutBytes(r.URL, MaxURLBytes), cutBytes(r.FinalURL, MaxURLBytes)
	r.Referrer, r.Canonical = cutBytes(r.Referrer, MaxURLBytes), cutBytes(r.Canonical, MaxURLBytes)
	r.ContentType, r.Error = cutChars(r.ContentType, MaxErrorChars), cutChars(r.Error, MaxErrorChars)
	r.Title, r.Description = cutChars(r.Title, MaxTextChars), cutChars(r.Description, MaxTextChars)
	r.H1 = cutChars(r.H1, MaxTextChars)
	if len(r.RedirectChain) > 0 {
		chain, room := make([]string, 0, min(len(r.RedirectChain), MaxChainHops)), MaxListBytes
		for _, u := range r.RedirectChain[:min(len(r.RedirectChain), MaxChainHops)] {
			if u = cutBytes(u, MaxURLBytes); len(u) > room {
				break
			}
			chain, room = append(chain, u), room-len(u)
		}
		r.RedirectChain = chain
	}
	if len(r.Hreflang) > 0 {
		alts, room := make([]Hreflang, 0, min(len(r.Hreflang), MaxHreflangs)), MaxListBytes
		for _, h := range r.Hreflang[:min(len(r.Hreflang), MaxHreflangs)] {
			h = Hreflang{Lang: cutChars(h.Lang, MaxLangChars), URL: cutBytes(h.URL, MaxURLBytes)}
			if len(h.Lang)+len(h.URL) > room {
				break
			}
			alts, room = append(alts, h), room-len(h.Lang)-len(h.URL)
		}
		r.Hreflang = alts
	}
	if len(r.MetaRobots) > 0 {
		dirs := make([]string, 0, min(len(r.MetaRobots), MaxDirectives))
		for _, d := range r.MetaRobots[:min(len(r.MetaRobots), MaxDirectives)] {
			dirs = append(dirs, cutChars(d, MaxDirectiveChars))
		}
		r.MetaRobots = dirs
	}
	return r
}

// bounded is l with each field cut to its cap.
func (l Link) bounded() Link {
	l.From, l.To = cutBytes(l.From, MaxURLBytes), cutBytes(l.To, MaxURLBytes)
	l.Kind, l.Rel = cutChars(l.Kind, MaxRelChars), cutChars(l.Rel, MaxRelChars)
	l.Anchor = cutChars(l.Anchor, MaxTextChars) // storage/links keeps 100
	return l
}

// cutChars is s cut after its first n characters (an invalid byte counts
// as one).
func cutChars(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// cutBytes is s cut to at most n bytes, at the start of a character.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for k := 0; k < utf8.UTFMax && k < n; k++ {
		if utf8.RuneStart(s[n-k]) {
			return s[:n-k]
		}
	}
	return s[:n] // no character starts near n: invalid bytes, cut anywhere
}
