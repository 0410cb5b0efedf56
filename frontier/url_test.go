package frontier

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonicalize(t *testing.T) {
	tests := []struct {
		raw, request, key, origin string
	}{
		// RFC 3986 §6.2.2: case, percent-encoding and dot-segment normalisation.
		{"HTTP://www.EXAMPLE.com/", "http://www.example.com/", "http://www.example.com/", "http://www.example.com"},
		{"http://a/b/c/%7Bfoo%7D", "http://a/b/c/%7Bfoo%7D", "http://a/b/c/%7Bfoo%7D", "http://a"},
		{"hTTp://a/./b/../b/%63/%7bfoo%7d", "http://a/b/%63/%7bfoo%7d", "http://a/b/c/%7Bfoo%7D", "http://a"},
		{"http://example.com/%7Euser", "http://example.com/%7Euser", "http://example.com/~user", "http://example.com"},
		{"http://example.com/%2e%2E/a/%2E/b", "http://example.com/%2e%2E/a/%2E/b", "http://example.com/a/b", "http://example.com"},
		// RFC 3986 §6.2.3: scheme-based normalisation.
		{"http://example.com", "http://example.com/", "http://example.com/", "http://example.com"},
		{"http://example.com:/", "http://example.com/", "http://example.com/", "http://example.com"},
		{"http://example.com:80/", "http://example.com:80/", "http://example.com/", "http://example.com"},
		{"https://example.com:443/x", "https://example.com:443/x", "https://example.com/x", "https://example.com"},
		{"https://example.com:80/x", "https://example.com:80/x", "https://example.com:80/x", "https://example.com:80"},
		{"http://127.0.0.2:8001", "http://127.0.0.2:8001/", "http://127.0.0.2:8001/", "http://127.0.0.2:8001"},
		{"http://h:08001/", "http://h:8001/", "http://h:8001/", "http://h:8001"},
		{"http://127.0.0.1:018001/", "http://127.0.0.1:18001/", "http://127.0.0.1:18001/", "http://127.0.0.1:18001"},
		{"http://h:0080/", "http://h:80/", "http://h/", "http://h"},
		// IDN: a host and its punycode are one host.
		{"http://müller.eu/", "http://xn--mller-kva.eu/", "http://xn--mller-kva.eu/", "http://xn--mller-kva.eu"},
		{"http://MÜLLER.eu/", "http://xn--mller-kva.eu/", "http://xn--mller-kva.eu/", "http://xn--mller-kva.eu"},
		{"http://xn--mller-kva.EU/", "http://xn--mller-kva.eu/", "http://xn--mller-kva.eu/", "http://xn--mller-kva.eu"},
		{"http://m%C3%BCller.eu/", "http://xn--mller-kva.eu/", "http://xn--mller-kva.eu/", "http://xn--mller-kva.eu"},
		{"http://例え.テスト/パス", "http://xn--r8jz45g.xn--zckzah/%E3%83%91%E3%82%B9", "http://xn--r8jz45g.xn--zckzah/%E3%83%91%E3%82%B9", "http://xn--r8jz45g.xn--zckzah"},
		// IPv6 literals in RFC 5952 form.
		{"http://[2001:DB8:0:0::1]:8080/", "http://[2001:db8::1]:8080/", "http://[2001:db8::1]:8080/", "http://[2001:db8::1]:8080"},
		{"http://[::1]/", "http://[::1]/", "http://[::1]/", "http://[::1]"},
		// Dot segments (RFC 3986 §5.2.4).
		{"http://h/a/b/c/./../../g", "http://h/a/g", "http://h/a/g", "http://h"},
		{"http://h/mid/content=5/../6", "http://h/mid/6", "http://h/mid/6", "http://h"},
		{"http://h/a/..", "http://h/", "http://h/", "http://h"},
		{"http://h/a/.", "http://h/a/", "http://h/a/", "http://h"},
		{"http://h/../../x", "http://h/x", "http://h/x", "http://h"},
		{"http://h/a/.b/..c/d.", "http://h/a/.b/..c/d.", "http://h/a/.b/..c/d.", "http://h"},
		{"http://h//x/", "http://h//x/", "http://h//x/", "http://h"},
		// Made valid: spaces, non-ASCII, lone %, brackets; escapes kept as written.
		{"http://h/a b", "http://h/a%20b", "http://h/a%20b", "http://h"},
		{"http://h/ü?q=ü", "http://h/%C3%BC?q=%C3%BC", "http://h/%C3%BC?q=%C3%BC", "http://h"},
		{"http://h/100%", "http://h/100%25", "http://h/100%25", "http://h"},
		{"http://h/%zz%4", "http://h/%25zz%254", "http://h/%25zz%254", "http://h"},
		{"http://h/a|b{c}", "http://h/a%7Cb%7Bc%7D", "http://h/a%7Cb%7Bc%7D", "http://h"},
		{"http://h/a%2fb", "http://h/a%2fb", "http://h/a%2Fb", "http://h"},
		{"http://h/a\\b", "http://h/a%5Cb", "http://h/a%5Cb", "http://h"},
		// The query: kept as written and in its order, escapes normalised.
		{"http://h/p?b=2&a=1", "http://h/p?b=2&a=1", "http://h/p?b=2&a=1", "http://h"},
		{"http://h/p?a=%7e&b=%2f&c=/./", "http://h/p?a=%7e&b=%2f&c=/./", "http://h/p?a=~&b=%2F&c=/./", "http://h"},
		{"http://h/p?", "http://h/p?", "http://h/p?", "http://h"},
		{"http://h?x=1", "http://h/?x=1", "http://h/?x=1", "http://h"},
		{"http://h/p?a b", "http://h/p?a%20b", "http://h/p?a%20b", "http://h"},
		{"http://h/p?q?r", "http://h/p?q?r", "http://h/p?q?r", "http://h"},
		// Fragments dropped; surrounding space and inner newlines removed.
		{"http://h/p#frag", "http://h/p", "http://h/p", "http://h"},
		{"http://h/p?q#f?g", "http://h/p?q", "http://h/p?q", "http://h"},
		{"  http://h/p\n/q\t\r ", "http://h/p/q", "http://h/p/q", "http://h"},
		// Host names: trailing dot kept, underscore allowed.
		{"http://a_b.example.com./", "http://a_b.example.com./", "http://a_b.example.com./", "http://a_b.example.com."},
	}
	for _, tt := range tests {
		u, err := Canonicalize(tt.raw, 0)
		if err != nil {
			t.Errorf("Canonicalize(%q): %v", tt.raw, err)
			continue
		}
		want := URL{Request: tt.request, Key: tt.key, Origin: tt.origin}
		if u != want {
			t.Errorf("Canonicalize(%q)\n got %+v\nwant %+v", tt.raw, u, want)
		}
		// The key and the request are fixed points.
		for _, s := range []string{u.Key, u.Request} {
			v, err := Canonicalize(s, 0)
			if err != nil || v.Key != u.Key || v.Origin != u.Origin {
				t.Errorf("Canonicalize(%q) = %+v, %v; want key %q", s, v, err, u.Key)
			}
		}
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	long := "http://h/" + strings.Repeat("a", DefaultMaxURLLength)
	tests := []struct {
		raw    string
		maxLen int
		reason Reason
	}{
		{"ftp://h/", 0, ReasonScheme},
		{"mailto:a@b.c", 0, ReasonScheme},
		{"javascript:void(0)", 0, ReasonScheme},
		{"/relative/path", 0, ReasonScheme},
		{"", 0, ReasonScheme},
		{"1http://h/", 0, ReasonScheme},
		{"http:h/p", 0, ReasonParse},
		{"http:/h/p", 0, ReasonParse},
		{"http://user:pw@h/", 0, ReasonUserinfo},
		{"http://@h/", 0, ReasonUserinfo},
		{"http:///p", 0, ReasonHost},
		{"http://:80/", 0, ReasonHost},
		{"http://h:99999/", 0, ReasonHost},
		{"http://h:0/", 0, ReasonHost},
		{"http://h:8a/", 0, ReasonHost},
		{"http://a..b/", 0, ReasonHost},
		{"http://.a/", 0, ReasonHost},
		{"http://a b/", 0, ReasonHost},
		{"http://a*b/", 0, ReasonHost},
		{"http://a%/", 0, ReasonHost},
		{"http://a%25b/", 0, ReasonHost},
		{"http://[::1/", 0, ReasonHost},
		{"http://[1.2.3.4]/", 0, ReasonHost},
		{"http://[fe80::1%25eth0]/", 0, ReasonHost},
		{"http://[::1]x/", 0, ReasonHost},
		{"http://" + strings.Repeat("a", 64) + ".com/", 0, ReasonHost},
		{"http://" + strings.Repeat("abcdefghi.", 26) + "com/", 0, ReasonHost},
		{"http://xn--a.com\u00e9/", 0, ReasonHost},
		{long, 0, ReasonTooLong},
		{"http://h/abc", 10, ReasonTooLong},
		{"http://h/ü", 11, ReasonTooLong}, // 10 bytes as found, 15 made valid
		{"http://h/#\x1b[2J", 0, ReasonControl},
		{"http://h/#\x1b]0;title\x07", 0, ReasonControl},
		{"http://h/a\x00b", 0, ReasonControl},
		{"http://h/a?b=\x1fc", 0, ReasonControl},
		{"http://h/a#\x1b[2Jb", 0, ReasonControl},
		{"http://h/a\x7fb", 0, ReasonControl},
		{"http://h\x08/", 0, ReasonControl},
	}
	for _, tt := range tests {
		u, err := Canonicalize(tt.raw, tt.maxLen)
		var ue *URLError
		if !errors.As(err, &ue) {
			t.Errorf("Canonicalize(%q) = %+v, %v; want a *URLError", tt.raw, u, err)
			continue
		}
		if ue.Reason != tt.reason {
			t.Errorf("Canonicalize(%q): reason %q, want %q (%v)", tt.raw, ue.Reason, tt.reason, err)
		}
		if len(ue.URL) > 200 {
			t.Errorf("Canonicalize(%q): error keeps %d bytes of the URL", tt.raw, len(ue.URL))
		}
	}
	if _, err := Canonicalize(long[:DefaultMaxURLLength], 0); err != nil {
		t.Errorf("a URL of exactly the limit: %v", err)
	}
}

// TestResolve runs the examples of RFC 3986 §5.4 (normal and abnormal).
func TestResolve(t *testing.T) {
	base, err := Canonicalize("http://a/b/c/d;p?q", 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ ref, want string }{
		{"g", "http://a/b/c/g"},
		{"./g", "http://a/b/c/g"},
		{"g/", "http://a/b/c/g/"},
		{"/g", "http://a/g"},
		{"//g", "http://g/"},
		{"?y", "http://a/b/c/d;p?y"},
		{"g?y", "http://a/b/c/g?y"},
		{"#s", "http://a/b/c/d;p?q"},
		{"g#s", "http://a/b/c/g"},
		{"g?y#s", "http://a/b/c/g?y"},
		{";x", "http://a/b/c/;x"},
		{"g;x", "http://a/b/c/g;x"},
		{"g;x?y#s", "http://a/b/c/g;x?y"},
		{"", "http://a/b/c/d;p?q"},
		{".", "http://a/b/c/"},
		{"./", "http://a/b/c/"},
		{"..", "http://a/b/"},
		{"../", "http://a/b/"},
		{"../g", "http://a/b/g"},
		{"../..", "http://a/"},
		{"../../", "http://a/"},
		{"../../g", "http://a/g"},
		{"../../../g", "http://a/g"},
		{"../../../../g", "http://a/g"},
		{"/./g", "http://a/g"},
		{"/../g", "http://a/g"},
		{"g.", "http://a/b/c/g."},
		{".g", "http://a/b/c/.g"},
		{"g..", "http://a/b/c/g.."},
		{"..g", "http://a/b/c/..g"},
		{"./../g", "http://a/b/g"},
		{"./g/.", "http://a/b/c/g/"},
		{"g/./h", "http://a/b/c/g/h"},
		{"g/../h", "http://a/b/c/h"},
		{"g;x=1/./y", "http://a/b/c/g;x=1/y"},
		{"g;x=1/../y", "http://a/b/c/y"},
		{"g?y/./x", "http://a/b/c/g?y/./x"},
		{"g?y/../x", "http://a/b/c/g?y/../x"},
		{"g#s/./x", "http://a/b/c/g"},
		{"http:g", "http://a/b/c/g"}, // non-strict
		{"HTTPS://Other/x", "https://other/x"},
		{" g h ", "http://a/b/c/g%20h"},
	}
	for _, tt := range tests {
		u, err := Resolve(base, tt.ref, 0)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.ref, err)
			continue
		}
		if u.Request != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.ref, u.Request, tt.want)
		}
	}
	for _, ref := range []string{"g:h", "mailto:x@y", "javascript:alert(1)", "//user@h/"} {
		if u, err := Resolve(base, ref, 0); err == nil {
			t.Errorf("Resolve(%q) = %+v, want an error", ref, u)
		}
	}
	for _, ref := range []string{"#\x1b[2J", "g#\x1b]0;t\x07", "g\x00h", "/g?\x7f=1"} {
		var ue *URLError
		if u, err := Resolve(base, ref, 0); !errors.As(err, &ue) || ue.Reason != ReasonControl {
			t.Errorf("Resolve(%q) = %+v, %v; want a %s error", ref, u, err, ReasonControl)
		}
	}
	// A base without a path or with a query only.
	host, _ := Canonicalize("http://h?q", 0)
	if u, err := Resolve(host, "x", 0); err != nil || u.Key != "http://h/x" {
		t.Errorf("Resolve(http://h/?q, x) = %+v, %v", u, err)
	}
}

