package sitemap

import "time"

// Kind is the format of a sitemap file, told by its content alone.
type Kind uint8

// The formats Read tells apart.
const (
	KindUnknown Kind = iota // empty, not a sitemap, or damaged before its root element
	KindURLSet              // <urlset>: pages
	KindIndex               // <sitemapindex>: child sitemaps
	KindText                // plain text, one URL per line: pages
	KindRSS                 // RSS 2.0 (or 1.0) feed: <item><link> pages
	KindAtom                // Atom 1.0 (or 0.3) feed: <entry><link href> pages
)

var kindNames = [...]string{"unknown", "urlset", "sitemapindex", "text", "rss", "atom"}

// String returns the format's name: "urlset", "sitemapindex", "text",
// "rss", "atom" or "unknown".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Entry is one accepted location of a sitemap file: a page, or in an index
// a child sitemap. The location rules have been applied to it already.
type Entry struct {
	// Loc is an absolute http or https URL: as written in the file (after
	// XML entities are decoded and surrounding white space trimmed), or,
	// when the file gave a relative reference, resolved against the
	// sitemap's URL.
	Loc string
	// Lastmod is the parsed <lastmod> (<updated> in Atom, <pubDate> in
	// RSS), in UTC; zero when absent or invalid.
	Lastmod time.Time
	// LastmodRaw is the lastmod as written, set only when it parsed.
	LastmodRaw string
	// ChangeFreq is one of always, hourly, daily, weekly, monthly, yearly
	// or never, in lower case; empty when absent or invalid. Pages only.
	ChangeFreq string
	// Priority is between 0.0 and 1.0; 0.5 when absent or invalid. Pages
	// only: it is zero for a child sitemap.
	Priority float64
	// Child reports that Loc names a sitemap listed by an index rather
	// than a page.
	Child bool
	// Sitemap is the URL of the file the entry was read from.
	Sitemap string
}

// DefaultPriority is the priority of a page whose entry gives none.
const DefaultPriority = 0.5

// Result sums up the reading of one file.
type Result struct {
	Kind     Kind  // the file's format
	Pages    int   // page entries yielded
	Children int   // child sitemap entries yielded
	Dropped  int   // entries dropped by a rule, and the first one past a cap (each with a Warning)
	Bytes    int64 // uncompressed bytes read
	Gzip     int   // gzip layers undone
	// Cut reports that the file was not read to its end: a cap was hit or
	// the file was damaged. Entries before the cut were yielded.
	Cut bool
}
