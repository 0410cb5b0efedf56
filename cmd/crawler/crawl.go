package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/term"

	"github.com/politecrawl/crawler"
	"github.com/politecrawl/crawler/storage"
)

const (
	crawlUsage    = "crawl -c FILE [flags] [SEED_URL...]"
	discoverUsage = "discover [-c FILE] [flags] URL..."
)

// runCrawl is `crawler crawl`: a crawl from the YAML config, flags over
// keys. Ad hoc it ends when the frontier is drained or a limit is hit; with
// daemon.enabled it runs until SIGTERM or SIGINT. Either way a signal stops
// it gracefully (exit 0) and running it again resumes.
func runCrawl(ctx context.Context, args []string, s stdio) error {
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	cf := addConfigFlags(fs)
	refresh := addRefreshFlag(fs)
	seeds, err := parseFlags(fs, args, crawlUsage, s.out)
	if err != nil {
		return err
	}
	cfg, err := cf.load(seeds)
	if err != nil {
		return err
	}
	if *refresh && cfg.Daemon.Enabled {
		return usageErrorf("crawl: --refresh makes one pass and exits; a daemon revisits on its schedule (daemon.recrawl)")
	}
	reload := func() (crawler.Config, error) { return cf.load(seeds) }
	return crawl(ctx, cfg, crawler.Options{Refresh: *refresh}, s, reload)
}

// addRefreshFlag defines --refresh, which crawl and discover take.
func addRefreshFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("refresh", false, "make one more pass over every URL done in the state_dir (conditional GETs, new links followed), then exit, as wget -N does")
}

// runDiscover is `crawler discover`: a crawl that keeps no bodies and
// writes one JSON object per URL found to stdout (or --out FILE).
func runDiscover(ctx context.Context, args []string, s stdio) error {
	fs := flag.NewFlagSet("discover", flag.ContinueOnError)
	cf := addConfigFlags(fs)
	refresh := addRefreshFlag(fs)
	refuse(fs, "daemon", "mirror", "mirror-links", "warc", "recrawl")
	// An audit keeps its state in a temporary directory unless told
	// otherwise: its help must not show crawl's ./crawl-state.
	sd := fs.Lookup("state-dir")
	sd.Usage, sd.DefValue = "keep the audit's state in `directory`, to resume from or --refresh (default: a temporary directory, removed at the end; overrides state_dir)", ""
	urls, err := parseFlags(fs, args, discoverUsage, s.out)
	if err != nil {
		return err
	}
	if len(urls) == 0 {
		return usageErrorf("discover: give at least one URL (usage: crawler %s)", discoverUsage)
	}
	cfg, err := cf.load(urls)
	if err != nil {
		return err
	}
	// The config file (a crawl's, often) lends its scope, politeness and
	// fetch keys; where the audit's output and state go only flags say.
	// An audit runs once, and serves metrics only when asked: a daemon's
	// config would otherwise make it run for ever, on the daemon's port.
	if isSet(fs, "daemon") && cfg.Daemon.Enabled {
		return usageErrorf("discover: --daemon: an audit runs once (use crawl --daemon to keep a crawl going)")
	}
	for _, name := range []string{"mirror", "mirror-links", "warc"} {
		if isSet(fs, name) {
			return usageErrorf("discover: --%s: an audit keeps no bodies (use crawl --%s)", name, name)
		}
	}
	if isSet(fs, "recrawl") {
		return usageErrorf("discover: --recrawl: an audit runs once (use crawl --daemon --recrawl)")
	}
	cfg.Daemon.Enabled = false
	if !isSet(fs, "listen") {
		cfg.Daemon.Listen = ""
	}
	cfg.Output.MirrorDir, cfg.Output.WARC = "", ""
	if !isSet(fs, "out") && !isSet(fs, "urls") || cfg.Output.URLs == "" {
		cfg.Output.URLs = "-" // an audit that wrote its URLs nowhere would be no audit
	}
	if *refresh && !isSet(fs, "state-dir") {
		return usageErrorf("discover: --refresh needs the --state-dir of the audit to refresh (without it an audit keeps no state)")
	}
	if !isSet(fs, "state-dir") {
		// An audit that was not given --state-dir keeps its state apart
		// from any crawl's (whose frontier would say every URL is done
		// already), and leaves nothing behind: what a killed audit
		// left, the next one removes (see newDiscoverDir).
		dir, err := newDiscoverDir(os.TempDir(), newLogger(cfg.Log, s.err))
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.StateDir = dir
	}
	return crawl(ctx, cfg, crawler.Options{NoBodies: true, Refresh: *refresh, Scratch: !isSet(fs, "state-dir")}, s, nil)
}

