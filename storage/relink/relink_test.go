package relink

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
)

// held is the set of URL keys a test's workers are visiting.
type held struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (h *held) hold(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.keys[key] {
		return false
	}
	h.keys[key] = true
	return true
}

func (h *held) drop(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.keys, key)
}

// newRelinker returns a Relinker of a fresh mirror and page records,
// closed when the test ends, the keys its workers hold, and a function
// that saves a page in the mirror and the page records as a fetch would.
func newRelinker(t *testing.T) (*Relinker, *held, func(raw, body string) storage.Page) {
	t.Helper()
	st, err := storage.Open(t.TempDir(), storage.StateOptions{Scratch: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := mirror.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &held{keys: map[string]bool{}}
	r := &Relinker{
		Pages: st.Pages, Mirror: m, Hold: h.hold, Drop: h.drop,
		MaxRedirects: func() int { return 20 }, Log: slog.New(slog.DiscardHandler),
	}
	return r, h, func(raw, body string) storage.Page {
		t.Helper()
		rel, err := m.Write(frontier.MustParse(raw), "text/html", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		p := storage.Page{Key: key(t, raw), URL: raw, Status: 200, ContentType: "text/html", MirrorPath: rel}
		if err := st.Pages.Put(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// key is the page records' key of raw.
func key(t *testing.T, raw string) string {
	t.Helper()
	canon, err := frontier.Canonicalize(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	return canon.Key
}

// relinkedIndex saves http://example.test/ with body index, and pages /b
// and /c, in the mirror of newRelinker, relinks it once with no broken link
// left, and returns the pages saved by URL.
func relinkedIndex(t *testing.T, index string) (*Relinker, map[string]storage.Page) {
	t.Helper()
	r, _, save := newRelinker(t)
	pages := map[string]storage.Page{}
	for raw, body := range map[string]string{
		"http://example.test/":  index,
		"http://example.test/b": "b",
		"http://example.test/c": "c",
	} {
		pages[raw] = save(raw, body)
	}
	if rep, _, err := r.Pass(); err != nil || len(rep.Broken) != 0 {
		t.Fatalf("first pass: %+v, %v", rep, err)
	}
	return r, pages
}

// markGone does what a visit does when page p answers 404 on a revisit:
// removes its mirror file and records it gone, keeping its type.
func markGone(t *testing.T, r *Relinker, p storage.Page) {
	t.Helper()
	if err := r.Mirror.Remove(frontier.MustParse(p.URL), p.ContentType); err != nil {
		t.Fatal(err)
	}
	p.Status, p.MirrorPath = 404, ""
	if err := r.Pages.Put(p); err != nil {
		t.Fatal(err)
	}
}

// mirrorFile reads the mirror file of page p.
func mirrorFile(t *testing.T, r *Relinker, p storage.Page) string {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(r.Mirror.Root(), filepath.FromSlash(p.MirrorPath)))
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// A pass leaves alone a page whose key is held (a worker is visiting it),
// says so, and relinks it at the next pass.
func TestPassSkipsHeldPages(t *testing.T) {
	r, h, save := newRelinker(t)
	const body = `<a href="http://example.test/b">b</a>`
	a := save("http://example.test/a", body)
	save("http://example.test/b", "b")
	relinked := func() (string, bool) {
		t.Helper()
		p, _, err := r.Pages.Get(a.Key)
		if err != nil {
			t.Fatal(err)
		}
		return mirrorFile(t, r, a), p.Relinked
	}
	h.hold(a.Key)
	if _, left, err := r.Pass(); err != nil || left != 1 {
		t.Fatalf("Pass left %d pages (%v), want 1", left, err)
	}
	if got, done := relinked(); got != body || done {
		t.Errorf("/a relinked while held: relinked=%v, file %q", done, got)
	}
	if h.hold(a.Key) {
		t.Error("the pass dropped a key it did not take")
	}
	h.drop(a.Key)
	if _, left, err := r.Pass(); err != nil || left != 0 {
		t.Fatalf("second Pass left %d pages (%v), want 0", left, err)
	}
	if got, done := relinked(); !done || !strings.Contains(got, `href="b.html"`) {
		t.Errorf("/a not relinked at the next pass: relinked=%v, file %q", done, got)
	}
	if len(h.keys) != 0 {
		t.Errorf("keys still held after the pass: %v", h.keys)
	}
}

// A page removed from the mirror (gone) leaves no broken links: links to it
// from files relinked before are made absolute again, as wget -k writes a
// link to a page it does not have.
func TestRelinkUnlinksGonePages(t *testing.T) {
	r, pages := relinkedIndex(t, `<a href="/b#x">b</a> <a href="/c">c</a>`)
	// /b answers 404 on a revisit: handle removes its file, keeps its type.
	markGone(t, r, pages["http://example.test/b"])
	rep, _, err := r.Pass()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Broken) != 0 {
		t.Errorf("broken links left: %+v", rep.Broken)
	}
	root := pages["http://example.test/"]
	if got, want := mirrorFile(t, r, root), `<a href="http://example.test/b#x">b</a> <a href="c.html">c</a>`; got != want {
		t.Errorf("index after /b went: %q, want %q", got, want)
	}
}

// Only links still broken are made absolute again: a gone page that comes
// back (its file saved again, its record not yet) keeps its relative links.
func TestRelinkUnlinksOnlyBrokenLinks(t *testing.T) {
	r, pages := relinkedIndex(t, `<a href="/b">b</a> <a href="/c">c</a>`)
	markGone(t, r, pages["http://example.test/b"])
	markGone(t, r, pages["http://example.test/c"])
	// /b is back: a worker has saved its file and not yet its record.
	if _, err := r.Mirror.Write(frontier.MustParse("http://example.test/b"), "text/html", strings.NewReader("b")); err != nil {
		t.Fatal(err)
	}
	if rep, _, err := r.Pass(); err != nil || len(rep.Broken) != 0 {
		t.Fatalf("second pass: %+v, %v", rep, err)
	}
	root := pages["http://example.test/"]
	if got, want := mirrorFile(t, r, root), `<a href="b.html">b</a> <a href="http://example.test/c">c</a>`; got != want {
		t.Errorf("index after /c went and /b came back: %q, want %q", got, want)
	}
}

// A link to a URL that redirected is followed to the file of the end of
// its chain, up to MaxRedirects hops, read when the link is: past them it
// becomes absolute.
func TestPassFollowsRedirectsUpToMax(t *testing.T) {
	for _, tc := range []struct {
		max  int
		want string
	}{
		{2, `<a href="new.html">x</a>`},
		{1, `<a href="http://example.test/old">x</a>`},
	} {
		r, _, save := newRelinker(t)
		r.MaxRedirects = func() int { return tc.max }
		index := save("http://example.test/", `<a href="/old">x</a>`)
		save("http://example.test/new", "new")
		for _, hop := range [][2]string{{"/old", "/older"}, {"/older", "/new"}} {
			raw := "http://example.test" + hop[0]
			p := storage.Page{Key: key(t, raw), URL: raw, Status: 301, FinalURL: "http://example.test" + hop[1]}
			if err := r.Pages.Put(p); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := r.Pass(); err != nil {
			t.Fatal(err)
		}
		if got := mirrorFile(t, r, index); got != tc.want {
			t.Errorf("max_redirects %d: index %q, want %q", tc.max, got, tc.want)
		}
	}
}
