package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Table is one table of the report as rows of text: what the text, CSV
// and HTML formats write.
type Table struct {
	Name    string // the JSON member, and the CSV file's name without .csv
	Title   string
	Columns []string
	Rows    [][]string
	// Note says why a table was not made (Rows is then empty); "" for a
	// table that was.
	Note string
}

// Tables returns the report's tables in the order of the JSON members.
// Flat makes one row per inlink of a broken URL, for CSV; otherwise a
// broken URL's inlinks are one cell, a line each.
//
// The rows of slowest and largest are by value, greatest first; those of
// every other table by URL.
func (r *Report) Tables(flat bool) []Table {
	o := r.Overview
	ts := []Table{{
		Name: "overview", Title: "Overview", Columns: []string{"measure", "count"},
		Rows: [][]string{
			{"urls", itoa(o.URLs)}, {"fetched", itoa(o.Fetched)},
			{"2xx", itoa(o.ByStatus.S2xx)}, {"3xx", itoa(o.ByStatus.S3xx)}, {"304", itoa(o.ByStatus.S304)},
			{"4xx", itoa(o.ByStatus.S4xx)}, {"5xx", itoa(o.ByStatus.S5xx)}, {"error", itoa(o.ByStatus.Error)},
			{"disallowed", itoa(o.Disallowed)}, {"out_of_scope", itoa(o.OutOfScope)}, {"pages_html", itoa(o.PagesHTML)},
		},
	}}
	ts = append(ts, r.issueTables()...)
	broken := Table{Name: "broken", Title: "Broken URLs (4xx, 5xx, no answer) and the pages linking to them",
		Columns: []string{"url", "status", "error", "from", "anchor"}}
	if !flat {
		broken.Columns = broken.Columns[:4]
	}
	for _, b := range r.Broken {
		row := []string{b.URL, itoa(b.Status), b.Error}
		switch {
		case flat && len(b.Inlinks) == 0:
			broken.Rows = append(broken.Rows, append(row, "", ""))
		case flat:
			for _, in := range b.Inlinks {
				broken.Rows = append(broken.Rows, append(slices.Clip(row), in.From, in.Anchor))
			}
		default:
			cell := ""
			for i, in := range b.Inlinks {
				if i > 0 {
					cell += "\n"
				}
				cell += in.From
				if in.Anchor != "" {
					cell += " “" + in.Anchor + "”"
				}
			}
			broken.Rows = append(broken.Rows, append(row, cell))
		}
	}
	if !r.HasLinks {
		broken.Note = "the pages linking to each are not known: no link graph was read"
	}
	ts = append(ts, broken)

	red := Table{Name: "redirects", Title: "Redirects", Columns: []string{"url", "final_url", "final_status", "hops", "loop"}}
	for _, x := range r.Redirects {
		red.Rows = append(red.Rows, []string{x.URL, x.FinalURL, itoa(x.FinalStatus), itoa(x.Hops), strconv.FormatBool(x.Loop)})
	}
	ts = append(ts, red)

	orphans := urlTable("orphans", "Orphans: URLs a sitemap lists that no fetched page links to", r.Orphans)
	if r.Orphans == nil {
		orphans.Note = "not made: no link graph was read"
	}
	nis := urlTable("not_in_sitemap", "Indexable pages reached by links that no sitemap lists", r.NotInSitemap)
	if r.NotInSitemap == nil {
		nis.Note = "not made: no sitemap was read"
	}
	ts = append(ts, orphans, nis)

	si := Table{Name: "sitemap_issues", Title: "URLs a sitemap lists that it should not", Columns: []string{"url", "issue"}}
	for _, x := range r.SitemapIssues {
		si.Rows = append(si.Rows, []string{x.URL, x.Issue})
	}
	ts = append(ts, si,
		urlTable("noindex", "Pages with noindex", r.Noindex),
		urlTable("nofollow", "Pages with nofollow", r.Nofollow))

	can := Table{Name: "canonicals", Title: "Canonical URLs to another URL", Columns: []string{"url", "canonical", "issue"}}
	for _, x := range r.Canonicals {
		can.Rows = append(can.Rows, []string{x.URL, x.Canonical, x.Issue})
	}
	ts = append(ts, can,
		textTable("titles", "Titles missing or duplicated (200 HTML pages)", "title", r.Titles),
		textTable("descriptions", "Meta descriptions missing or duplicated (200 HTML pages)", "description", r.Descriptions))

	depth := Table{Name: "depth", Title: "200 HTML pages by link depth", Columns: []string{"link_depth", "pages"}}
	for d, n := range r.Depth {
		if n > 0 {
			depth.Rows = append(depth.Rows, []string{itoa(d), itoa(n)})
		}
	}
	ts = append(ts, depth)

	slow := Table{Name: "slowest", Title: "Slowest pages", Columns: []string{"url", "duration_ms"}}
	for _, x := range byValue(r.Slowest, func(s Slow) int64 { return s.DurationMS }, func(s Slow) string { return s.URL }) {
		slow.Rows = append(slow.Rows, []string{x.URL, itoa(x.DurationMS)})
	}
	large := Table{Name: "largest", Title: "Largest pages", Columns: []string{"url", "bytes"}}
	for _, x := range byValue(r.Largest, func(l Large) int64 { return l.Bytes }, func(l Large) string { return l.URL }) {
		large.Rows = append(large.Rows, []string{x.URL, itoa(x.Bytes)})
	}
	ts = append(ts, slow, large)

	ps := Table{Name: "pages", Title: "Link score: inlinks and internal PageRank of 200 HTML pages",
		Columns: []string{"url", "inlinks", "link_score"}}
	for _, p := range r.Pages {
		ps.Rows = append(ps.Rows, []string{p.URL, itoa(p.Inlinks), strconv.FormatFloat(p.LinkScore, 'f', -1, 64)})
	}
	if r.Pages == nil {
		ps.Note = "not made: no link graph was read"
	}
	ts = append(ts, ps)

	ex := Table{Name: "extracted", Title: "Custom extractions", Columns: []string{"url", "name", "value"}}
	for _, x := range r.Extracted {
		for _, name := range slices.Sorted(maps.Keys(x.Values)) {
			val := fmt.Sprint(x.Values[name])
			if list, ok := x.Values[name].([]any); ok {
				parts := make([]string, len(list))
				for i, v := range list {
					parts[i] = fmt.Sprint(v)
				}
				val = strings.Join(parts, "\n")
			}
			ex.Rows = append(ex.Rows, []string{x.URL, name, val})
		}
	}
	ts = append(ts, ex)

	if c := r.Compare; c != nil {
		t := Table{Name: "compare", Title: "Changes since the previous inventory", Columns: []string{"url", "change", "old", "new"}}
		for _, u := range c.New {
			t.Rows = append(t.Rows, []string{u, "new", "", ""})
		}
		for _, u := range c.Gone {
			t.Rows = append(t.Rows, []string{u, "gone", "", ""})
		}
		for _, x := range c.Changes {
			t.Rows = append(t.Rows, []string{x.URL, x.Field, x.Old, x.New})
		}
		slices.SortStableFunc(t.Rows, func(a, b []string) int { return cmp.Compare(a[0], b[0]) })
		ts = append(ts, t)
	}
	return ts
}

