package report

import (
	_ "embed"
	"html/template"
	"io"
	"net/url"
	"strings"
	"time"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"lines": func(s string) []string { return strings.Split(s, "\n") },
	"link":  cellLink,
}).Parse(htmlSource))

// htmlData is what the HTML template is given.
type htmlData struct {
	Overview Overview
	Tables   []Table
	Warnings []string
	Site     string // the crawl's sites, comma-separated; "" when unknown
	Date     string // when the report was written, UTC
}

// linked is a line of a cell that starts with an http(s) URL: the URL,
// made a link, and the rest of the line (an inlink's anchor).
type linked struct{ URL, Rest string }

// cellLink returns the line's URL and the rest when the line starts
// with an absolute http or https URL, and nil otherwise: only those
// become links (html/template escapes the href, and would refuse a
// javascript: one in any case).
func cellLink(line string) *linked {
	u, rest, _ := strings.Cut(line, " ")
	if rest != "" {
		rest = " " + rest
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return nil
	}
	return &linked{URL: u, Rest: rest}
}

// WriteHTML writes the report as one HTML document that needs nothing
// else: its style and script are in it, and it loads nothing. Each table
// sorts by a column when its header is clicked (numbers as numbers) and
// shows only the rows holding what its filter box holds. Every text from
// the inputs is escaped by html/template; a URL at the start of a line of
// a cell is a link when it is an absolute http(s) URL. Its title and
// heading name the crawl's sites (Report.Sites) and written, the date.
func WriteHTML(w io.Writer, r *Report, written time.Time) error {
	ts := r.Tables(false)
	return htmlTemplate.Execute(w, htmlData{Overview: r.Overview, Tables: ts[1:], Warnings: r.Warnings,
		Site: strings.Join(r.Sites, ", "), Date: written.UTC().Format("2006-01-02 15:04 UTC")})
}
