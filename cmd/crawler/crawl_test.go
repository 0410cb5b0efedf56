package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/crawler"
)

// smallSite serves a robots.txt, two linked pages and a 404.
func smallSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /secret\n")
		case "/":
			fmt.Fprint(w, `<html><a href="/a">a</a> <a href="/secret">s</a> <a href="/gone">g</a></html>`)
		case "/a":
			fmt.Fprint(w, `<html><a href="/">home</a></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDiscoverWritesJSONLines(t *testing.T) {
	srv := smallSite(t)
	stdout, stderr, code := runCmd(t, "", "discover", "--delay", "0", srv.URL+"/")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	got := map[string]map[string]any{}
	for _, rec := range jsonLines(t, stdout) {
		got[rec["url"].(string)] = rec
	}
	want := map[string]string{"/": "200", "/a": "200", "/gone": "404", "/secret": "0"}
	for path, status := range want {
		rec, ok := got[srv.URL+path]
		if !ok {
			t.Errorf("no record for %s in:\n%s", path, stdout)
			continue
		}
		if fmt.Sprint(rec["status"]) != status {
			t.Errorf("%s: status %v, want %s", path, rec["status"], status)
		}
	}
	if got[srv.URL+"/secret"]["robots"] != "disallowed" {
		t.Errorf("/secret: %v, want robots disallowed", got[srv.URL+"/secret"])
	}
	if !strings.Contains(stderr, "crawled 4 URLs") {
		t.Errorf("no summary on stderr:\n%s", stderr)
	}
	// The end names why it stopped and the broken URL with a page
	// linking to it.
	for _, want := range []string{"(nothing left to fetch)", "broken URLs (4xx, 5xx or no answer): 1", srv.URL + "/gone (404) linked from " + srv.URL + "/"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
}

// A run in which no request got an answer (the seed's host is down) fails
// with exit 1, as curl and wget do, and says so; under --log-format json
// its summary is one JSON record like the rest of the log.
func TestDiscoverNothingAnswered(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	_, stderr, code := runCmd(t, "", "discover", "--delay", "0", "--log-format", "json", dead+"/")
	if code != 1 || !strings.Contains(stderr, "no page could be fetched") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	found := false
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not a JSON line under --log-format json: %q", line)
			continue
		}
		last = rec
		if rec["msg"] == "summary" {
			sum, _ := rec["summary"].(map[string]any)
			found = sum["stopped"] == "drained"
			// Durations in seconds, as numbers.
			for _, k := range []string{"elapsed_s", "politeness_wait_s"} {
				if _, ok := sum[k].(float64); !ok {
					t.Errorf("summary %s = %#v; want a number of seconds", k, sum[k])
				}
			}
			if _, ok := sum["elapsed"]; ok {
				t.Errorf("summary still has elapsed (nanoseconds): %v", sum)
			}
		}
	}
	if !found {
		t.Errorf("no summary record with stopped=drained:\n%s", stderr)
	}
	// The error is the last record, with the exit code.
	if msg, _ := last["msg"].(string); !strings.Contains(msg, "no page could be fetched") || last["level"] != "ERROR" || last["exit_code"] != 1.0 {
		t.Errorf("last record %v; want the error, level ERROR, exit_code 1", last)
	}
}

// Under --log-format json (or log.format: json in the config file) a
// usage or config error is a JSON record too, and the exit code stays 2.
func TestJSONLogConfigErrors(t *testing.T) {
	cfg := writeFile(t, "c.yaml", "log:\n  format: json\npoliteness:\n  delay: -1s\n  dealy: 1s\n")
	for _, args := range [][]string{
		{"discover", "--log-format", "json", "--delay", "-1s", "http://127.0.0.1:1/"},
		{"discover", "--log-format=json", "--no-such-flag", "http://127.0.0.1:1/"},
		{"crawl", "-c", cfg, "http://127.0.0.1:1/"},
	} {
		_, stderr, code := runCmd(t, "", args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		var rec map[string]any
		if code != 2 || len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil || rec["level"] != "ERROR" || rec["exit_code"] != 2.0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one JSON error record", args, code, stderr)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 878430: "857.8 KiB", 54998390: "52.5 MiB", 5 << 30: "5.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// jsonLines decodes stdout, one JSON object a line, failing the test at a
// line that is not one.
func jsonLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		recs = append(recs, rec)
	}
	return recs
}

// TestDiscoverEmptyOutWritesToStdout checks that --out= (or --urls=) given
// empty does not send the audit's URLs nowhere: they go to stdout.
func TestDiscoverEmptyOutWritesToStdout(t *testing.T) {
	srv := smallSite(t)
	for _, flag := range []string{"--out=", "--urls="} {
		stdout, stderr, code := runCmd(t, "", "discover", "--delay", "0s", flag, srv.URL+"/")
		if n := strings.Count(stdout, "\n"); code != 0 || n != 4 {
			t.Errorf("discover %s: exit %d, %d lines on stdout, want 4; stderr:\n%s", flag, code, n, stderr)
		}
	}
}

func TestCrawlBadConfigExits2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("seeds: [http://127.0.0.1:1/]\npoliteness:\n  delay: -1s\n"), 0o644)
	_, stderr, code := runCmd(t, "", "crawl", "-c", path)
	if code != 2 || !strings.Contains(stderr, "politeness.delay") || !strings.Contains(stderr, "bad.yaml:3") {
		t.Fatalf("exit %d, stderr %q; want 2 naming politeness.delay at line 3", code, stderr)
	}
	if _, _, code := runCmd(t, "", "discover"); code != 2 {
		t.Errorf("discover with no URL: exit %d, want 2", code)
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// patience bounds the tests' waits for what a command brings about: long
// enough that only something stuck exceeds it, never a busy machine or
// the race detector.
const patience = 2 * time.Minute

// waitFor polls cond until it holds or the test's patience runs out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out after %v waiting for %s", patience, what)
}

func TestCrawlReloadsOnSIGHUP(t *testing.T) {
	srv := smallSite(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "crawl.yaml")
	write := func(body string) {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := fmt.Sprintf("seeds: [%s/]\nstate_dir: %s\npoliteness:\n  delay: 0s\ndaemon:\n  enabled: true\n  recrawl: 1h\n",
		srv.URL, filepath.Join(dir, "state"))
	write(good)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"crawl", "-c", path}, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	}()
	waitFor(t, "the first pass", func() bool { return strings.Contains(stderr.String(), "seeded") })

	write(good + "fetch:\n  workers: 0\n")
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitFor(t, "the bad config to be refused", func() bool {
		return strings.Contains(stderr.String(), "config reload refused") && strings.Contains(stderr.String(), "fetch.workers")
	})

	write(strings.Replace(good, "delay: 0s", "delay: 2s", 1))
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitFor(t, "the good config to be applied", func() bool { return strings.Contains(stderr.String(), "config reloaded") })

	// A named pipe at the config's path is refused at once: opening it
	// for reading blocked the reload, and with it the stop, for good.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitFor(t, "the named pipe to be refused", func() bool { return strings.Contains(stderr.String(), "not a regular file (a named pipe)") })

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("crawl ended with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(patience):
		t.Fatalf("the daemon did not stop within %v of its context ending", patience)
	}
}

// TestHangupStopDoesNotWait: stop returns while a reload is still reading
// its file (a reload that ends after stop is dropped).
func TestHangupStopDoesNotWait(t *testing.T) {
	reading, release := make(chan struct{}), make(chan struct{})
	reload := func() (crawler.Config, error) {
		close(reading)
		<-release
		return crawler.Config{}, errors.New("applied after stop")
	}
	stop := onHangup(context.Background(), nil, reload, slog.New(slog.NewTextHandler(io.Discard, nil)))
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	<-reading
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(patience): // the reload never ends: only a stop that waits for it takes this long
		t.Fatal("stop waited for a reload that was reading its file")
	}
	close(release)
}

// TestDiscoverWithACrawlConfig checks that discover given a crawl's config
// writes to stdout and keeps its state apart: the crawl's inventory file
// and state are left alone, and its done URLs are listed again.
func TestDiscoverWithACrawlConfig(t *testing.T) {
	srv := smallSite(t)
	dir := t.TempDir()
	inv, state := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "state")
	cfg := filepath.Join(dir, "crawl.yaml")
	yaml := fmt.Sprintf("seeds: [%s/]\nstate_dir: %s\npoliteness: {delay: 0s}\noutput: {urls: %s}\n", srv.URL, state, inv)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCmd(t, "", "crawl", "-c", cfg); code != 0 {
		t.Fatalf("crawl: exit %d; stderr:\n%s", code, stderr)
	}
	before, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCmd(t, "", "discover", "-c", cfg, srv.URL+"/")
	if code != 0 {
		t.Fatalf("discover: exit %d; stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stdout, "\n"); n != 4 {
		t.Errorf("discover wrote %d lines to stdout, want 4:\n%s", n, stdout)
	}
	if after, err := os.ReadFile(inv); err != nil || !bytes.Equal(after, before) {
		t.Errorf("discover changed the crawl's inventory (%v); before:\n%s\nafter:\n%s", err, before, after)
	}

	// A daemon's config: discover still runs once, and leaves its port alone.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	daemon := filepath.Join(dir, "daemon.yaml")
	yaml += fmt.Sprintf("daemon: {enabled: true, listen: %q}\n", ln.Addr())
	if err := os.WriteFile(daemon, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCmdWithin(t, patience, "discover", "-c", daemon, srv.URL+"/")
	if code != 0 || strings.Count(stdout, "\n") != 4 {
		t.Errorf("discover with a daemon's config: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for flag, name := range map[string]string{"--daemon": "--daemon", "--mirror=m": "--mirror", "--warc=w": "--warc"} {
		_, stderr, code := runCmdWithin(t, patience, "discover", flag, srv.URL+"/")
		if code != 2 || !strings.Contains(stderr, "discover: "+name+": ") {
			t.Errorf("discover %s: exit %d, stderr %q; want 2, refusing %s", flag, code, stderr, name)
		}
	}
}

// runCmdWithin is runCmd for a command that must end by itself within d:
// past it, the command is cancelled and the test fails.
func runCmdWithin(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errOut bytes.Buffer
	err := run(ctx, args, strings.NewReader(""), &out, &errOut)
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %v", strings.Join(args, " "), d)
	}
	code := exitCode(err, &errOut) // first: it writes the error to errOut
	return out.String(), errOut.String(), code
}

// TestInventoryFieldTypes checks each inventory field the README names
// has its type and its values: status a number (0 without a response),
// fetched_at RFC 3339, found_via and robots from their lists, bytes and
// duration_ms whenever there was a response, and a redirect's target
// found via redirect at the depth of the URL that redirected.
func TestInventoryFieldTypes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /secret\n")
		case "/":
			fmt.Fprint(w, `<html><a href="/old">o</a> <a href="/secret">s</a> <a href="/empty">e</a> <a href="http://127.0.0.1:1/x">x</a></html>`)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			fmt.Fprint(w, `<html>new</html>`)
		case "/empty":
			w.Header().Set("Content-Type", "text/html")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	stdout, stderr, code := runCmd(t, "", "discover", "--delay", "0s", srv.URL+"/")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	recs := map[string]map[string]any{}
	for _, rec := range jsonLines(t, stdout) {
		for k, v := range rec {
			ok := true
			switch k {
			case "url", "final_url", "content_type", "referrer", "error", "title", "description", "h1", "canonical", "lang":
				_, ok = v.(string)
			case "content_hash", "simhash":
				h, _ := v.(string)
				ok = len(h) == 16 && strings.Trim(h, "0123456789abcdef") == ""
			case "word_count", "h1_count", "img_no_alt", "ttfb_ms":
				n, isNum := v.(float64)
				ok = isNum && n == float64(int64(n)) && n >= 0
			case "hsts":
				_, ok = v.(bool)
			case "anchors":
				list, isList := v.([]any)
				ok = isList && len(list) > 0
			case "meta_robots":
				list, isList := v.([]any)
				ok = isList && len(list) > 0
				for _, d := range list {
					s, isString := d.(string)
					ok = ok && isString && s == strings.ToLower(s)
				}
			case "hreflang":
				list, isList := v.([]any)
				ok = isList && len(list) > 0
				for _, h := range list {
					m, _ := h.(map[string]any)
					_, hasLang := m["lang"].(string)
					_, hasURL := m["url"].(string)
					ok = ok && hasLang && hasURL
				}
			case "redirect_chain":
				list, isList := v.([]any)
				ok = isList && len(list) > 0
				for _, h := range list {
					_, isString := h.(string)
					ok = ok && isString
				}
			case "status", "bytes", "duration_ms", "depth", "links_out", "link_depth":
				n, isNum := v.(float64)
				ok = isNum && n == float64(int64(n)) && n >= 0
			case "fetched_at", "lastmod":
				s, _ := v.(string)
				_, err := time.Parse(time.RFC3339, s)
				ok = err == nil
			case "found_via":
				ok = v == "seed" || v == "sitemap" || v == "link" || v == "redirect"
			case "robots":
				ok = v == "allowed" || v == "disallowed"
			case "in_sitemap", "not_modified", "gone", "external":
				_, ok = v.(bool)
			default:
				t.Errorf("field %q is not among the README's inventory fields: %v", k, rec)
			}
			if !ok {
				t.Errorf("field %s = %v (%T): wrong type or value in %v", k, v, v, rec)
			}
		}
		if _, ok := rec["status"]; !ok {
			t.Errorf("no status: %v", rec)
		}
		if rec["status"] != 0.0 {
			for _, k := range []string{"bytes", "duration_ms", "fetched_at", "final_url"} {
				if _, ok := rec[k]; !ok {
					t.Errorf("a record with a response lacks %s: %v", k, rec)
				}
			}
		}
		recs[strings.TrimPrefix(rec["url"].(string), srv.URL)] = rec
	}
	for path, want := range map[string]string{
		"/":                    "200 0 seed",
		"/old":                 "301 1 link",
		"/new":                 "200 1 redirect",
		"/secret":              "0 1 link",
		"/empty":               "200 1 link",
		"http://127.0.0.1:1/x": "0 1 link",
	} {
		r := recs[path]
		if got := fmt.Sprintf("%v %v %v", r["status"], r["depth"], r["found_via"]); got != want {
			t.Errorf("%s: status, depth, found_via = %s; want %s", path, got, want)
		}
	}
	if recs["/old"]["final_url"] != srv.URL+"/new" || recs["/new"]["referrer"] != srv.URL+"/old" {
		t.Errorf("redirect records: %v and %v", recs["/old"], recs["/new"])
	}
	if recs["/secret"]["robots"] != "disallowed" || recs["/empty"]["bytes"] != 0.0 {
		t.Errorf("records of /secret %v and /empty %v", recs["/secret"], recs["/empty"])
	}
}

// Each command's help lists the flags it takes and no other, and help
// works for every command, help and version included.
func TestHelpListsOnlyTakenFlags(t *testing.T) {
	out, _, code := runCmd(t, "", "help", "discover")
	if code != 0 || !strings.Contains(out, "-out FILE") || !strings.Contains(out, "same as -out FILE") {
		t.Fatalf("help discover: exit %d:\n%s", code, out)
	}
	for _, name := range []string{"-daemon", "-mirror", "-mirror-links", "-warc", "-recrawl"} {
		if strings.Contains(out, "\n  "+name+" ") || strings.Contains(out, "\n  "+name+"\n") {
			t.Errorf("help discover lists %s, which discover does not take", name)
		}
	}
	// discover keeps its state in a temporary directory, not crawl's.
	if strings.Contains(out, "crawl-state") || !strings.Contains(out, "temporary directory") {
		t.Errorf("help discover gives crawl's state-dir default:\n%s", out)
	}
	out, _, code = runCmd(t, "", "help", "crawl")
	if code != 0 || !strings.Contains(out, "\n  -mirror directory") || !strings.Contains(out, "\n  -daemon") {
		t.Errorf("help crawl: exit %d, lacks -mirror or -daemon:\n%s", code, out)
	}
	for _, args := range [][]string{{"help", "help"}, {"help", "version"}, {"version", "--help"}} {
		if out, errOut, code := runCmd(t, "", args...); code != 0 || out == "" {
			t.Errorf("crawler %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
	if _, errOut, code := runCmd(t, "", "discover", "--recrawl", "1h", "http://127.0.0.1:1/"); code != 2 || !strings.Contains(errOut, "discover: --recrawl: ") {
		t.Errorf("discover --recrawl: exit %d, stderr %q; want it refused", code, errOut)
	}
}

// --refresh needs a state to refresh, and makes one pass: a daemon, which
// revisits on its schedule, refuses it.
func TestRefreshFlag(t *testing.T) {
	if _, errOut, code := runCmd(t, "", "discover", "--refresh", "http://127.0.0.1:1/"); code != 2 || !strings.Contains(errOut, "--refresh needs the --state-dir") {
		t.Errorf("discover --refresh without --state-dir: exit %d, stderr %q; want it refused", code, errOut)
	}
	if _, errOut, code := runCmd(t, "", "crawl", "--refresh", "--daemon", "--state-dir", t.TempDir(), "http://127.0.0.1:1/"); code != 2 || !strings.Contains(errOut, "--refresh makes one pass") {
		t.Errorf("crawl --refresh --daemon: exit %d, stderr %q; want it refused", code, errOut)
	}
	if out, _, _ := runCmd(t, "", "help", "discover"); !strings.Contains(out, "-refresh") {
		t.Errorf("help discover does not list -refresh:\n%s", out)
	}
}

// The summary ends with the crawler report command over the run's files.
func TestSummaryNamesTheReportCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body>hi</body></html>")
	}))
	defer srv.Close()
	dir := t.TempDir()
	urls, links := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "it's links.jsonl")
	_, stderr, code := runCmd(t, "", "discover", "--delay", "0", "--out", urls, "--links", links, srv.URL+"/")
	want := "the whole audit: crawler report --urls " + urls + " --links '" + dir + "/it'\\''s links.jsonl'"
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d; stderr lacks %q:\n%s", code, want, stderr)
	}
	_, stderr, code = runCmd(t, "", "discover", "--delay", "0", "--out", os.DevNull, srv.URL+"/")
	if code != 0 || strings.Contains(stderr, "the whole audit") {
		t.Errorf("exit %d; an inventory sent to %s is named for a report:\n%s", code, os.DevNull, stderr)
	}
}

// An unknown flag gets a "did you mean" as an unknown config key does.
func TestUnknownFlagSuggestsOne(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"discover", "--delya", "1s", "http://127.0.0.1:1/"}, "(did you mean --delay?)"},
		{[]string{"crawl", "--max_depth", "2", "http://127.0.0.1:1/"}, "(did you mean --max-depth?)"},
		{[]string{"report", "--formt", "json"}, "(did you mean --format?)"},
		{[]string{"sitemap", "--jsn", "http://127.0.0.1:1/"}, "(did you mean --json?)"},
	} {
		_, stderr, code := runCmd(t, "", tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	if _, stderr, _ := runCmd(t, "", "discover", "--zzzzzzzz", "http://127.0.0.1:1/"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a flag like none suggests one: %q", stderr)
	}
}

// Hundreds of hosts parked (a --check-external audit) make a count and
// the first few in the summary, not a line each.
func TestSummaryGroupsParkedHosts(t *testing.T) {
	var sum crawler.Summary
	for i := range 326 {
		sum.Parked = append(sum.Parked, crawler.ParkedHost{Origin: fmt.Sprintf("http://h%d.example", i), Reason: "robots.txt unavailable: 503\u202e"})
	}
	var b bytes.Buffer
	printSummary(&b, sum)
	out := b.String()
	if !strings.Contains(out, "hosts parked: 326, the first 5:\n") || strings.Count(out, ".example (") != 5 || strings.Contains(out, "\u202e") {
		t.Errorf("summary:\n%s", out)
	}
	sum.Parked = sum.Parked[:2]
	b.Reset()
	printSummary(&b, sum)
	if out := b.String(); !strings.Contains(out, "hosts parked: 2:\n    http://h0.example (") || strings.Contains(out, "the first") {
		t.Errorf("summary:\n%s", out)
	}
}
