package report

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"lines": func(s string) []string { return strings.Split(s, "\n") },
}).Parse(htmlSource))

// htmlData is what the HTML template is given.
type htmlData struct {
	Overview Overview
	Tables   []Table
	Warnings []string
}

// WriteHTML writes the report as one HTML document that needs nothing
// else: its style and script are in it, and it loads nothing. Each table
// sorts by a column when its header is clicked (numbers as numbers) and
// shows only the rows holding what its filter box holds. Every text from
// the inputs is escaped by html/template.
func WriteHTML(w io.Writer, r *Report) error {
	ts := r.Tables(false)
	return htmlTemplate.Execute(w, htmlData{Overview: r.Overview, Tables: ts[1:], Warnings: r.Warnings})
}
