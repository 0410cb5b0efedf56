package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// TopN is how many URLs Slowest and Largest hold.
const TopN = 20

// maxLinkDepth bounds the link depths the report counts: far beyond any
// crawl's, and the length of the depth table it may make.
const maxLinkDepth = 1 << 20

// Inputs are the files a report is made from.
type Inputs struct {
	// Inventory is the JSON Lines inventory (storage.Record per line):
	// one crawl's, or several workers' concatenated. Required.
	Inventory io.Reader
	// Links is the JSON Lines link graph (storage.Link per line); nil
	// when there is none, and the tables that need it are left null.
	Links io.Reader
	// Previous is an earlier audit's inventory to compare with; nil for
	// no comparison.
	Previous io.Reader
	// Options are how the rules judge (the config's report block); the
	// zero value is the README's thresholds.
	Options Options
}

// Report is the audit: the README's "Audit report" table, member for
// member. A list that could not be made (orphans without a link graph,
// not_in_sitemap when no sitemap was read) is nil, written null; every
// other list is written [] when empty.
type Report struct {
	Overview Overview `json:"overview"`
	// Findings are the rules' verdicts, by rule then URL, one per
	// (rule, URL); Rules count them for every rule, in the README's order.
	Findings      []Finding        `json:"findings"`
	Rules         []RuleCount      `json:"rules"`
	Broken        []Broken         `json:"broken"`
	Redirects     []Redirect       `json:"redirects"`
	Orphans       []string         `json:"orphans"`
	NotInSitemap  []string         `json:"not_in_sitemap"`
	SitemapIssues []SitemapIssue   `json:"sitemap_issues"`
	Noindex       []string         `json:"noindex"`
	Nofollow      []string         `json:"nofollow"`
	Canonicals    []CanonicalIssue `json:"canonicals"`
	Titles        TextCheck        `json:"titles"`
	Descriptions  TextCheck        `json:"descriptions"`
	Depth         DepthCounts      `json:"depth"`
	Slowest       []Slow           `json:"slowest"`
	Largest       []Large          `json:"largest"`
	// Pages are the 200 HTML pages with their inlinks and link score;
	// null without a link graph.
	Pages []PageScore `json:"pages"`
	// Extracted are the custom extractions of the 200 HTML pages that
	// have some (the config's extract), by URL.
	Extracted []Extracted `json:"extracted"`
	// Compare is there only when Inputs.Previous was given.
	Compare *Comparison `json:"compare,omitempty"`

	// Warnings say what was skipped or could not be made: malformed
	// lines (how many, the first one's number), a missing link graph.
	Warnings []string `json:"-"`
	// HasLinks and HasSitemap say whether a link graph was read and
	// whether any sitemap was, for the formats' notes on null tables.
	HasLinks   bool `json:"-"`
	HasSitemap bool `json:"-"`
	// Baselined says MarkBaseline compared the findings with a baseline.
	Baselined bool `json:"-"`
	// Sites are the origins of the crawl's seeds (records found_via
	// seed), sorted, at most maxSites: what the HTML report is of.
	Sites []string `json:"-"`
}

// maxSites bounds Report.Sites.
const maxSites = 5

// Overview counts the URLs of the inventory by their current state.
type Overview struct {
	URLs       int      `json:"urls"`         // distinct URLs with a record
	Fetched    int      `json:"fetched"`      // of those, with a response or a network error
	ByStatus   ByStatus `json:"by_status"`    // the fetched, by their current status
	Disallowed int      `json:"disallowed"`   // refused by robots.txt
	OutOfScope int      `json:"out_of_scope"` // refused by scope
	PagesHTML  int      `json:"pages_html"`   // 2xx HTML pages of the crawl's hosts (a 304's earlier answer counts)
}

// ByStatus counts fetched URLs by status class. Error counts network
// errors: no response at all.
type ByStatus struct {
	S2xx  int `json:"2xx"`
	S3xx  int `json:"3xx"`
	S304  int `json:"304"`
	S4xx  int `json:"4xx"`
	S5xx  int `json:"5xx"`
	Error int `json:"error"`
}

// Broken is a URL whose final status is 4xx or 5xx, or that got no
// answer, with every page linking to it.
type Broken struct {
	URL     string   `json:"url"`
	Status  int      `json:"status"` // the final status: 0 for a network error
	Error   string   `json:"error,omitempty"`
	Inlinks []Inlink `json:"inlinks"` // null without a link graph
}

// Inlink is a page linking to a broken URL.
type Inlink struct {
	From   string `json:"from"`
	Anchor string `json:"anchor"`
}

// Redirect is a URL that answers with a redirect.
type Redirect struct {
	URL         string `json:"url"`
	FinalURL    string `json:"final_url"`
	FinalStatus int    `json:"final_status"` // 0 when the end of the chain has no record or no answer
	Hops        int    `json:"hops"`
	Loop        bool   `json:"loop"`
}

// SitemapIssue is a URL a sitemap lists that should not be there.
type SitemapIssue struct {
	URL   string `json:"url"`
	Issue string `json:"issue"` // disallowed, redirect, not-200, noindex, canonicalised
}

// CanonicalIssue is a page whose canonical URL is not itself.
type CanonicalIssue struct {
	URL       string `json:"url"`
	Canonical string `json:"canonical"`
	Issue     string `json:"issue"` // not-http, other-host, not-200, elsewhere
}

// TextCheck is the check of a text every page should have once: its
// title or meta description.
type TextCheck struct {
	Missing    []string    `json:"missing"`
	Duplicates []Duplicate `json:"duplicates"`
}

// Duplicate is a text that more than one page has: a title, or a
// description, whichever the check is of.
type Duplicate struct {
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	URLs        []string `json:"urls"`
}

// Text is the title or description d is about.
func (d Duplicate) Text() string { return d.Title + d.Description }

// Slow is one of the slowest pages.
type Slow struct {
	URL        string `json:"url"`
	DurationMS int64  `json:"duration_ms"`
}

// Large is one of the largest pages.
type Large struct {
	URL   string `json:"url"`
	Bytes int64  `json:"bytes"`
}

// DepthCounts is the number of 200 HTML pages at each link depth: index
// i holds depth i. Its JSON is an object {"0": n, "1": n, …} in order of
// depth, depths with no page left out.
type DepthCounts []int

// MarshalJSON writes the counts in order of depth.
func (d DepthCounts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, n := range d {
		if n == 0 {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *DepthCounts) UnmarshalJSON(b []byte) error {
	var m map[string]int
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*d = nil
	for k, n := range m {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i > maxLinkDepth {
			return fmt.Errorf("depth %q: not a link depth", k)
		}
		for len(*d) <= i {
			*d = append(*d, 0)
		}
		(*d)[i] = n
	}
	return nil
}

// Comparison is what changed since an earlier inventory, for the URLs of
// the crawl's own hosts.
type Comparison struct {
	New     []string `json:"new"`     // URLs with a record now and none before
	Gone    []string `json:"gone"`    // URLs with a record before and none now
	Changes []Change `json:"changes"` // sorted by URL, then status, title, canonical, noindex
}

// Change is one fact of a URL that changed.
type Change struct {
	URL   string `json:"url"`
	Field string `json:"field"` // status, title, canonical, noindex
	Old   string `json:"old"`
	New   string `json:"new"`
}

// Extracted is a page's custom extractions: each name's value, a string
// or a list of them (all: true).
type Extracted struct {
	URL    string         `json:"url"`
	Values map[string]any `json:"values"`
}
