package crawler

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
)

// newRelinker returns a crawler of http://example.test/ with a relinked
// mirror, closed when the test ends, and a function that saves a page in
// its mirror and its page records as a fetch would.
func newRelinker(t *testing.T) (*Crawler, func(raw, body string) storage.Page) {
	t.Helper()
	cfg := testConfig(t, "http://example.test/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Output.MirrorLinks = MirrorLinksRelative
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, func(raw, body string) storage.Page {
		t.Helper()
		rel, err := c.out.mirror.Write(frontier.MustParse(raw), "text/html", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		canon, err := frontier.Canonicalize(raw, 0)
		if err != nil {
			t.Fatal(err)
		}
		p := storage.Page{Key: canon.Key, URL: raw, Status: 200, ContentType: "text/html", MirrorPath: rel}
		if err := c.pages.Put(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// newRelinkDaemon returns a daemon crawler of seeds (recrawl an hour, as
// edit may change) whose mirror is relinked, looking every wait.
func newRelinkDaemon(t *testing.T, wait time.Duration, edit func(*Config), seeds ...string) (*Crawler, Config) {
	t.Helper()
	cfg := testConfig(t, seeds...)
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Output.MirrorLinks = MirrorLinksRelative
	cfg.Daemon.Enabled = true
	cfg.Daemon.Recrawl = time.Hour
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.relink.relinkWait = wait
	return c, cfg
}

// mirrorFile reads the mirror file of page p.
func mirrorFile(t *testing.T, c *Crawler, p storage.Page) string {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(c.cfg.Output.MirrorDir, filepath.FromSlash(p.MirrorPath)))
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// Relinking leaves alone a page a worker is visiting (a daemon's revisit
// may be saving its new body and record), and relinks it at the next pass.
func TestRelinkSkipsPagesBeingVisited(t *testing.T) {
	c, save0 := newRelinker(t)
	save := func(raw, body string) (key, file string) {
		p := save0(raw, body)
		return p.Key, filepath.Join(c.cfg.Output.MirrorDir, filepath.FromSlash(p.MirrorPath))
	}
	const body = `<a href="http://example.test/b">b</a>`
	aKey, aFile := save("http://example.test/a", body)
	save("http://example.test/b", "b")

	relinked := func() (string, bool) {
		t.Helper()
		got, err := os.ReadFile(aFile)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := c.pages.Get(aKey)
		if err != nil {
			t.Fatal(err)
		}
		return string(got), p.Relinked
	}
	c.visiting.hold(aKey) // a worker is visiting /a
	mirrored := c.out.mirrored.Load()
	if _, left, err := c.relink.relinkMirrorLeft(); err != nil || left != 1 {
		t.Fatalf("relinkMirrorLeft left %d pages (%v), want 1", left, err)
	}
	if got, done := relinked(); got != body || done {
		t.Errorf("/a relinked while being visited: relinked=%v, file %q", done, got)
	}
	if n := c.out.mirrored.Load(); n != mirrored {
		t.Errorf("mirrored went from %d to %d, though no page was saved or removed", mirrored, n)
	}
	c.visiting.drop(aKey)
	if _, err := c.relink.relinkMirror(); err != nil {
		t.Fatal(err)
	}
	if got, done := relinked(); !done || !strings.Contains(got, `href="b.html"`) {
		t.Errorf("/a not relinked at the next pass: relinked=%v, file %q", done, got)
	}
}

// linkToBSite serves / linking to /b, and /b, until the test ends.
func linkToBSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><a href="/b">b</a></html>`)
		case "/b":
			fmt.Fprint(w, `<html>b</html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A daemon relinks its mirror soon after its first pass, not only once a
// daemon.recrawl (here an hour) has gone by.
func TestDaemonRelinksBeforeRecrawl(t *testing.T) {
	srv := linkToBSite(t)
	c, cfg := newRelinkDaemon(t, 50*time.Millisecond, nil, srv.URL+"/")
	waitRelinked(t, c, cfg, srv.URL, nil)
}

// A revisit that brings the same body from a server that sends no
// validators leaves the mirror file as it is, relinked or not: it is not
// written again.
func TestDaemonKeepsUnchangedMirrorFile(t *testing.T) {
	var mu sync.Mutex
	visits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			mu.Lock()
			visits++
			mu.Unlock()
			fmt.Fprint(w, `<html><a href="/b">b</a></html>`)
		case "/b":
			fmt.Fprint(w, `<html>b</html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cfg := testConfig(t, srv.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Daemon.Enabled = true
	cfg.Daemon.Recrawl = 50 * time.Millisecond
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(c)
	fetched := func() int { mu.Lock(); defer mu.Unlock(); return visits }
	if !poll(func() bool { return fetched() >= 3 }) {
		stop()
		c.Close()
		t.Fatalf("/ fetched %d times in %v, want 3", fetched(), patience)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// mirrored counts the files saved in or removed from the mirror.
	if n := c.out.mirrored.Load(); n != 2 {
		t.Errorf("%d mirror writes for two pages that never changed (/ fetched %d times), want 2", n, fetched())
	}
}

// The mirror file of a page that now answers without a body for the
// mirror (404 with daemon.keep_gone, a redirect) stays as it was relinked:
// relinking it again would read its relative links as links of the site.
func TestDaemonKeepsRelinkedFileOfPageWithoutBody(t *testing.T) {
	for _, tc := range []struct {
		name     string
		keepGone bool
		answer   func(w http.ResponseWriter, r *http.Request)
	}{
		{"gone, kept", true, http.NotFound},
		{"redirect", false, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/d/c", http.StatusMovedPermanently) }},
	} {
		t.Run(tc.name, func(t *testing.T) { testKeepsRelinkedFile(t, tc.keepGone, tc.answer) })
	}
}

func testKeepsRelinkedFile(t *testing.T, keepGone bool, answer http.HandlerFunc) {
	var mu sync.Mutex
	changed := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		now := changed
		mu.Unlock()
		switch {
		case r.URL.Path == "/":
			// It changes with /d/b, so the mirror is relinked again.
			fmt.Fprintf(w, `<html><a href="/d/b">b</a> <a href="/d/c">c</a> %v</html>`, now)
		case r.URL.Path == "/d/b" && !now:
			fmt.Fprint(w, `<html><a href="/d/c">c</a></html>`)
		case r.URL.Path == "/d/b":
			answer(w, r)
		case r.URL.Path == "/d/c":
			fmt.Fprint(w, `<html>c</html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, cfg := newRelinkDaemon(t, 20*time.Millisecond, func(cfg *Config) {
		cfg.Daemon.KeepGone = keepGone
		// Long enough for the first pass to end before a relink is
		// forced (which would keep /d/b's link to a /d/c not yet in the
		// mirror absolute for good), on a loaded machine too.
		cfg.Daemon.Recrawl = 300 * time.Millisecond
	}, srv.URL+"/")
	stop := runInBackground(c)
	bFile := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(srv.URL+"/d/b"), "text/html"))
	read := func() string { b, _ := os.ReadFile(bFile); return string(b) }
	wait := func(what string, cond func() bool) {
		t.Helper()
		if !poll(cond) {
			stop()
			t.Fatalf("timed out waiting for %s; /d/b's file: %q", what, read())
		}
	}
	wait("/d/b to be relinked", func() bool { return strings.Contains(read(), `href="c.html"`) })
	mu.Lock()
	changed = true
	mu.Unlock()
	wait("/d/b's new answer", func() bool {
		return inventory(t, cfg.Output.URLs)[srv.URL+"/d/b"].Status != 200
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// A relink pass once /d/b's new answer is recorded, for certain: a
	// sleep gave the daemon's passes a while, which on a busy machine
	// could hold none.
	if _, err := c.relink.relinkMirror(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := read(); !strings.Contains(got, `href="c.html"`) {
		t.Errorf("/d/b's kept file was relinked again: %q", got)
	}
}

// A daemon relinks its mirror when no new URL waits: a page relinked while
// a page it links to is still being fetched would keep an absolute link to
// it for good.
func TestDaemonRelinksWhenIdle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><a href="/slow">slow</a></html>`)
		case "/slow":
			time.Sleep(300 * time.Millisecond)
			fmt.Fprint(w, `<html>slow</html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, cfg := newRelinkDaemon(t, 10*time.Millisecond, nil, srv.URL+"/")
	stop := runInBackground(c)
	slow := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(srv.URL+"/slow"), "text/html"))
	poll(func() bool { _, err := os.Stat(slow); return err == nil })
	index := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(srv.URL+"/"), "text/html"))
	relinked := poll(func() bool { // relink passes after /slow is saved
		got, _ := os.ReadFile(index)
		return strings.Contains(string(got), `href="slow.html"`)
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got, _ := os.ReadFile(index); !relinked {
		t.Errorf("the index links to /slow as %q", got)
	}
}

// A URL the dispatcher has leased and not yet handed to a worker holds
// relinking back: it is neither queued nor in flight, and a relink then
// kept an absolute link to it for good (TestDaemonRelinksWhenIdle, once on
// a busy machine: the index linked to /slow as http://…/slow). The lease
// is taken here as the dispatcher takes it, and checked before it is
// handed out; hosts.idle, read after the frontier's totals, checks it too.
func TestCrawlNotIdleWhileALeaseIsHandedOut(t *testing.T) {
	c, _ := newRelinker(t)
	now := c.now()
	u, err := frontier.Canonicalize("http://example.test/slow", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.front.Add([]frontier.Item{{URL: u, Kind: frontier.KindPage}}); err != nil {
		t.Fatal(err)
	}
	if c.crawlIdle(now) {
		t.Fatal("idle with /slow queued")
	}
	l, _, err := c.front.Next(now)
	if err != nil || l == nil || l.Key != u.Key {
		t.Fatalf("lease %+v, %v; want /slow's", l, err)
	}
	if c.crawlIdle(now) {
		t.Error("idle while /slow is leased, before the dispatcher hands it out")
	}
	if c.hosts.idle(now) {
		t.Error("hosts idle while /slow is leased")
	}
	c.settle(l, release(time.Time{})) // the dispatcher gives it back
	if c.crawlIdle(now) {
		t.Error("idle with /slow queued again")
	}
}

// A host given up on until the next pass (here its page asks, by
// Retry-After, to wait past retry_after_max) does not keep the daemon from
// being idle: the mirror of the other host is relinked without waiting for
// daemon.recrawl.
func TestDaemonRelinksWhileAHostWaits(t *testing.T) {
	srv := linkToBSite(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	c, cfg := newRelinkDaemon(t, 20*time.Millisecond, func(cfg *Config) { cfg.Politeness.RetryAfterMax = time.Minute },
		srv.URL+"/", down.URL+"/")
	waitRelinked(t, c, cfg, srv.URL, nil)
}

// A reload that shortens daemon.recrawl shortens the relink period at once:
// here from an hour to a few milliseconds.
func TestDaemonRelinkPeriodFollowsReload(t *testing.T) {
	srv := linkToBSite(t)
	c, cfg := newRelinkDaemon(t, time.Hour, nil, srv.URL+"/")
	waitRelinked(t, c, cfg, srv.URL, func() {
		b := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(srv.URL+"/b"), "text/html"))
		if !poll(func() bool { _, err := os.Stat(b); return err == nil }) {
			t.Errorf("/b not saved in %v", patience)
			return
		}
		next := cfg
		next.Daemon.Recrawl = 20 * time.Millisecond
		if _, err := c.Reload(func() (Config, error) { return next, nil }); err != nil {
			t.Error(err)
		}
	})
}

// waitRelinked runs c as a daemon until the mirror file of base+"/" links
// to b.html, or fails after patience. started, if not nil, runs once c runs.
func waitRelinked(t *testing.T, c *Crawler, cfg Config, base string, started func()) {
	t.Helper()
	stop := runInBackground(c)
	if started != nil {
		started()
	}
	index := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(base+"/"), "text/html"))
	var got []byte
	poll(func() bool {
		got, _ = os.ReadFile(index)
		return strings.Contains(string(got), `href="b.html"`)
	})
	if err := stop(); err != nil {
		t.Error(err)
	}
	c.Close()
	if !strings.Contains(string(got), `href="b.html"`) {
		t.Errorf("the index is not relinked in %v: %q", patience, got)
	}
}

// A host that waits for its own Retry-After holds relinking back: its
// queued URLs are fetched this pass, and a page relinked before them would
// keep absolute links to them for good. Here /b first answers 503 with
// Retry-After: 1; the index must link to b.html once both are relinked.
func TestDaemonRelinkWaitsForRetryAfter(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><a href="/b">b</a></html>`)
		case "/b":
			if asked.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, `<html>b</html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, cfg := newRelinkDaemon(t, 20*time.Millisecond, nil, srv.URL+"/")
	stop := runInBackground(c)
	relinked := func(raw string) bool {
		key, _ := frontier.Canonicalize(raw, 0)
		p, ok, err := c.pages.Get(key.Key)
		return err == nil && ok && p.Relinked
	}
	if !poll(func() bool { return relinked(srv.URL+"/") && relinked(srv.URL+"/b") }) {
		t.Errorf("/ and /b not relinked in %v", patience)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
	c.Close()
	index := filepath.Join(cfg.Output.MirrorDir, mirror.Path(frontier.MustParse(srv.URL+"/"), "text/html"))
	if got, _ := os.ReadFile(index); !strings.Contains(string(got), `href="b.html"`) {
		t.Errorf("the index links to /b as %q", got)
	}
}
