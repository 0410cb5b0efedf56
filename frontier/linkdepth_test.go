package frontier

import (
	"fmt"
	"testing"
)

// A host's linked pages are handed out by link depth, shallowest first,
// whatever order a sitemap listed them in and whenever a link reached
// them; the pages only a sitemap lists come after them.
func TestLinkedPagesGoByLinkDepth(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	var listed []Item
	for i := range 20 {
		it := item(t, fmt.Sprintf("http://a.test/p%d", i))
		it.Priority, it.InSitemap, it.LinkDepth = 0.49, true, NoLinkDepth
		listed = append(listed, it)
	}
	if _, err := f.Add(listed); err != nil {
		t.Fatal(err)
	}
	seed := item(t, "http://a.test/")
	if _, err := f.Add([]Item{seed}); err != nil {
		t.Fatal(err)
	}
	linked := func(ld int, paths ...int) []Item {
		var out []Item
		for _, p := range paths {
			it := item(t, fmt.Sprintf("http://a.test/p%d", p))
			it.LinkDepth = ld
			out = append(out, it)
		}
		return out
	}
	want := map[string]int{"/": 0}
	done := func(l *Lease, links []Item) {
		t.Helper()
		for _, it := range links {
			if d, ok := want[it.Key[len(it.Origin):]]; !ok || it.LinkDepth < d {
				want[it.Key[len(it.Origin):]] = it.LinkDepth
			}
		}
		if _, err := f.Done(l, Outcome{}, links); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	take := func() *Lease {
		t.Helper()
		l := next(t, f, t0)
		p := l.Key[len(l.Origin):]
		if w, ok := want[p]; ok && l.LinkDepth != w || !ok && l.LinkDepth != NoLinkDepth {
			t.Errorf("%s handed out at link depth %d; want %d", p, l.LinkDepth, want[p])
		}
		got = append(got, fmt.Sprintf("%s:%d", p, l.LinkDepth))
		return l
	}
	done(take(), linked(1, 3, 9, 4))  // the seed
	done(take(), linked(2, 1, 2, 11)) // /p3
	done(take(), linked(3, 0, 5))     // /p4, with /p0 and /p5 listed first
	done(take(), linked(1, 2))        // /p9: a redirect to /p2 keeps its link depth
	for _, ld := range []int{1, 2, 2, 3, 3, NoLinkDepth} {
		l := take()
		if l.LinkDepth != ld {
			t.Fatalf("handed out %v; want link depth %d next", got, ld)
		}
		done(l, nil)
	}
	if want := "[/:0 /p3:1 /p4:1 /p9:1 /p2:1 /p1:2 /p11:2 /p0:3 /p5:3 /p6:-1]"; fmt.Sprint(got) != want {
		t.Errorf("handed out %v; want %s", got, want)
	}
}
