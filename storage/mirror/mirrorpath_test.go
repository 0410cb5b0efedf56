package mirror

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestMirrorPath(t *testing.T) {
	const html = "text/html; charset=utf-8"
	tests := []struct {
		url, ct, want string
	}{
		// wget's layout.
		{"http://example.com/", html, "example.com/index.html"},
		{"http://example.com", html, "example.com/index.html"},
		{"http://Example.COM:80/a/b.html", html, "example.com/a/b.html"},
		{"https://example.com:443/x.png", "image/png", "example.com/x.png"},
		{"http://example.com:443/x.png", "image/png", "example.com:443/x.png"},
		{"http://127.0.0.1:8001/docs/", html, "127.0.0.1:8001/docs/index.html"},
		{"http://[::1]:8080/a", "", "[::1]:8080/a"},
		{"http://xn--bcher-kva.example/", html, "xn--bcher-kva.example/index.html"},
		// --adjust-extension.
		{"http://h/page", html, "h/page.html"},
		{"http://h/page", "application/xhtml+xml", "h/page.html"},
		{"http://h/page.htm", html, "h/page.htm"},
		{"http://h/PAGE.HTML", html, "h/PAGE.HTML"},
		{"http://h/page.php", html, "h/page.php.html"},
		{"http://h/style", "text/css", "h/style.css"},
		{"http://h/style.css", "text/css", "h/style.css"},
		{"http://h/data", "application/json", "h/data"},
		{"http://h/page", "TEXT/HTML;;bad", "h/page.html"},
		// Queries.
		{"http://h/page?q=1", html, "h/page@q=1.html"},
		{"http://h/?q=1&r=2", html, "h/index.html@q=1&r=2.html"},
		{"http://h/a.php?x=1/2", "", "h/a.php@x=1%2F2"},
		{"http://h/a?q=a%2Fb", "", "h/a@q=a%2Fb"},
		{"http://h/a?q=%41%7e", "", "h/a@q=A~"},
		{"http://h/a?", "", "h/a"},
		{"http://h/a?e=x@y", "", "h/a@e=x%40y"},
		// Decoding, and what stays escaped.
		{"http://h/caf%C3%A9", "", "h/café"},
		{"http://h/a%20b", "", "h/a b"},
		{"http://h/%41%62c", "", "h/Abc"},
		{"http://h/a%3bb", "", "h/a%3Bb"},
		{"http://h/a;b", "", "h/a;b"},
		{"http://h/a@b", "", "h/a%40b"},
		{"http://h/100%25", "", "h/100%25"},
		{"http://h/%E2%80%AE", "", "h/%E2%80%AE"}, // right-to-left override
		{"http://h/%FF%FE", "", "h/%FF%FE"},       // not UTF-8
		{"http://h/%C3", "", "h/%C3"},             // a cut sequence
		// Hostile paths.
		{"http://h/%2e%2e/%2e%2e/etc/passwd", "", "h/%2E%2E/%2E%2E/etc/passwd"},
		{"http://h/%2E/x", "", "h/%2E/x"},
		{"http://h/..%2f..%2fetc", "", "h/..%2F..%2Fetc"},
		{"http://h/a%5Cb", "", "h/a%5Cb"},
		{"http://h/a%00b%0d%0a", "", "h/a%00b%0D%0A"},
		{"http://h/a//b", "", "h/a/%_/b"},
		{"http://h//", "", "h/%_/index.html"},
		{"http://h/CON", "", "h/%43ON"},
		{"http://h/con.txt", "", "h/%63on.txt"},
		{"http://h/lpt1/x", "", "h/%6Cpt1/x"},
		{"http://h/aux", html, "h/%61ux.html"},
		{"http://h/com10", "", "h/com10"},
		{"http://h/@x", "", "h/%40x"},
		{"mailto:a@b", "", "%_/a%40b"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got := Path(mustParse(t, tt.url), tt.ct)
			if got != tt.want {
				t.Errorf("Path(%q, %q) = %q, want %q", tt.url, tt.ct, got, tt.want)
			}
			checkMirrorPath(t, got)
		})
	}
}