// issueTables are the verdicts: the rules, those that found something
// first, by severity (errors first) then count, with the totals by severity in
// the title, and the findings by rule then URL. Every rule is a row of
// the rules table, a rule turned off with severity "off".
func (r *Report) issueTables() []Table {
	var bySev [Error + 1]int
	for _, f := range r.Findings {
		bySev[f.Severity]++
	}
	rules := Table{Name: "rules", Columns: []string{"rule", "severity", "findings"},
		Title: fmt.Sprintf("Findings by rule (%d errors, %d warnings, %d notices)", bySev[Error], bySev[Warning], bySev[Notice])}
	rcs := slices.Clone(r.Rules)
	slices.SortStableFunc(rcs, func(a, b RuleCount) int {
		sev := func(rc RuleCount) Severity {
			if rc.Off {
				return 0
			}
			return rc.Severity
		}
		return cmp.Or(cmp.Compare(min(b.Count, 1), min(a.Count, 1)), cmp.Compare(sev(b), sev(a)), cmp.Compare(b.Count, a.Count))
	})
	for _, rc := range rcs {
		sev := rc.Severity.String()
		if rc.Off {
			sev = "off"
		}
		rules.Rows = append(rules.Rows, []string{rc.Rule, sev, itoa(rc.Count)})
	}
	fs := Table{Name: "findings", Title: "Findings", Columns: []string{"rule", "severity", "url", "detail"}}
	if r.Baselined {
		fs.Columns = append(fs.Columns, "baseline")
	}
	for _, f := range r.Findings {
		row := []string{f.Rule, f.Severity.String(), f.URL, f.Detail}
		if r.Baselined {
			row = append(row, strconv.FormatBool(f.Baseline))
		}
		fs.Rows = append(fs.Rows, row)
	}
	return []Table{rules, fs}
}

func urlTable(name, title string, urls []string) Table {
	t := Table{Name: name, Title: title, Columns: []string{"url"}}
	for _, u := range urls {
		t.Rows = append(t.Rows, []string{u})
	}
	return t
}

// textTable is a TextCheck as rows of issue (missing or duplicate), the
// text and a URL: the missing first, then each duplicate's URLs.
func textTable(name, title, text string, tc TextCheck) Table {
	t := Table{Name: name, Title: title, Columns: []string{"issue", text, "url"}}
	for _, u := range tc.Missing {
		t.Rows = append(t.Rows, []string{"missing", "", u})
	}
	for _, d := range tc.Duplicates {
		for _, u := range d.URLs {
			t.Rows = append(t.Rows, []string{"duplicate", d.Text(), u})
		}
	}
	return t
}

// byValue is s by value, greatest first, ties by URL.
func byValue[T any](s []T, v func(T) int64, url func(T) string) []T {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b T) int { return cmp.Or(cmp.Compare(v(b), v(a)), cmp.Compare(url(a), url(b))) })
	return s
}
