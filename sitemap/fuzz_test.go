package sitemap

import (
	"bytes"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRead checks, for any input, that Read does not panic, that every
// entry it yields obeys the location rules (checked here independently of
// the code under test), that the caps hold, and that nothing it yields or
// a warning prints holds a C0 control character or DEL (testdata/fuzz has
// the inputs that once let an escape sequence through in a fragment).
func FuzzRead(f *testing.F) {
	inputs, err := filepath.Glob("testdata/golden/*.in")
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(gzipN(f, urlset("https://example.com/shop/a", "/shop/b", "../c"), 2))
	f.Add(gzipN(f, index("https://example.com/x.xml"), 1)[:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		const sitemapURL = "https://example.com/shop/sitemap.xml"
		lim := Limits{MaxURLs: 40, MaxBytes: 1 << 16, MaxChildren: 20}
		pages, children := 0, 0
		res, err := Read(bytes.NewReader(data), sitemapURL, lim, func(e Entry) error {
			if e.Child {
				children++
			} else {
				pages++
			}
			checkEntry(t, e)
			return nil
		}, func(w Warning) {
			if s := w.String(); hasControl(s) || w.Rule == "" || w.Sitemap != sitemapURL {
				t.Errorf("bad warning %#v", w)
			}
		})
		if err != nil {
			t.Fatalf("Read of an in-memory input failed: %v", err)
		}
		if res.Pages != pages || res.Children != children || pages > lim.MaxURLs || children > lim.MaxChildren || res.Bytes > lim.MaxBytes {
			t.Errorf("result %+v after %d pages and %d children", res, pages, children)
		}
		if (pages > 0 && children > 0) || (children > 0 && res.Kind != KindIndex) {
			t.Errorf("kind %v with %d pages and %d children", res.Kind, pages, children)
		}
	})
}

// checkEntry checks an entry of https://example.com/shop/sitemap.xml
// against the location rules.
func checkEntry(t *testing.T, e Entry) {
	t.Helper()
	if utf8.RuneCountInString(e.Loc) > MaxURLLength {
		t.Fatalf("loc %q: too long", e.Loc)
	}
	for _, s := range []string{e.Loc, e.LastmodRaw, e.ChangeFreq, e.Sitemap} {
		if hasControl(s) {
			t.Fatalf("entry of %q: control character in %q", e.Loc, s)
		}
	}
	u, err := url.Parse(e.Loc)
	if err != nil {
		t.Fatalf("loc %q does not parse: %v", e.Loc, err)
	}
	if !strings.EqualFold(u.Scheme, "https") || strings.ToLower(u.Hostname()) != "example.com" || (u.Port() != "" && u.Port() != "443") {
		t.Fatalf("loc %q is not on https://example.com/", e.Loc)
	}
	if e.Child {
		return
	}
	// %2F is not a slash (RFC 3986): keep it out of the unescaping.
	p := strings.NewReplacer("%2F", "%252F", "%2f", "%252f").Replace(u.EscapedPath())
	p, err = url.PathUnescape(p)
	if err != nil {
		t.Fatalf("loc %q: path does not unescape: %v", e.Loc, err)
	}
	if clean := path.Clean("/" + p); clean != "/shop" && !strings.HasPrefix(clean, "/shop/") {
		t.Fatalf("loc %q is outside /shop/ (path %q)", e.Loc, clean)
	}
	if e.Priority < 0 || e.Priority > 1 {
		t.Fatalf("loc %q: priority %v", e.Loc, e.Priority)
	}
}

// hasControl reports whether s holds a C0 control character or DEL.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
