package links

import (
	"fmt"
	"strings"
	"testing"
)

// ReadHTMLLimit keeps the first limit references with their anchors,
// counts the rest, and still reads the page's facts past the cut.
func TestReadHTMLLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><head><link rel=canonical href=/c></head><body>")
	for i := range 10 {
		fmt.Fprintf(&b, "<a href=/%d>t%d</a>", i, i)
	}
	b.WriteString("<h1>late</h1><img src=/i.png alt=x></body></html>") // 12 references in all
	for _, tc := range []struct{ limit, refs, cut int }{
		{0, 12, 0}, {-1, 12, 0}, {3, 3, 9}, {12, 12, 0}, {11, 11, 1}, {20, 12, 0},
	} {
		p := ReadHTMLLimit([]byte(b.String()), "text/html", tc.limit)
		if len(p.Refs) != tc.refs || p.Cut != tc.cut {
			t.Errorf("limit %d: %d refs, %d cut; want %d, %d", tc.limit, len(p.Refs), p.Cut, tc.refs, tc.cut)
			continue
		}
		for i, r := range p.Refs[1:] { // the canonical first
			if i < 10 && (r.URL != fmt.Sprintf("/%d", i) || r.Anchor != fmt.Sprintf("t%d", i)) {
				t.Errorf("limit %d: ref %d = %q %q", tc.limit, i, r.URL, r.Anchor)
			}
		}
		if p.H1() != "late" || len(p.Canonicals()) != 1 {
			t.Errorf("limit %d: h1 %q, canonicals %v; want the facts past the cut read", tc.limit, p.H1(), p.Canonicals())
		}
	}
}

// A page that declares no charset is read as windows-1252: an ASCII one
// as it is, one with bytes past ASCII decoded.
func TestReadHTMLUndeclaredCharset(t *testing.T) {
	for _, tc := range []struct{ body, url, anchor string }{
		{"<a href=/a.html>ab</a>", "/a.html", "ab"},
		{"<a href=/caf\xe9.html>caf\xe9</a>", "/café.html", "café"},
	} {
		p := ReadHTML([]byte(tc.body), "text/html")
		if len(p.Refs) != 1 || p.Refs[0].URL != tc.url || p.Refs[0].Anchor != tc.anchor {
			t.Errorf("%q: refs %+v; want %q with anchor %q", tc.body, p.Refs, tc.url, tc.anchor)
		}
	}
}

// A page's references are kept in blocks while it is read: across their
// boundaries they come in order, each <a> with its own anchor, an image's
// alt the anchor of an <a> it is in, and an <a> the page never closes
// gets its anchor too.
func TestReadHTMLManyRefs(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 129, 383, 384, 385, 1000} {
		var b strings.Builder
		for i := range n {
			if i%7 == 3 {
				fmt.Fprintf(&b, "<a href=/%d><img src=/i%d alt=i%d></a>", i, i, i)
				continue
			}
			fmt.Fprintf(&b, "<a href=/%d>t%d</a> ", i, i)
		}
		b.WriteString("<a href=/open>open")
		p := ReadHTML([]byte(b.String()), "text/html")
		var want []string
		for i := range n {
			if i%7 == 3 {
				want = append(want, fmt.Sprintf("/%d i%d", i, i), fmt.Sprintf("/i%d i%d", i, i))
				continue
			}
			want = append(want, fmt.Sprintf("/%d t%d", i, i))
		}
		want = append(want, "/open open")
		var got []string
		for _, r := range p.Refs {
			got = append(got, r.URL+" "+r.Anchor)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%d links: got %.200q, want %.200q", n, got, want)
		}
	}
}

// The blocks a page's references are gathered in are reused by the next
// page read: a Page's Refs must not be one of them, nor share one, at
// any count of references about a block's size.
func TestReadHTMLRefsNotShared(t *testing.T) {
	page := func(n int, prefix string) []byte {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "<a href=/%s%d>%s%d</a>", prefix, i, prefix, i)
		}
		return []byte(b.String())
	}
	for _, n := range []int{1, refBlock - 1, refBlock, refBlock + 1, 2*refBlock + 1} {
		p := ReadHTML(page(n, "a"), "text/html")
		for range 3 { // others read after it, whatever the pool gives them
			ReadHTML(page(n+1, "b"), "text/html")
		}
		if len(p.Refs) != n {
			t.Fatalf("%d links: %d references", n, len(p.Refs))
		}
		for i, r := range p.Refs {
			if want := fmt.Sprintf("/a%d", i); r.URL != want || r.Anchor != want[1:] {
				t.Fatalf("%d links: reference %d is %q %q after other pages were read, want %q", n, i, r.URL, r.Anchor, want)
			}
		}
	}
}