// crawl runs one crawl to its end and prints its summary on stderr. With a
// reload function, SIGHUP reads the config again and applies it: a bad one
// is refused with its problems logged, and the crawl goes on as it was.
func crawl(ctx context.Context, cfg crawler.Config, opts crawler.Options, s stdio, reload func() (crawler.Config, error)) error {
	stderr, stdout := s.err, s.out
	if f, ok := s.err.(*os.File); ok && cfg.Log.Format != "json" && term.IsTerminal(int(f.Fd())) {
		// The progress line lives on the terminal: the log, and the
		// URLs discover prints when stdout is that terminal too, keep
		// out of its way. A JSON log has none, its progress being
		// records, so that every line of it is JSON on a terminal too.
		line := &statusLine{term: f, width: func() int { w, _, _ := term.GetSize(int(f.Fd())); return w }}
		opts.Status, stderr = line.set, line.wrap(s.err)
		if o, ok := s.out.(*os.File); ok && term.IsTerminal(int(o.Fd())) {
			stdout = line.wrap(s.out)
		}
	}
	log := newLogger(cfg.Log, stderr)
	defer routeStdLog(log)()
	opts.Logger, opts.Stdout, opts.Version, opts.Getenv = log, stdout, versionString(), os.Getenv
	c, err := crawler.New(cfg, opts)
	if err != nil {
		return err
	}
	stopServer, err := serve(ctx, cfg.Daemon, c.Handler(), log)
	if err != nil {
		c.Close()
		return err
	}
	stopReload := onHangup(ctx, c, reload, log)
	sum, runErr := c.Run(ctx)
	stopReload()
	stopServer()
	closeErr := c.Close()
	switch {
	case sum.Stopped == "":
		// The crawl never started (the cluster could not be joined, the
		// seeds not queued): the error says why, and there is no run to sum up.
	case cfg.Log.Format == "json":
		log.Info("summary", "summary", sum) // one record, as the rest of the log
	default:
		printSummary(s.err, sum)
		if cmd := reportCommand(cfg); cmd != "" {
			fmt.Fprintf(s.err, "  the whole audit: %s\n", cmd)
		}
	}
	if ctx.Err() != nil && runErr == nil {
		log.Info("stopped by signal; run the same command again to resume")
	}
	err = errors.Join(runErr, closeErr)
	if err == nil && nothingAnswered(sum) {
		// As curl and wget: a run that reached nothing failed.
		err = errors.New("no page could be fetched: no request got an answer (see the inventory's errors)")
	}
	return err
}

// nothingAnswered reports whether a run made requests and not one of them
// got an answer (every seed's host down, say). A resumed run with nothing
// left to do makes none, and is no failure.
func nothingAnswered(s crawler.Summary) bool {
	answered := int64(0)
	for class, n := range s.Requests {
		if class != "error" {
			answered += n
		}
	}
	return answered == 0 && s.Requests["error"] > 0
}

// onHangup reloads the config on each SIGHUP until the returned stop is
// called. stop never waits for a reload's reading of the file (which a
// hung disk could hold): a reload that ends after stop is dropped, and
// none is applied once stop has returned.
func onHangup(ctx context.Context, c *crawler.Crawler, reload func() (crawler.Config, error), log *slog.Logger) (stop func()) {
	if reload == nil {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu      sync.Mutex // held while a reload is applied
		stopped bool
	)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			cfg, loadErr := reload() // outside mu: stop does not wait for it
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			notes, err := c.Reload(func() (crawler.Config, error) { return cfg, loadErr })
			for _, n := range notes {
				log.Warn("config reload", "note", n)
			}
			if err != nil {
				log.Error("config reload refused; the old config stays", "err", err)
			} else {
				log.Info("config reloaded")
			}
			mu.Unlock()
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
}

