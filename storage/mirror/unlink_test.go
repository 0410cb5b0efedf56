package mirror

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnlinkGone(t *testing.T) {
	gone := func(p string) (string, bool) {
		u, ok := map[string]string{
			"h/p/19.html":      "http://h/p/19",
			"h/img/x.png":      "http://h/img/x.png",
			"h/dir/index.html": "http://h/dir/",
			"h/q@a=1&b=2.html": "http://h/q?a=1&b=2",
			"h/live.html":      "http://h/live", // came back, or another page saved there
		}[p]
		return u, ok
	}
	tests := []struct {
		name, self, in, want string
		css                  bool
		n                    int
	}{
		{"link", "h/index.html",
			`<a href="p/19.html#top">x</a> <a href="p/1.html">y</a> <a href="http://h/p/19.html">z</a>`,
			`<a href="http://h/p/19#top">x</a> <a href="p/1.html">y</a> <a href="http://h/p/19.html">z</a>`, false, 1},
		{"up and index", "h/p/3.html",
			`<img src="../img/x.png"><a href='../dir/'>d</a><a href="#frag">f</a>`,
			`<img src="http://h/img/x.png"><a href="http://h/dir/">d</a><a href="#frag">f</a>`, false, 2},
		{"escaped", "h/index.html", `<a href="q@a=1&amp;b=2.html">q</a>`, `<a href="http://h/q?a=1&amp;b=2">q</a>`, false, 1},
		{"css", "h/s.css", `a{background:url("img/x.png")} b{background:url(img/y.png)}`,
			`a{background:url("http://h/img/x.png")} b{background:url(img/y.png)}`, true, 1},
		{"target exists", "h/index.html", `<a href="live.html">l</a> <a href="p/19.html">x</a>`,
			`<a href="live.html">l</a> <a href="http://h/p/19">x</a>`, false, 1},
		{"nothing gone", "h/index.html", `<a href="p/1.html">y</a>`, `<a href="p/1.html">y</a>`, false, 0},
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "h"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "h", "live.html"), []byte("live"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tt := range tests {
		got, n := UnlinkGone(root, []byte(tt.in), tt.self, tt.css, gone)
		if string(got) != tt.want || n != tt.n {
			t.Errorf("%s: got %q (%d changed), want %q (%d)", tt.name, got, n, tt.want, tt.n)
		}
	}
}