func TestCanonicalizeAllocs(t *testing.T) {
	for _, raw := range []string{"http://example.com/a/b?c=d", "https://h:8443/x/y.html"} {
		if n := testing.AllocsPerRun(100, func() { _, _ = Canonicalize(raw, 0) }); n != 0 {
			t.Errorf("Canonicalize(%q) allocates %v times, want 0", raw, n)
		}
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		"http://a/b/c/%7Bfoo%7D", "hTTp://a/./b/../b/%63/%7bfoo%7d", "http://müller.eu/",
		"http://[2001:DB8::1]:8080/", "http://h/a b?c d#e", "http://h:80", "https://h/%2e%2E/x",
		"http://h/p?a=%7e", "http://m%C3%BCller.eu/", "http://h//x/..", "http://a_b.c./",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Canonicalize(raw, 0)
		if err != nil {
			var ue *URLError
			if !errors.As(err, &ue) || ue.Reason == "" {
				t.Fatalf("Canonicalize(%q): error %v without a reason", raw, err)
			}
			return
		}
		if !strings.HasPrefix(u.Key, u.Origin) || len(u.Key) <= len(u.Origin) {
			t.Fatalf("Canonicalize(%q) = %+v: key does not extend origin", raw, u)
		}
		if c := u.Key[len(u.Origin)]; c != '/' && c != '?' {
			t.Fatalf("Canonicalize(%q) = %+v: no path after origin", raw, u)
		}
		for _, s := range []string{u.Request, u.Key} {
			for i := 0; i < len(s); i++ {
				if s[i] <= ' ' || s[i] >= 0x7f || s[i] == '#' {
					t.Fatalf("Canonicalize(%q) = %+v: byte %q in %q", raw, u, s[i], s)
				}
			}
			if len(s) > DefaultMaxURLLength {
				t.Fatalf("Canonicalize(%q): %q is over the limit", raw, s)
			}
		}
		k, err := Canonicalize(u.Key, 0)
		if err != nil || k != (URL{Request: u.Key, Key: u.Key, Origin: u.Origin}) {
			t.Fatalf("Canonicalize(%q) = %+v; its key gives %+v, %v", raw, u, k, err)
		}
		r, err := Canonicalize(u.Request, 0)
		if err != nil || r != u {
			t.Fatalf("Canonicalize(%q) = %+v; its request gives %+v, %v", raw, u, r, err)
		}
	})
}

func FuzzResolve(f *testing.F) {
	f.Add("http://a/b/c/d;p?q", "../g?x#y")
	f.Add("https://h/", "//other/x")
	f.Add("http://h/a/", "http:g")
	f.Fuzz(func(t *testing.T, b, ref string) {
		base, err := Canonicalize(b, 0)
		if err != nil {
			return
		}
		u, err := Resolve(base, ref, 0)
		if err != nil {
			return
		}
		if k, err := Canonicalize(u.Key, 0); err != nil || k.Key != u.Key {
			t.Fatalf("Resolve(%q, %q) = %+v; its key gives %+v, %v", b, ref, u, k, err)
		}
	})
}

func BenchmarkCanonicalize(b *testing.B) {
	for _, raw := range []string{
		"https://www.example.com/products/shoes/running?color=red&size=42",
		"HTTP://WWW.Example.COM:80/a/./b/../c/%7euser/x y?q=%7e",
	} {
		b.Run(raw[:8], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Canonicalize(raw, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
