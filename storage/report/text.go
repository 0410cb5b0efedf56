package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/politecrawl/crawler/storage"
)

// WriteJSON writes the report as one JSON object on one line (a report
// of a million URLs is large enough without indentation; jq shows it
// indented). It is written member by member, and a long list element by
// element, so that the writing holds one element at a time, not a copy
// of the whole report (which for a million pages is as large as the
// heap that made it).
func WriteJSON(w io.Writer, r *Report) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	out := storage.JSONWriter(bw) // no C1 or bidi control raw
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	put := func(v any) error { // v's JSON, without Encode's newline
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := out.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	rv, rt := reflect.ValueOf(r).Elem(), reflect.TypeOf(r).Elem()
	sep := "{"
	for i := range rt.NumField() {
		name, opts, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		fv := rv.Field(i)
		if name == "-" || name == "" || opts == "omitempty" && fv.IsZero() {
			continue
		}
		if _, err := io.WriteString(out, sep+strconv.Quote(name)+":"); err != nil {
			return err
		}
		sep = ","
		if fv.Kind() != reflect.Slice || fv.IsNil() || fv.Len() < 1000 {
			if err := put(fv.Interface()); err != nil {
				return err
			}
			continue
		}
		for k := range fv.Len() {
			open := ","
			if k == 0 {
				open = "["
			}
			if _, err := io.WriteString(out, open); err != nil {
				return err
			}
			if err := put(fv.Index(k).Interface()); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(out, "]"); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(out, "}\n"); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteText writes the report for a reader: the overview, then each
// table with its count. With limit > 0 a table shows its first limit rows
// and then how many more there are, and more (such as the command that
// writes them all) when it is not "". Rows are written whole, however
// long: WriteTextFit fits them to a terminal.
func WriteText(w io.Writer, r *Report, limit int, more string) error {
	return WriteTextFit(w, r, limit, 0, more)
}

// WriteTextFit is WriteText for a terminal width columns wide (0 or less:
// no limit, rows whole, as for a pipe or a file): the widest cells are
// cut, ending in "…", so that each row fits in width-1 columns (a
// terminal wraps at its last one) with "…" in their middle, and notes
// are wrapped.
func WriteTextFit(w io.Writer, r *Report, limit, width int, more string) error {
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
		if t.Name == "rules" {
			fmt.Fprintf(bw, "%s\n", t.Title)
		} else {
			fmt.Fprintf(bw, "%s: %d\n", t.Title, len(t.Rows))
		}
		if t.Note != "" {
			writeWrapped(bw, "  ("+t.Note+")", "   ", width)
		}
		switch {
		case t.Name == "rules":
			// The rules that found something; the others are 0.
			n := slices.IndexFunc(t.Rows, func(row []string) bool { return row[2] == "0" })
			if n < 0 {
				n = len(t.Rows)
			}
			writeRows(bw, t.Columns, t.Rows[:n], 0, width, "")
		case t.Name == "findings":
			// By rule: each rule's first limit URLs.
			for i := 0; i < len(t.Rows); {
				j := i
				for j < len(t.Rows) && t.Rows[j][0] == t.Rows[i][0] {
					j++
				}
				fmt.Fprintf(bw, "  %s (%s): %d\n", t.Rows[i][0], t.Rows[i][1], j-i)
				var rows [][]string
				for _, row := range t.Rows[i:j] {
					rows = append(rows, row[2:])
				}
				writeRows(bw, t.Columns[2:], rows, limit, width, more)
				i = j
			}
		default:
			writeRows(bw, t.Columns, t.Rows, limit, width, more)
		}
	}
	return bw.Flush()
}

// writeRows writes a table's columns and rows, the first limit of them
// when limit > 0 with how many more there are, fitted to width.
func writeRows(bw *bufio.Writer, columns []string, all [][]string, limit, width int, more string) {
	if len(all) == 0 {
		return
	}
	rows := all
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	lines := [][]string{strings.Split(strings.ToUpper(strings.Join(columns, "\t")), "\t")}
	for _, row := range rows {
		lines = append(lines, rowLines(row)...)
	}
	cut := cellCap(lines, width)
	tw := tabwriter.NewWriter(bw, 0, 8, 2, ' ', 0)
	for _, parts := range lines {
		for i := range parts {
			parts[i] = ellipsis(parts[i], cut)
		}
		fmt.Fprintf(tw, "  %s\n", strings.Join(parts, "\t"))
	}
	tw.Flush()
	if n := len(all) - len(rows); n > 0 {
		line := fmt.Sprintf("  … and %d more", n)
		if more != "" {
			line += fmt.Sprintf(" (all of them: %s)", more)
		}
		writeWrapped(bw, line, "    ", width)
	}
}

// rowLines is row as lines of cells: a cell of several lines on lines of
// its own under the first, the other cells empty there. Tabs and other C0
// controls in cells become spaces, so that they cannot break the columns
// or drive a terminal; C1 and bidi controls are escaped (printable).
func rowLines(row []string) [][]string {
	cells := make([][]string, len(row))
	n := 1
	for i, c := range row {
		cells[i] = strings.Split(c, "\n")
		n = max(n, len(cells[i]))
	}
	out := make([][]string, n)
	for l := range out {
		parts := make([]string, len(row))
		for i := range row {
			if l < len(cells[i]) {
				parts[i] = printable(cells[i][l])
			}
		}
		out[l] = parts
	}
	return out
}

// minCell is the fewest columns cellCap cuts a cell to: narrower than
// that a URL says nothing, and the row may as well wrap.
const minCell = 12

// cellCap is the most columns a cell may take for lines of cells, laid
// out by tabwriter (two columns of padding, after a two-column indent),
// to fit in width-1 columns; 0 when width ≤ 0 or the lines fit as they
// are.
func cellCap(lines [][]string, width int) int {
	if width <= 0 || len(lines) == 0 {
		return 0
	}
	widths := make([]int, len(lines[0]))
	longest := 0
	for _, parts := range lines {
		for i, p := range parts {
			widths[i] = max(widths[i], utf8.RuneCountInString(p))
			longest = max(longest, widths[i])
		}
	}
	total := func(c int) int {
		n := 2
		for i, w := range widths {
			n += min(w, c)
			if i < len(widths)-1 {
				n += 2
			}
		}
		return n
	}
	if total(longest) < width {
		return 0
	}
	// The greatest cap that fits: total grows with c.
	lo, hi := minCell, longest
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if total(mid) < width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// ellipsis cuts s to c runes when it is longer, with "…" in the middle:
// a URL keeps its host and its last segment, which tell one from the
// next. c ≤ 0 leaves it whole.
func ellipsis(s string, c int) string {
	if c <= 0 || utf8.RuneCountInString(s) <= c {
		return s
	}
	r := []rune(s)
	head := (c - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(c-1-head):])
}

// writeWrapped writes line, wrapped at spaces to fit in width-1 columns
// (whole when width ≤ 0), its later lines after indent.
func writeWrapped(w io.Writer, line, indent string, width int) {
	for width > 0 && utf8.RuneCountInString(line) >= width {
		r := []rune(line)
		cut := strings.LastIndexByte(string(r[:width-1]), ' ')
		if cut <= len(indent) {
			break // a word longer than the line: it wraps as it will
		}
		fmt.Fprintln(w, line[:cut])
		line = indent + strings.TrimLeft(line[cut:], " ")
	}
	fmt.Fprintln(w, line)
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
