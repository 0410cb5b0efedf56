package report

import (
	"slices"
	"strings"
	"testing"
)

// compare counts neither records of URLs refused by scope nor those
// asked by check_external as new or gone, and matches a URL by its
// canonical key (http://h is http://h/); the overview's fetched counts
// only URLs that were asked, not those of a host given up on for want
// of an answer from its robots.txt.
func TestCompareAndFetchedLeaveOutWhatWasNotCrawled(t *testing.T) {
	prev := strings.Join([]string{
		`{"url":"https://ex.test/","status":200,"content_type":"text/html"}`,
		`{"url":"https://ex.test/gone","status":200}`,
		`{"url":"http://xmlsoft.org","status":0,"error":"out of scope: host"}`,
		`{"url":"https://ex.test/here","status":200}`,
	}, "\n") + "\n"
	now := strings.Join([]string{
		`{"url":"https://ex.test/","status":200,"content_type":"text/html"}`,
		`{"url":"http://xmlsoft.org/","status":200,"external":true}`,
		`{"url":"http://other.test/","status":0,"error":"out of scope: host"}`,
		`{"url":"https://ex.test/new","status":200}`,
		`{"url":"HTTPS://ex.test:443/here","status":200}`,
		`{"url":"http://dead.test/a","status":0,"external":true,"error":"robots.txt unavailable: dial tcp: lookup dead.test: no such host"}`,
		`{"url":"http://dead.test/b","status":0,"external":true,"error":"robots.txt unavailable: dial tcp: lookup dead.test: no such host"}`,
		`{"url":"http://refused.test/","status":0,"external":true,"error":"dial tcp: connection refused"}`,
	}, "\n") + "\n"
	r, err := Build(Inputs{Inventory: strings.NewReader(now), Previous: strings.NewReader(prev)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Compare.New, []string{"https://ex.test/new"}; !slices.Equal(got, want) {
		t.Errorf("new = %q; want %q", got, want)
	}
	if got, want := r.Compare.Gone, []string{"https://ex.test/gone"}; !slices.Equal(got, want) {
		t.Errorf("gone = %q; want %q", got, want)
	}
	// /, xmlsoft (external), /new, /here and refused.test (a network
	// error of its own request) were asked; dead.test's two never were.
	if r.Overview.Fetched != 5 || r.Overview.ByStatus.Error != 1 {
		t.Errorf("fetched %d, by_status.error %d; want 5 and 1", r.Overview.Fetched, r.Overview.ByStatus.Error)
	}
	if len(r.Broken) != 3 {
		t.Errorf("broken %v; want dead.test's two and refused.test", r.Broken)
	}
}
