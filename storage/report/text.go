package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/politecrawl/crawler/storage"
)

// WriteJSON writes the report as one JSON object on one line (a report
// of a million URLs is large enough without indentation; jq shows it
// indented).
func WriteJSON(w io.Writer, r *Report) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(storage.JSONWriter(bw)) // no C1 or bidi control raw
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteText writes the report for a reader: the overview, then each
// table with its count. With limit > 0 a table shows its first limit rows
// and then how many more there are, and more (such as the command that
// writes them all) when it is not "".
func WriteText(w io.Writer, r *Report, limit int, more string) error {
	bw := bufio.NewWriter(w)
	for i, t := range r.Tables(false) {
		if i > 0 {
			bw.WriteByte('\n')
		}
		if t.Name == "overview" {
			fmt.Fprintf(bw, "%s\n", t.Title)
			tw := tabwriter.NewWriter(bw, 0, 8, 2, ' ', 0)
			for _, row := range t.Rows {
				fmt.Fprintf(tw, "  %s\t%s\n", row[0], row[1])
			}
			tw.Flush()
			continue
		}
		fmt.Fprintf(bw, "%s: %d\n", t.Title, len(t.Rows))
		if t.Note != "" {
			fmt.Fprintf(bw, "  (%s)\n", t.Note)
		}
		if len(t.Rows) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(bw, 0, 8, 2, ' ', 0)
		fmt.Fprintf(tw, "  %s\n", strings.ToUpper(strings.Join(t.Columns, "\t")))
		rows := t.Rows
		if limit > 0 && len(rows) > limit {
			rows = rows[:limit]
		}
		for _, row := range rows {
			writeTextRow(tw, row)
		}
		tw.Flush()
		if n := len(t.Rows) - len(rows); n > 0 {
			fmt.Fprintf(bw, "  … and %d more", n)
			if more != "" {
				fmt.Fprintf(bw, " (all of them: %s)", more)
			}
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// writeTextRow writes row, a cell of several lines on lines of its own
// under the first, the other cells empty there. Tabs and other C0
// controls in cells become spaces, so that they cannot break the columns
// or drive a terminal; C1 and bidi controls are escaped (printable).
func writeTextRow(tw io.Writer, row []string) {
	cells := make([][]string, len(row))
	lines := 1
	for i, c := range row {
		cells[i] = strings.Split(c, "\n")
		lines = max(lines, len(cells[i]))
	}
	for l := range lines {
		parts := make([]string, len(row))
		for i := range row {
			if l < len(cells[i]) {
				parts[i] = printable(cells[i][l])
			}
		}
		fmt.Fprintf(tw, "  %s\n", strings.Join(parts, "\t"))
	}
}

// printable is s with C0 controls and DEL as spaces, and C1 controls,
// bidi controls, U+2028 and U+2029 as visible \uXXXX escapes
// (storage.Printable): a page title cannot drive the terminal or reorder
// the line it is on.
func printable(s string) string {
	return storage.Printable(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s))
}

// WriteCSV writes one CSV file per table into dir, created if needed:
// NAME.csv with the column names on line 1, a row per inlink of a broken
// URL (see Tables). A table that was not made has its header only. A
// cell that begins with =, +, -, @, a tab or a carriage return is
// written after a single quote, so that no spreadsheet runs it.
func WriteCSV(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, t := range r.Tables(true) {
		if err := writeCSVFile(filepath.Join(dir, t.Name+".csv"), t); err != nil {
			return err
		}
	}
	return nil
}

func writeCSVFile(path string, t Table) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	cw := csv.NewWriter(bw)
	cw.Write(t.Columns)
	for _, row := range t.Rows {
		cw.Write(defused(row))
	}
	cw.Flush()
	err = errors.Join(cw.Error(), bw.Flush(), f.Close())
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// defused is row with each cell that a spreadsheet would take for a
// formula (one that begins with =, +, -, @, a tab or a carriage return)
// written as text, with OWASP's leading single quote: a crawled site's
// title or anchor must not run in whoever opens the audit (CSV
// injection). row is copied only when a cell changes.
func defused(row []string) []string {
	out := row
	for i, c := range row {
		if c == "" || !strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			continue
		}
		if &out[0] == &row[0] {
			out = slices.Clone(row)
		}
		out[i] = "'" + c
	}
	return out
}
