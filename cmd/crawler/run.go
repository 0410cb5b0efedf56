package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/politecrawl/crawler/frontier"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; when it
// is not, the module version from the build info is used.
var version = ""

// command is one subcommand of the binary.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdio stdio) error
}

// stdio is the process's standard streams, passed in so tests can script them.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func commands() []command {
	return []command{
		{"crawl", "crawl from a YAML config; resumes where it stopped", runCrawl},
		{"demo", "serve a small bundled site on loopback and crawl it", runDemo},
		{"discover", "list every URL of a site as JSON Lines, keeping no bodies", runDiscover},
		{"report", "write the audit of a crawl's inventory and link graph", runReport},
		{"validate", "check a YAML config as a crawl would, contacting nothing", runValidate},
		{"cluster", "show the workers of a crawl shared through NATS (cluster status)", runCluster},
		{"wacz", "package a crawl's WARC files as a WACZ (replayweb.page, pywb)", runWACZ},
		{"robots", "check URLs against a robots.txt (RFC 9309)", runRobots},
		{"sitemap", "list the page URLs of sitemaps and sitemap indexes", runSitemap},
		{"version", "print the version", runVersion},
		{"help", "show this help", runHelp},
	}
}

// run is the whole program behind main: it returns an error whose exit code
// exitCode decides, so tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	s := stdio{in: stdin, out: stdout, err: stderr}
	if len(args) == 0 {
		printUsage(stderr)
		return usageErrorf("no command given")
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name {
			err := c.run(ctx, args[1:], s)
			if err != nil && !errors.Is(err, flag.ErrHelp) && logsJSON(args[1:]) {
				return &jsonError{err}
			}
			return err
		}
	}
	return usageErrorf("unknown command %q (see 'crawler help')", name)
}

func runHelp(_ context.Context, args []string, s stdio) error {
	if len(args) > 0 && args[0] != "help" && args[0] != "-h" && args[0] != "--help" {
		for _, c := range commands() {
			if c.name == args[0] {
				return c.run(context.Background(), []string{"-h"}, s)
			}
		}
		return usageErrorf("unknown command %q (see 'crawler help')", args[0])
	}
	printUsage(s.out)
	return nil
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "crawler: a polite web crawler\n\nUsage:\n  crawler <command> [flags] [args]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'crawler help <command>' for a command's flags.\n")
}

func runVersion(_ context.Context, args []string, s stdio) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintf(s.out, "Usage: crawler version\n\nPrints the crawler's version.\n")
		return flag.ErrHelp
	}
	if len(args) > 0 {
		return usageErrorf("version takes no arguments")
	}
	fmt.Fprintf(s.out, "crawler %s\n", versionString())
	return nil
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// usageError marks a mistake in how the command was called: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// exitCode prints err (if any) and maps it to the contract's exit codes:
// 0 success, 1 runtime failure, 2 bad usage or invalid config.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	code := 1
	var ue *usageError
	if errors.As(err, &ue) {
		code = 2
	}
	var je *jsonError
	if errors.As(err, &je) {
		writeJSONError(stderr, je.err, code)
		return code
	}
	fmt.Fprintf(stderr, "crawler: %s\n", frontier.Redact(err.Error()))
	return code
}

// parseFlags parses args with fs, letting flags and positional arguments be
// interleaved as wget and curl allow ("URL --agent X"); "--" ends the flags.
// It returns the positional arguments in order. For -h or -help it prints
// the usage line and flags to out and returns flag.ErrHelp (exit code 0).
func parseFlags(fs *flag.FlagSet, args []string, usage string, out io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(out, "Usage: crawler %s\n\nFlags:\n", usage)
				printFlags(fs, out)
				return nil, err
			}
			return nil, usageErrorf("%s: %v%s", fs.Name(), err, suggestFlag(fs, err))
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, rest...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// suggestFlag offers, for an unknown flag, the likely meant one of fs
// (as an unknown config key gets one): the nearest name within two edits,
// or "" when none is near.
func suggestFlag(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.ToLower(strings.ReplaceAll(strings.TrimLeft(name, "-"), "_", "-"))
	if len(name) > 64 {
		return ""
	}
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage == notTaken {
			return
		}
		if d := editDistance(name, f.Name); d < bestDist && d < len(f.Name) {
			best, bestDist = f.Name, d
		}
	})
	if best == "" {
		return ""
	}
	return " (did you mean --" + best + "?)"
}

// notTaken is the usage of a flag a command defines only to refuse it with
// a word of why (discover's --mirror): its help does not list it.
const notTaken = "\x00not taken"

// refuse marks fs's flags names as not taken by this command.
func refuse(fs *flag.FlagSet, names ...string) {
	for _, n := range names {
		if f := fs.Lookup(n); f != nil {
			f.Usage = notTaken
		}
	}
}

// printFlags writes the defaults of fs's flags, as flag.PrintDefaults does,
// less those the command does not take.
func printFlags(fs *flag.FlagSet, out io.Writer) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(out)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage != notTaken {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	shown.PrintDefaults()
}
