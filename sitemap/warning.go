package sitemap

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Rule names what a Warning is about: a cap, a location rule, or damage.
type Rule string

// The rules a Warning can name.
const (
	// Caps (Warning.Limit holds the cap).
	RuleMaxURLs     Rule = "max_urls"     // more page entries than Limits.MaxURLs: the rest is dropped
	RuleMaxBytes    Rule = "max_bytes"    // more bytes than Limits.MaxBytes: the file is cut
	RuleMaxChildren Rule = "max_children" // more sitemaps than Limits.MaxChildren in an index

	// Location rules; the entry is dropped.
	RuleScope      Rule = "scope"       // not under the sitemap's scheme, host, port (and folder, for pages)
	RuleTooLong    Rule = "too_long"    // longer than 2,048 characters
	RuleScheme     Rule = "scheme"      // neither http nor https
	RuleInvalidURL Rule = "invalid_url" // missing, unparsable, or relative where only absolute URLs may be
	RuleControl    Rule = "control"     // a C0 control character or DEL anywhere in it, the fragment included

	// Bad metadata; the entry is kept without it.
	RuleLastmod    Rule = "lastmod"    // not a W3C Datetime (nor, in RSS, an RFC 822 date)
	RuleChangefreq Rule = "changefreq" // not one of always … never
	RulePriority   Rule = "priority"   // not a number from 0.0 to 1.0

	// The file as a whole.
	RuleMalformed Rule = "malformed" // damaged or truncated: entries before the damage were kept
	RuleFormat    Rule = "format"    // not a sitemap format, or an undecodable encoding

	// Walking indexes.
	RuleNestedIndex Rule = "nested_index" // an index listed by an index: not followed
	RuleDuplicate   Rule = "duplicate"    // a sitemap listed again, or an index listing itself: read once
	RuleFetch       Rule = "fetch"        // a sitemap could not be fetched or read to its end
)

// Warning reports one thing skipped, cut or dropped, and why. Damage or a
// cap ends the reading of the file concerned; no Warning ends a walk.
type Warning struct {
	Sitemap string // URL of the file concerned
	Rule    Rule   // which rule or cap
	URL     string // the entry or child concerned, as written; empty when none
	Limit   int64  // the cap, for the cap rules
	Detail  string // a human explanation
}

// maxShown is how much of a URL a warning's text shows.
const maxShown = 200

// String renders w on one line: "SITEMAP: RULE: URL: DETAIL", URL left out
// when empty. Control characters are escaped and long URLs shortened.
func (w Warning) String() string {
	var b strings.Builder
	b.WriteString(oneLine(w.Sitemap))
	b.WriteString(": ")
	b.WriteString(string(w.Rule))
	if w.URL != "" {
		b.WriteString(": ")
		b.WriteString(oneLine(w.URL))
	}
	if w.Detail != "" {
		b.WriteString(": ")
		b.WriteString(oneLine(w.Detail))
	}
	return b.String()
}

// oneLine shortens s to maxShown bytes and quotes it if it holds control
// characters, so that a warning stays on one line.
func oneLine(s string) string {
	if len(s) > maxShown {
		n := maxShown
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return strconv.Quote(s)
		}
	}
	return s
}