// serve starts the observability endpoints on addr (none when empty) and
// returns how to stop them.
func serve(ctx context.Context, dc crawler.DaemonConfig, h http.Handler, log *slog.Logger) (func(), error) {
	if dc.Listen == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", dc.Listen)
	if err != nil {
		return nil, fmt.Errorf("daemon.listen: %w", err)
	}
	log.Info("serving /metrics, /healthz, /readyz and /hosts", "addr", ln.Addr().String())
	if w := exposed(ln.Addr()); w != "" && dc.WebConfig == "" {
		log.Warn(w, "addr", ln.Addr().String(), "listen", dc.Listen)
	}
	return serveOn(ctx, ln, h, log, daemonLimits, dc.WebConfig), nil
}

// exposed says, for an address the endpoints listen on that is not a
// loopback one, that other machines can reach them ("" for loopback):
// ":9090" binds every interface, which a user may not have meant. serve
// says it unless daemon.web_config protects the endpoints.
func exposed(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	switch {
	case !ok || ta.IP.IsLoopback():
		return ""
	case ta.IP.IsUnspecified():
		return "listening on every interface: /metrics, /healthz, /readyz and /hosts are open to other machines, unprotected (daemon.listen: 127.0.0.1:PORT keeps them on this one; daemon.web_config protects them)"
	}
	return "listening on an address other machines can reach: /metrics, /healthz, /readyz and /hosts are open to them, unprotected (daemon.listen: 127.0.0.1:PORT keeps them on this one; daemon.web_config protects them)"
}

// serverLimits bound what clients of daemon.listen can hold: how long a
// connection may take over a request and its answer, how long it may sit
// idle, and how many connections are open at once.
type serverLimits struct {
	ReadHeader, Read, Write, Idle time.Duration
	MaxConns                      int
}

// daemonLimits are generous for a scraper or an operator's curl (a
// /metrics or /hosts answer of a large crawl is written well within
// Write) and short enough that idle keep-alive connections cannot pile
// up; past MaxConns a new connection closes the oldest one that is not
// serving a request (connGuard), so idle clients hold no more file
// descriptors than that and a request is served at once.
var daemonLimits = serverLimits{
	ReadHeader: 10 * time.Second,
	Read:       30 * time.Second,
	Write:      time.Minute,
	Idle:       time.Minute,
	MaxConns:   64,
}

// serveOn serves h on ln within lim until the returned stop is called,
// with the TLS and basic auth of the exporter-toolkit web configuration
// file webConfig, if not empty (read again for each connection, so that
// renewed certificates and changed users apply at once). The server's own
// complaints (accept errors, bad TLS, panics in h) go to log, not to the
// standard logger.
func serveOn(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger, lim serverLimits, webConfig string) (stop func()) {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeader,
		ReadTimeout:       lim.Read,
		WriteTimeout:      lim.Write,
		IdleTimeout:       lim.Idle,
		ConnState:         newConnGuard(lim.MaxConns).state,
		ErrorLog:          slog.NewLogLogger(log.With("server", "daemon.listen").Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		if webConfig == "" {
			err = srv.Serve(ln)
		} else {
			err = web.Serve(ln, srv, &web.FlagConfig{WebConfigFile: &webConfig}, log.With("server", "daemon.listen"))
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve metrics", "err", err)
		}
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		<-done
	}
}

