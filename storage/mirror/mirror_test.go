package mirror

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

func newTestMirror(t *testing.T) *Mirror {
	t.Helper()
	m, err := New(filepath.Join(t.TempDir(), "mirror"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func writePage(t *testing.T, m *Mirror, raw, ct, body string) string {
	t.Helper()
	rel, err := m.Write(mustParse(t, raw), ct, strings.NewReader(body))
	if err != nil {
		t.Fatalf("Write(%s): %v", raw, err)
	}
	return rel
}

func readMirror(t *testing.T, m *Mirror, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.Root(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tree lists the mirror's files and directories, directories with a
// trailing slash.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMirrorWrite(t *testing.T) {
	m := newTestMirror(t)
	rel := writePage(t, m, "http://example.com/docs/", "text/html", "v1")
	if rel != "example.com/docs/index.html" {
		t.Errorf("Write returned %q", rel)
	}
	if got := writePage(t, m, "http://example.com/docs/", "text/html", "v2"); got != rel {
		t.Errorf("rewrite returned %q", got)
	}
	if got := readMirror(t, m, rel); got != "v2" {
		t.Errorf("content %q after rewrite", got)
	}
	fi, err := os.Stat(filepath.Join(m.Root(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("file mode %v", fi.Mode())
	}
	di, err := os.Stat(filepath.Join(m.Root(), "example.com", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm()&0o755 != 0o755 {
		t.Errorf("directory mode %v", di.Mode())
	}
	want := []string{"example.com/", "example.com/docs/", "example.com/docs/index.html"}
	if got := tree(t, m.Root()); !slices.Equal(got, want) {
		t.Errorf("tree %q, want %q (no temporary files left)", got, want)
	}
}

func TestMirrorWriteFailureKeepsOld(t *testing.T) {
	m := newTestMirror(t)
	u := mustParse(t, "http://h/a.css")
	writePage(t, m, u.String(), "text/css", "old")
	_, err := m.Write(u, "text/css", iotest.ErrReader(errors.New("connection reset")))
	if err == nil {
		t.Fatal("Write with a failing body succeeded")
	}
	if got := readMirror(t, m, "h/a.css"); got != "old" {
		t.Errorf("content %q after a failed write, want the old one", got)
	}
	if got := tree(t, m.Root()); !slices.Equal(got, []string{"h/", "h/a.css"}) {
		t.Errorf("tree %q after a failed write", got)
	}
}

// TestMirrorClash writes a file and a directory of the same name in both
// orders and expects the same tree.
func TestMirrorClash(t *testing.T) {
	pages := [][2]string{
		{"http://h/api/v1", "v1"},
		{"http://h/api/v1/users", "users"},
		{"http://h/api/v1/users/7", "seven"},
	}
	want := []string{
		"h/", "h/api/", "h/api/v1/", "h/api/v1/users/", "h/api/v1/users/7",
		"h/api/v1/users%!", "h/api/v1%!",
	}
	orders := [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {2, 0, 1}}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			m := newTestMirror(t)
			for _, i := range order {
				writePage(t, m, pages[i][0], "application/json", pages[i][1])
			}
			if got := tree(t, m.Root()); !slices.Equal(got, want) {
				t.Errorf("tree %q, want %q", got, want)
			}
			for _, p := range pages {
				rel, err := m.Locate(mustParse(t, p[0]), "application/json")
				if err != nil {
					t.Fatal(err)
				}
				if got := readMirror(t, m, rel); got != p[1] {
					t.Errorf("%s at %s holds %q", p[0], rel, got)
				}
			}
		})
	}
}

func TestMirrorRemove(t *testing.T) {
	m := newTestMirror(t)
	u := mustParse(t, "http://h/gone")
	writePage(t, m, u.String(), "text/html", "x")
	writePage(t, m, "http://h/kept", "text/html", "y")
	if err := m.Remove(u, "text/html"); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(u, "text/html"); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if err := m.Remove(mustParse(t, "http://never/x"), ""); err != nil {
		t.Errorf("Remove of a never-saved URL: %v", err)
	}
	if got := tree(t, m.Root()); !slices.Equal(got, []string{"h/", "h/kept.html"}) {
		t.Errorf("tree %q", got)
	}
	// A file moved into its directory is found and removed there.
	writePage(t, m, "http://h/d", "", "file")
	writePage(t, m, "http://h/d/e", "", "child")
	if err := m.Remove(mustParse(t, "http://h/d"), ""); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, m.Root()); !slices.Equal(got, []string{"h/", "h/d/", "h/d/e", "h/kept.html"}) {
		t.Errorf("tree %q", got)
	}
}

// TestMirrorHostile writes hostile URLs into a mirror inside a directory
// with a sentinel beside it and checks everything stays inside.
func TestMirrorHostile(t *testing.T) {
	outer := t.TempDir()
	root := filepath.Join(outer, "mirror")
	m, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	hostile := []*url.URL{
		mustParse(t, "http://h/%2e%2e/%2e%2e/escape"),
		mustParse(t, "http://h/..%2F..%2Fescape"),
		mustParse(t, "http://h/a%5C..%5C..%5Cescape"),
		mustParse(t, "http://h/%00"),
		mustParse(t, "http://h/NUL.txt"),
		mustParse(t, "http://h/"+strings.Repeat("%C3%A9", 300)),
		mustParse(t, "http://h"+strings.Repeat("/"+strings.Repeat("x", 199), 30)),
		{Scheme: "http", Host: "..", Path: "/../../escape"},
		{Scheme: "http", Host: "", Path: "/../escape"},
		{Scheme: "http", Host: "h", Path: "/a/../../../escape"},
		{Scheme: "http", Host: "h", Path: "/etc/passwd"},
	}
	for _, u := range hostile {
		rel, err := m.Write(u, "text/html", strings.NewReader("x"))
		if err != nil {
			t.Errorf("Write(%q): %v", u, err)
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if r, err := filepath.Rel(root, abs); err != nil || !filepath.IsLocal(r) {
			t.Errorf("Write(%q) wrote %q outside the root", u, rel)
		}
	}
	entries, err := os.ReadDir(outer)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "mirror" {
		t.Errorf("files appeared beside the mirror: %v", entries)
	}
}

// TestMirrorConcurrent writes clashing URLs from several goroutines, in
// random orders, and checks each URL's file holds its body.
func TestMirrorConcurrent(t *testing.T) {
	var urls []string
	for _, a := range []string{"a", "b"} {
		urls = append(urls, "http://h/"+a)
		for _, b := range []string{"x", "y"} {
			urls = append(urls, "http://h/"+a+"/"+b)
			urls = append(urls, "http://h/"+a+"/"+b+"/z")
		}
	}
	for round := range 5 {
		m := newTestMirror(t)
		order := slices.Clone(urls)
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var wg sync.WaitGroup
		for _, raw := range order {
			wg.Go(func() {
				if _, err := m.Write(mustParse(t, raw), "", strings.NewReader(raw)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for _, raw := range urls {
			rel, err := m.Locate(mustParse(t, raw), "")
			if err != nil {
				t.Fatal(err)
			}
			if got := readMirror(t, m, rel); got != raw {
				t.Errorf("round %d: %s at %s holds %q", round, raw, rel, got)
			}
		}
	}
}

// TestMirrorFileBesideDirectory checks that /e (not HTML, so saved as e),
// /e/ and /e/index.html, written in any order, lose no body: /e is kept
// beside the directory e/, whose index.html the other two share.
func TestMirrorFileBesideDirectory(t *testing.T) {
	pages := []struct{ url, ctype, body string }{
		{"http://h/e", "text/plain", "file"},
		{"http://h/e/", "text/html", "dir"},
		{"http://h/e/index.html", "text/html", "index"},
	}
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			m := newTestMirror(t)
			for _, i := range order {
				writePage(t, m, pages[i].url, pages[i].ctype, pages[i].body)
			}
			want := []string{"h/", "h/e/", "h/e/index.html", "h/e%!"}
			if got := tree(t, m.Root()); !slices.Equal(got, want) {
				t.Errorf("tree %q, want %q", got, want)
			}
			rel, err := m.Locate(mustParse(t, "http://h/e"), "text/plain")
			if err != nil {
				t.Fatal(err)
			}
			if got := readMirror(t, m, rel); got != "file" {
				t.Errorf("/e at %s holds %q", rel, got)
			}
			last := pages[order[len(order)-1]]
			if last.ctype == "text/plain" {
				last = pages[order[len(order)-2]]
			}
			if got := readMirror(t, m, "h/e/index.html"); got != last.body {
				t.Errorf("e/index.html holds %q, want the last of /e/ and /e/index.html, %q", got, last.body)
			}
			if ref := RelativeRef("h/index.html", rel); ref != "e%25!" {
				t.Errorf("a link to /e from the root is %q", ref)
			}
		})
	}
}

// TestMirrorRemovesTemporaryFiles checks that the temporary files a killed
// crawl left are removed when the mirror is opened again, and that no URL
// is saved under such a name.
func TestMirrorRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{".tmp-abc", "h/.tmp-1x2y", "h/d/.tmp-zz", "h/keep.html"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tree(t, m.Root()), []string{"h/", "h/d/", "h/keep.html"}; !slices.Equal(got, want) {
		t.Errorf("tree %q, want %q", got, want)
	}
	if p := Path(mustParse(t, "http://h/a/.tmp-x"), "text/plain"); p != "h/a/%2Etmp-x" {
		t.Errorf("Path of /a/.tmp-x = %q", p)
	}
}

// TestMirrorRefusesSymlinkedDirectory: a symbolic link where a page's
// directory should be is refused, and nothing is written where it points.
// (A directory the mirror made or checked this run is not looked at again:
// one swapped for a link while the crawl runs is trusted, as the rest of
// the state directory is.)
func TestMirrorRefusesSymlinkedDirectory(t *testing.T) {
	m := newTestMirror(t)
	outside := t.TempDir()
	writePage(t, m, "http://h/a.html", "text/html", "a") // h/ made and known
	if err := os.Symlink(outside, filepath.Join(m.Root(), "h", "docs")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(mustParse(t, "http://h/docs/b.html"), "text/html", strings.NewReader("b")); err == nil {
		t.Error("a page was written through a symbolic link")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("%d files written where the link points", len(entries))
	}
}

// TestMirrorDirectoryRemovedByHand: a directory the mirror wrote into and
// that was removed since is made again for the next page.
func TestMirrorDirectoryRemovedByHand(t *testing.T) {
	m := newTestMirror(t)
	writePage(t, m, "http://h/a/b/one.html", "text/html", "1")
	if err := os.RemoveAll(filepath.Join(m.Root(), "h", "a")); err != nil {
		t.Fatal(err)
	}
	writePage(t, m, "http://h/a/b/two.html", "text/html", "2")
	if got := readMirror(t, m, "h/a/b/two.html"); got != "2" {
		t.Errorf("two.html holds %q", got)
	}
}