// TestMirrorPathHostile builds URLs that url.Parse would refuse.
func TestMirrorPathHostile(t *testing.T) {
	tests := []struct {
		name string
		u    url.URL
		want string
	}{
		{"dotdot host", url.URL{Scheme: "http", Host: "..", Path: "/x"}, "%2E%2E/x"},
		{"dot host", url.URL{Scheme: "http", Host: ".", Path: "/x"}, "%2E/x"},
		{"hidden host", url.URL{Scheme: "http", Host: ".tmp-1", Path: "/x"}, "%2Etmp-1/x"},
		{"empty host", url.URL{Scheme: "http", Path: "/x"}, "%_/x"},
		{"slash host", url.URL{Scheme: "http", Host: "a/../..", Path: "/x"}, "a%2F..%2F../x"},
		{"absolute path", url.URL{Scheme: "http", Host: "h", Path: "/etc/passwd"}, "h/etc/passwd"},
		{"relative path", url.URL{Scheme: "http", Host: "h", Path: "../../x"}, "h/%2E%2E/%2E%2E/x"},
		{"raw dots", url.URL{Scheme: "http", Host: "h", Path: "/a/../../b"}, "h/a/%2E%2E/%2E%2E/b"},
		{"backslashes", url.URL{Scheme: "http", Host: "h", Path: `/..\..\x`}, "h/..%5C..%5Cx"},
		{"nul", url.URL{Scheme: "http", Host: "h", Path: "/a\x00b"}, "h/a%00b"},
		{"newline query", url.URL{Scheme: "http", Host: "h", Path: "/a", RawQuery: "x=\n/../"}, "h/a@x=%0A%2F..%2F"},
		{"windows drive", url.URL{Scheme: "http", Host: "h", Path: "/C:/x"}, "h/C:/x"},
		{"long hidden host", url.URL{Scheme: "http", Host: "." + strings.Repeat("h", 199)}, "%2E" + strings.Repeat("h", 179) + "%~" + shortHash("%2E"+strings.Repeat("h", 199)) + "/index.html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Path(&tt.u, "")
			if got != tt.want {
				t.Errorf("Path(%#v) = %q, want %q", tt.u, got, tt.want)
			}
			checkMirrorPath(t, got)
		})
	}
}

func TestMirrorPathLong(t *testing.T) {
	long := strings.Repeat("a", 300)
	t.Run("name", func(t *testing.T) {
		got := Path(mustParse(t, "http://h/"+long), "text/html")
		checkMirrorPath(t, got)
		name := path.Base(got)
		if len(name) > maxNameLen || !strings.HasSuffix(name, ".html") || !strings.Contains(name, hashMarker) {
			t.Errorf("long name shortened to %q (%d bytes)", name, len(name))
		}
		other := Path(mustParse(t, "http://h/"+long+"b"), "text/html")
		if other == got {
			t.Errorf("two long names share %q", got)
		}
	})
	t.Run("escapes and runes are not split", func(t *testing.T) {
		for pad := range 4 {
			seg := strings.Repeat("x", pad) + strings.Repeat("é%3B", 100)
			got := Path(mustParse(t, "http://h/"+url.PathEscape(seg)), "")
			checkMirrorPath(t, got)
			stem, _, _ := strings.Cut(path.Base(got), hashMarker)
			if strings.HasSuffix(stem, "%") || strings.HasSuffix(stem[:len(stem)-1], "%") {
				t.Errorf("escape cut: %q", stem)
			}
		}
	})
	t.Run("path", func(t *testing.T) {
		deep := "http://h" + strings.Repeat("/"+strings.Repeat("d", 150), 20)
		a := Path(mustParse(t, deep+"/a.html"), "text/html")
		b := Path(mustParse(t, deep+"/b.html"), "text/html")
		c := Path(mustParse(t, deep+"x/a.html"), "text/html")
		for _, p := range []string{a, b, c} {
			checkMirrorPath(t, p)
		}
		if path.Dir(a) != path.Dir(b) {
			t.Errorf("siblings split: %q, %q", a, b)
		}
		if a == c || path.Base(a) != "a.html" {
			t.Errorf("deep paths: %q, %q", a, c)
		}
	})
}

// TestMirrorPathDistinct lists URLs that must not share a file.
func TestMirrorPathDistinct(t *testing.T) {
	urls := []string{
		"http://h/a", "http://h/a/", "http://h/a?b", "http://h/a@b",
		"http://h/a%3Fb", "http://h/a%2Fb", "http://h/a/b", "http://h/a%252Fb",
		"http://h/a;b", "http://h/a%3Bb", "http://h/a//b", "http://h/a/%5F/b",
		"http://h/CON", "http://h/%2543ON", "http://h/index.html", "http://h/?x",
		"http://h:81/a", "http://g/a", "http://h/a?x=1&y=2", "http://h/a?x=1%26y=2",
		"http://h/%2e", "http://h/%252E", "http://h/a%00", "http://h/a%2500",
	}
	seen := map[string]string{}
	for _, raw := range urls {
		p := Path(mustParse(t, raw), "")
		if prev, ok := seen[p]; ok {
			t.Errorf("%s and %s share %q", prev, raw, p)
		}
		seen[p] = raw
	}
}

