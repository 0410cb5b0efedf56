package report

import (
	"slices"
	"strings"
	"testing"
)

// A page's link to itself does not save it from being an orphan, in
// whatever form of its URL the link is written, and neither does a
// redirect to itself; a redirect from another URL, a nofollow link and a
// link in another form from another page do.
func TestOrphansSelfLinks(t *testing.T) {
	inv := strings.Join([]string{
		`{"url":"https://ex.test/","status":200,"content_type":"text/html","found_via":"seed","link_depth":0}`,
		`{"url":"https://ex.test/self","status":200,"content_type":"text/html","found_via":"sitemap","in_sitemap":true}`,
		`{"url":"https://ex.test/loop","status":301,"final_url":"https://ex.test/loop","redirect_chain":["https://ex.test/loop"],"error":"redirect loop","in_sitemap":true}`,
		`{"url":"https://ex.test/a","status":301,"final_url":"https://ex.test/b","redirect_chain":["https://ex.test/b"],"in_sitemap":true}`,
		`{"url":"https://ex.test/b","status":200,"content_type":"text/html","found_via":"redirect","in_sitemap":true}`,
		`{"url":"https://ex.test/%64eep","status":200,"content_type":"text/html","found_via":"sitemap","in_sitemap":true}`,
		`{"url":"https://ex.test/nf","status":200,"content_type":"text/html","found_via":"sitemap","in_sitemap":true}`,
	}, "\n")
	links := strings.Join([]string{
		`{"from":"https://ex.test/self","to":"https://ex.test/self#top","kind":"a"}`,
		`{"from":"https://ex.test/self","to":"https://ex.test/%73elf","kind":"a"}`,
		`{"from":"https://ex.test/self","to":"HTTPS://EX.TEST:443/self","kind":"canonical"}`,
		`{"from":"https://ex.test/loop","to":"https://ex.test/loop","kind":"redirect"}`,
		`{"from":"https://ex.test/a","to":"https://ex.test/b","kind":"redirect"}`,
		`{"from":"https://ex.test/","to":"https://ex.test/deep","kind":"a"}`,
		`{"from":"https://ex.test/","to":"https://ex.test/nf","kind":"a","rel":"nofollow","nofollow":true}`,
	}, "\n")
	r, err := Build(Inputs{Inventory: strings.NewReader(inv), Links: strings.NewReader(links)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://ex.test/a", "https://ex.test/loop", "https://ex.test/self"}; !slices.Equal(r.Orphans, want) {
		t.Errorf("orphans %q, want %q", r.Orphans, want)
	}
}
