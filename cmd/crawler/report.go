package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/politecrawl/crawler"
	"github.com/politecrawl/crawler/storage/report"
)

const reportUsage = "report [-c FILE] [--urls FILE] [--links FILE] [--format text|json|csv|html|junit|sarif|github|markdown] [--out PATH] [--compare OLD_URLS_FILE] [--fail-on LEVEL|RULE[,RULE…]] [--baseline OLD_REPORT.json] [--accept STATUS[,STATUS…]]"

// reportFormats are the values of --format.
var reportFormats = []string{"text", "json", "csv", "html", "junit", "sarif", "github", "markdown"}

// reportRows is how many rows of each table the text report shows on a
// terminal; written elsewhere (a pipe, a file) it shows them all.
const reportRows = 10

// reportMemoryLimit is the soft limit of the report's heap, unless
// GOMEMLIMIT says otherwise: a report of a million URLs and twenty
// million links stays under 1 GiB of memory.
const reportMemoryLimit = 768 << 20

// runReport is `crawler report`: the audit of a crawl's inventory and
// link graph (see the README, "Audit report"). The files are the config's
// output.urls and output.links, or those the flags name. Malformed lines
// (a crawl still running, or killed) are skipped with a warning, and so
// is a missing link graph: the tables that need it say so.
//
// Exit status: 0 when the report was written, 1 when an input could not
// be read or the report not written, 2 for bad usage or a bad config.
func runReport(ctx context.Context, args []string, s stdio) error {
	fset := flag.NewFlagSet("report", flag.ContinueOnError)
	var cfgPath string
	fset.StringVar(&cfgPath, "c", "", "take output.urls and output.links from the YAML config `FILE`")
	fset.StringVar(&cfgPath, "config", "", "same as -c `FILE`")
	urls := fset.String("urls", "", "read the inventory from `FILE` (- = stdin; default: the config's output.urls)")
	links := fset.String("links", "", "read the link graph from `FILE` (default: the config's output.links)")
	format := fset.String("format", "text", "write `text`, json, csv (a file per table), html (one self-contained file), junit, sarif, github (workflow commands) or markdown")
	out := fset.String("out", "", "write to `PATH`, a directory for csv (default: stdout)")
	previous := fset.String("compare", "", "also list what changed since the inventory `OLD_URLS_FILE` of an earlier audit")
	failOn := fset.String("fail-on", "", "exit 1 when a finding of this severity or above (error, warning, notice), or of a named rule, exists: `LEVEL|RULE[,RULE…]`")
	baseline := fset.String("baseline", "", "findings of the earlier report `OLD_REPORT.json` (--format json) are marked and fail nothing")
	accept := fset.String("accept", "", "HTTP statuses that are not broken (bot walls), added to report.accept: `STATUS[,STATUS…]`")
	pos, err := parseFlags(fset, args, reportUsage, s.out)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageErrorf("report: takes no arguments, got %q (usage: crawler %s)", pos[0], reportUsage)
	case !slices.Contains(reportFormats, *format):
		return usageErrorf("report: --format: want one of %s, got %q", strings.Join(reportFormats, ", "), *format)
	case *format == "csv" && (*out == "" || *out == "-"):
		return usageErrorf("report: --format csv writes a file per table: give --out DIRECTORY")
	}
	judging := crawler.DefaultConfig().Report
	if cfgPath != "" {
		cfg, err := reportConfig(cfgPath)
		if err != nil {
			return err
		}
		if !isSet(fset, "urls") {
			*urls = cfg.Output.URLs
		}
		if !isSet(fset, "links") {
			*links = cfg.Output.Links
		}
		judging = cfg.Report
	}
	opts, err := reportOptions(judging)
	if err != nil {
		return err
	}
	for _, a := range strings.FieldsFunc(*accept, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(a)
		if err != nil || n < 100 || n > 999 {
			return usageErrorf("report: --accept: want HTTP statuses such as 403,429,999, got %q", a)
		}
		opts.Accept = append(opts.Accept, n)
	}
	var gate report.FailOn
	if *failOn != "" {
		if gate, err = report.ParseFailOn(*failOn); err != nil {
			return usageErrorf("report: --fail-on: %v", err)
		}
	}
	var base []byte
	if *baseline != "" {
		if base, err = os.ReadFile(*baseline); err != nil {
			return fmt.Errorf("report: --baseline: %w", err)
		}
	}
	switch {
	case *urls == "":
		return usageErrorf("report: no inventory: give --urls FILE, or -c FILE with output.urls set")
	case *urls == "-" && cfgPath != "" && !isSet(fset, "urls"):
		return usageErrorf("report: %s: output.urls is stdout; give the file it went to with --urls FILE", cfgPath)
	case *links == "-":
		return usageErrorf("report: the link graph cannot be read from stdout; give --links FILE")
	}
	if os.Getenv("GOGC") == "" {
		// main's GOGC of 400 suits a crawl's small heap; the report's
		// heap is the inventory, which at 400 could grow to five times
		// what it holds.
		defer debug.SetGCPercent(debug.SetGCPercent(100))
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A million URLs hold about 400 MiB; the collector works
		// harder rather than let the heap pass this (see the README).
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(reportMemoryLimit))
	}

	in, names := report.Inputs{Options: opts}, report.Names{Inventory: *urls, Links: *links, Previous: *previous}
	if *urls == "-" {
		in.Inventory, names.Inventory = &pipeReader{ctx: ctx, r: s.in}, "stdin"
	} else {
		f, err := os.Open(*urls)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		defer f.Close()
		in.Inventory = ctxReader{ctx, f}
	}
	if *links != "" {
		f, err := os.Open(*links)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(s.err, "warning: %s: no such file: the crawl wrote no link graph there (yet)\n", *links)
		case err != nil:
			return fmt.Errorf("report: %w", err)
		default:
			defer f.Close()
			in.Links = ctxReader{ctx, f}
		}
	}
	if *previous != "" {
		f, err := os.Open(*previous)
		if err != nil {
			return fmt.Errorf("report: --compare: %w", err)
		}
		defer f.Close()
		in.Previous = ctxReader{ctx, f}
	}

	rep, err := report.Build(in, names)
	if ctx.Err() != nil {
		return errors.New("report: stopped by signal; no report written")
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(s.err, "warning: %s\n", w)
	}
	if in.Links == nil {
		fmt.Fprintf(s.err, "warning: give the link graph with --links FILE (a crawl writes it when output.links or --links is set)\n")
	}
	if base != nil {
		if _, err := report.MarkBaseline(rep, base); err != nil {
			return usageErrorf("report: --baseline %s: %v", *baseline, err)
		}
	}
	if err := writeFormat(*format, *out, s, rep); err != nil {
		return err
	}
	if *failOn == "" {
		return nil
	}
	failing := gate.Failing(rep)
	if len(failing) == 0 {
		return nil
	}
	f := failing[0]
	return fmt.Errorf("report: %d findings fail --fail-on %s, the first: %s %s %s", len(failing), *failOn, f.Severity, f.Rule, printableURL(f.URL))
}

