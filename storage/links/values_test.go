package links

import (
	"slices"
	"testing"
)

func TestRefreshURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"5; url=/next", "/next"},
		{"5;URL=/next", "/next"},
		{"0 ; Url = '/next' x", "/next"},
		{`0; url="/next`, "/next"},
		{"5, /next", "/next"},
		{"5 /next", "/next"},
		{"5; '/next'", "/next"},
		{".5; url=/next", "/next"},
		{"5;urlx", "urlx"},
		{"5; url /next", "url /next"},
		{"5", ""},
		{"5;", ""},
		{"x; url=/next", ""},
		{"5x; url=/next", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got := ""
		if start, end, _, ok := refreshSpan(tt.in); ok {
			got = tt.in[start:end]
		}
		if got != tt.want {
			t.Errorf("refreshURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSrcsetURLs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a.png", []string{"a.png"}},
		{"a.png 1x, b.png 2x", []string{"a.png", "b.png"}},
		{"a.png,b.png", []string{"a.png,b.png"}},
		{"a.png 1x,b.png", []string{"a.png", "b.png"}},
		{" ,, a.png 100w ,b.png", []string{"a.png", "b.png"}},
		{"a,b.png 1x", []string{"a,b.png"}},
		{"a.png 1x (x, y), b.png", []string{"a.png", "b.png"}},
		{"a.png,, 1x", []string{"a.png", "1x"}},
		{"", nil},
		{" , ", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, sp := range srcsetURLs(tt.in) {
			got = append(got, tt.in[sp[0]:sp[1]])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("srcsetURLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRewriteSeparators checks that a new URL cannot end the srcset
// candidate or the quoted refresh URL it replaces.
func TestRewriteSeparators(t *testing.T) {
	to := func(v string) func(string) (string, bool) {
		return func(string) (string, bool) { return v, true }
	}
	// Commas are kept where the URL's meaning allows (issue 23.8: aa, became
	// aa%2C, another URL).
	for _, tc := range []struct{ url, want string }{
		{",x y,", "./,x%20y,# 1x, ./,x%20y,# 2x"},
		{"aa,", "aa,# 1x, aa,# 2x"},
		{"a#b,,", "a#b%2C%2C 1x, a#b%2C%2C 2x"},
	} {
		if got, _ := rewriteSrcset("a 1x, b 2x", to(tc.url)); got != tc.want {
			t.Errorf("srcset of %q: %q, want %q", tc.url, got, tc.want)
		}
	}
	if got, _ := rewriteRefresh("0; url='a'", to("it's")); got != "0; url='it%27s'" {
		t.Errorf("refresh: %q", got)
	}
	if got, _ := rewriteRefresh(`0; url="a"`, to(`x"y`)); got != `0; url="x%22y"` {
		t.Errorf("refresh: %q", got)
	}
}

func TestCSSUnescape(t *testing.T) {
	tests := []struct{ in, want string }{
		{`plain`, "plain"},
		{`a\"b`, `a"b`},
		{`\41 B`, "AB"},
		{`\41  B`, "A B"},
		{`\000041B`, "AB"},
		{`\0041B`, "\u041B"},
		{"\\41\r\nB", "AB"},
		{`\e9`, "é"},
		{`\0`, "\uFFFD"},
		{"a\x00b", "a\uFFFDb"}, // CSS Syntax §3.3 (issue 23.8: FuzzRewrite)
		{"\\\x00", "\uFFFD"},
		{`\D800`, "\uFFFD"},
		{`\110000`, "\uFFFD"},
		{"a\\\nb", "ab"},
		{`a\`, "a"},
	}
	for _, tt := range tests {
		if got := cssUnescape([]byte(tt.in)); got != tt.want {
			t.Errorf("cssUnescape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