func TestRelativeRef(t *testing.T) {
	tests := []struct{ from, to, want string }{
		{"h/index.html", "h/a.html", "a.html"},
		{"h/a/b/c.html", "h/a/x.css", "../x.css"},
		{"h/a/b.html", "h/a/b/index.html", "b/index.html"},
		{"h/a.html", "g:81/x.html", "../g:81/x.html"},
		{"h/a.html", "h/b@q=1&r=%2F.html", "b@q=1&r=%252F.html"},
		{"h/a.html", "h/c:d.html", "./c:d.html"},
		{"h/a.html", "h/a b#?.html", "a%20b%23%3F.html"},
		{"h/a.html", "h/café", "caf%C3%A9"},
		{"h/x/a.html", "h/%_/b", "../%25_/b"},
	}
	for _, tt := range tests {
		got := RelativeRef(tt.from, tt.to)
		if got != tt.want {
			t.Errorf("RelativeRef(%q, %q) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
		checkResolves(t, tt.from, tt.to, got)
	}
}

// checkResolves fails unless ref, resolved as a browser would against the
// file from in a mirror, names the file to.
func checkResolves(t testing.TB, from, to, ref string) {
	t.Helper()
	base := &url.URL{Scheme: "file", Path: "/mirror/" + from}
	r, err := url.Parse(ref)
	if err != nil {
		t.Fatalf("RelativeRef(%q, %q) = %q: %v", from, to, ref, err)
	}
	if r.Scheme != "" || r.Host != "" || r.RawQuery != "" || r.Fragment != "" {
		t.Fatalf("RelativeRef(%q, %q) = %q is not a plain relative path", from, to, ref)
	}
	if got := base.ResolveReference(r).Path; got != "/mirror/"+to {
		t.Errorf("RelativeRef(%q, %q) = %q resolves to %q", from, to, ref, got)
	}
}

// checkMirrorPath fails unless p is a safe relative path of the shape
// Path promises.
func checkMirrorPath(t testing.TB, p string) {
	t.Helper()
	if !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p || strings.HasPrefix(p, "/") {
		t.Fatalf("%q is not a clean local path", p)
	}
	if len(p) > maxPathLen {
		t.Fatalf("%q: %d bytes", p, len(p))
	}
	if !utf8.ValidString(p) {
		t.Fatalf("%q is not UTF-8", p)
	}
	names := strings.Split(p, "/")
	if len(names) < 2 || strings.HasPrefix(names[0], ".") {
		t.Fatalf("%q: no host directory", p)
	}
	for _, n := range names {
		if n == "" || n == "." || n == ".." || len(n) > maxNameLen {
			t.Fatalf("%q: bad name %q", p, n)
		}
		for _, c := range []byte(n) {
			if c < 0x20 || c == 0x7F || c == '\\' {
				t.Fatalf("%q: name %q has byte %#x", p, n, c)
			}
		}
		stem, _, _ := strings.Cut(n, ".")
		if isDeviceName(stem) {
			t.Fatalf("%q: device name %q", p, n)
		}
	}
}

func FuzzMirrorPath(f *testing.F) {
	for _, s := range []string{
		"http://example.com/a/b?c=d", "http://h/%2e%2e/%2E%2E/x", "http://h/a//b/",
		"http://h/CON.txt", "http://h/" + strings.Repeat("%C3%A9", 150), "\x00/..\\..",
		"http://h/a?" + strings.Repeat("q/", 600), "mailto:x", "//../..", "http://h/%E2%80",
	} {
		f.Add(s, "text/html")
	}
	f.Fuzz(func(t *testing.T, raw, ct string) {
		u, err := url.Parse(raw)
		if err != nil {
			u = &url.URL{Scheme: "http", Host: raw, Path: raw, RawQuery: raw}
		}
		p := Path(u, ct)
		checkMirrorPath(t, p)
		if again := Path(u, ct); again != p {
			t.Fatalf("not deterministic: %q then %q", p, again)
		}
		checkResolves(t, "h/x/y.html", p, RelativeRef("h/x/y.html", p))
		checkResolves(t, p, "h/x/y.html", RelativeRef(p, "h/x/y.html"))
	})
}