// writeFormat writes rep in the format to out (stdout when "" or "-").
func writeFormat(format, out string, s stdio, rep *report.Report) error {
	if format == "csv" {
		if err := report.WriteCSV(out, rep); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		return nil
	}
	return writeReport(out, s.out, func(w io.Writer) error {
		switch format {
		case "json":
			return report.WriteJSON(w, rep)
		case "html":
			return report.WriteHTML(w, rep, time.Now())
		case "junit":
			return report.WriteJUnit(w, rep)
		case "sarif":
			return report.WriteSARIF(w, rep, versionString())
		case "github":
			return report.WriteGitHub(w, rep)
		case "markdown":
			return report.WriteMarkdown(w, rep)
		}
		limit, width, more := 0, 0, ""
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			// A person reads it: the first rows of each table, fitted
			// to the terminal's width; a pipe or a file gets every row whole.
			limit, more = reportRows, "crawler report --format csv --out DIR, or --format html"
			if width, _, _ = term.GetSize(int(f.Fd())); width <= 0 {
				width = 80
			}
		}
		return report.WriteTextFit(w, rep, limit, width, more)
	})
}

// ctxReader reads r until ctx ends, then fails: a signal stops the
// reading of a large inventory at once, not at its end.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Seek seeks the file below, for the report's second pass over the
// inventory (broken-fragment); a pipe cannot, and the rule is then not
// judged, with a warning.
func (c ctxReader) Seek(offset int64, whence int) (int64, error) {
	if s, ok := c.r.(io.Seeker); ok {
		return s.Seek(offset, whence)
	}
	return 0, errors.New("the inventory is not a file that can be read again")
}

// pipeReader is ctxReader for a pipe, whose Read may block for as long
// as the other end sends nothing: each Read waits in a goroutine of its
// own, and the signal ends the wait (the goroutine is left to the exit
// that follows).
type pipeReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
}

func (c *pipeReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return copy(p, buf[:r.n]), r.err
	case <-c.ctx.Done():
		c.buf = nil // the abandoned Read may still fill it
		return 0, c.ctx.Err()
	}
}

// writeReport writes the report with write to the file path, or to
// stdout when path is "" or "-".
func writeReport(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		if err := write(stdout); err != nil {
			return fmt.Errorf("report: write: %w", err)
		}
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := errors.Join(write(f), f.Close()); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}

// reportConfig reads the config at path for output.urls, output.links
// and the report block. The rest of the config is checked as crawl
// checks it, bar what only a crawl needs (seeds): a report reads what a
// crawl of it wrote.
func reportConfig(path string) (crawler.Config, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return crawler.Config{}, usageErrorf("%v", err)
	}
	cfg, _, probs, _ := decodeConfig(path, data)
	if len(probs) > 0 {
		return crawler.Config{}, configError(probs)
	}
	return cfg, nil
}

// reportOptions turns the config's report block into the report's
// options, checking the rule names it disables.
func reportOptions(r report.Config) (report.Options, error) {
	accept, ok := r.AcceptStatuses()
	if !ok {
		return report.Options{}, usageErrorf("report.accept: want HTTP statuses, got %q", r.Accept)
	}
	o := report.Options{
		TitleMax: r.TitleMax, DescriptionMax: r.DescriptionMax, ThinWords: r.ThinWords,
		NearDuplicate: r.NearDuplicate, SlowTTFB: r.SlowTTFB, MaxDepth: r.MaxDepth, Accept: accept,
	}
	for i, name := range r.Disable {
		if _, ok := report.RuleByName(name); !ok {
			return report.Options{}, usageErrorf("report.disable[%d]: no rule %q (crawler report --format json lists them in rules)", i, name)
		}
		if o.Rules == nil {
			o.Rules = map[string]string{}
		}
		o.Rules[name] = "off"
	}
	if err := o.Check(); err != nil {
		return report.Options{}, usageErrorf("report.%v", err)
	}
	return o, nil
}