// newLogger makes the slog logger log.format and log.level ask for.
func newLogger(lc crawler.LogConfig, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(lc.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if lc.Format == "json" {
		// Each record is one Write: its C1 and bidi controls are escaped
		// as \uXXXX on the way, as the inventory's are.
		return slog.New(redactHandler{slog.NewJSONHandler(storage.JSONWriter(w), opts)})
	}
	return slog.New(redactHandler{slog.NewTextHandler(w, opts)})
}

// routeStdLog sends what the standard library writes with the log
// package (net/http's "Unsolicited response", "Accept error" and the
// like) to log as warnings, so that log.format: json holds only JSON, and
// returns how to undo it. The log package's output is the process's, so
// this is done here, for the one crawl a command runs, and not in a
// library package.
func routeStdLog(log *slog.Logger) (restore func()) {
	w, flags, prefix := stdlog.Writer(), stdlog.Flags(), stdlog.Prefix()
	stdlog.SetOutput(slog.NewLogLogger(log.Handler(), slog.LevelWarn).Writer())
	stdlog.SetFlags(0)
	stdlog.SetPrefix("")
	return func() {
		stdlog.SetOutput(w)
		stdlog.SetFlags(flags)
		stdlog.SetPrefix(prefix)
	}
}

// maxParkedShown is how many parked hosts the summary names.
const maxParkedShown = 5

// printSummary writes what a run did, in a few lines.
func printSummary(w io.Writer, s crawler.Summary) {
	fmt.Fprintf(w, "crawled %d URLs in %s (%s): %d pages fetched (%s), %d left queued\n",
		s.Done, s.Elapsed.Round(time.Millisecond), stopWords[s.Stopped], s.Fetched(), humanBytes(s.Bytes), s.Queued)
	fmt.Fprintf(w, "  pages by status: %s\n", formatCounts(s.Pages))
	fmt.Fprintf(w, "  requests by status (robots.txt and redirects included): %s\n", formatCounts(s.Requests))
	fmt.Fprintf(w, "  refused by robots.txt: %d\n", s.Disallowed)
	if len(s.Rejected) > 0 {
		fmt.Fprintf(w, "  kept out: %s\n", formatCounts(s.Rejected))
	}
	if n := len(s.Parked); n > 0 {
		// A --check-external audit may give up on hundreds of hosts:
		// a count and the first few, the log having each.
		fmt.Fprintf(w, "  hosts parked: %d", n)
		if n > maxParkedShown {
			fmt.Fprintf(w, ", the first %d", maxParkedShown)
		}
		fmt.Fprintln(w, ":")
		for _, p := range s.Parked[:min(n, maxParkedShown)] {
			fmt.Fprintf(w, "    %s (%s)\n", p.Origin, storage.Printable(p.Reason))
		}
		if n > maxParkedShown {
			fmt.Fprintln(w, "    (every one is in the log, as \"host parked\")")
		}
	}
	if s.BrokenLinks > 0 {
		fmt.Fprintf(w, "  broken links in the mirror: %d (listed in the log)\n", s.BrokenLinks)
	}
	if len(s.OutputErrors) > 0 {
		fmt.Fprintf(w, "  failed writes: %s\n", formatCounts(s.OutputErrors))
	}
	if s.StateErrors > 0 {
		fmt.Fprintf(w, "  state errors: %d (see the log)\n", s.StateErrors)
	}
	if s.BrokenURLs > 0 {
		fmt.Fprintf(w, "  broken URLs (4xx, 5xx or no answer): %d", s.BrokenURLs)
		if s.BrokenURLs > int64(len(s.Broken)) {
			fmt.Fprintf(w, ", the first %d:", len(s.Broken))
		}
		fmt.Fprintln(w)
		for _, b := range s.Broken {
			why := strconv.Itoa(b.Status)
			if b.Status == 0 {
				why = b.Error
			}
			fmt.Fprintf(w, "    %s (%s)", storage.Printable(b.URL), storage.Printable(why))
			if b.Referrer != "" {
				fmt.Fprintf(w, " linked from %s", storage.Printable(b.Referrer))
			}
			fmt.Fprintln(w)
		}
		if s.BrokenURLs > int64(len(s.Broken)) {
			fmt.Fprintln(w, "    (every one is in the inventory, with its error)")
		}
	}
}

// reportCommand is the crawler report command over the outputs of cfg,
// for the summary, or "" when the inventory went to no file that can be
// read again (stdout, /dev/null, a pipe).
func reportCommand(cfg crawler.Config) string {
	if !regularFile(cfg.Output.URLs) {
		return ""
	}
	cmd := programName() + " report --urls " + shellQuote(cfg.Output.URLs)
	if regularFile(cfg.Output.Links) {
		cmd += " --links " + shellQuote(cfg.Output.Links)
	}
	return cmd
}

// programName is how to run this binary again in a command shown to the
// user: as it was run when that was by a path whose file is named
// crawler (./crawler, bin/crawler), else crawler (found in PATH).
func programName() string {
	if p := os.Args[0]; strings.ContainsRune(p, '/') && filepath.Base(p) == "crawler" {
		return shellQuote(p)
	}
	return "crawler"
}

// regularFile reports whether path names a regular file.
func regularFile(path string) bool {
	if path == "" || path == "-" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// characters safe as they are.
func shellQuote(s string) string {
	safe := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0
	if safe && s != "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stopWords say why a run ended, for the summary.
var stopWords = map[string]string{
	"drained": "nothing left to fetch", "max_pages": "max_pages reached",
	"signal": "stopped by a signal", "time": "out of time", "error": "stopped by an error",
}

// humanBytes writes a byte count as people read it: 878430 is 857.8 KiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}

func formatCounts(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
