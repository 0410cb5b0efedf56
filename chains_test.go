package crawler

import (
	"net/http"
	"slices"
	"testing"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
)

// A redirect's record names the end of its whole chain, whatever order the
// hops were fetched in: a chain to a page, a loop, a chain into a URL
// robots.txt refuses, one to a page fetched before, one cut at
// max_redirects, and one to another host.
func TestRedirectRecordsNameTheEndOfTheirChain(t *testing.T) {
	s := newSite(t)
	other := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow: /private\n"})
	s.html("/", "/a", "/x", "/to-private", "/to-home", "/m/0", "/out", "/late")
	redirect := func(from, to string) {
		s.set(from, page{status: 301, headers: map[string]string{"Location": to}})
	}
	redirect("/a", "/b")
	redirect("/b", "/c")
	s.html("/c")
	redirect("/x", "/y")
	redirect("/y", "/x")
	redirect("/to-private", "/private/p")
	redirect("/to-home", "/")
	for i := range 4 {
		redirect("/m/"+string(rune('0'+i)), "/m/"+string(rune('1'+i)))
	}
	redirect("/out", other.URL+"/elsewhere")
	// /late is linked from / and is the end of a chain found later.
	s.html("/late")
	s.html("/c", "/to-late")
	redirect("/to-late", "/late")

	cfg := testConfig(t, s.URL+"/")
	cfg.Fetch.MaxRedirects = 2
	runCrawl(t, cfg)
	inv := inventory(t, cfg.Output.URLs)
	u := func(p string) string { return s.URL + p }
	cases := []struct {
		url, final string
		chain      []string
		err        string
	}{
		{"/a", "/c", []string{"/b", "/c"}, ""},
		{"/b", "/c", []string{"/c"}, ""},
		{"/x", "/x", []string{"/y", "/x"}, "redirect loop"},
		{"/y", "/y", []string{"/x", "/y"}, "redirect loop"},
		{"/to-private", "/private/p", []string{"/private/p"}, ""},
		{"/to-home", "/", []string{"/"}, ""},
		{"/m/0", "/m/3", []string{"/m/1", "/m/2", "/m/3"}, ""},
		{"/m/2", "/m/3", []string{"/m/3"}, "too many redirects"},
		{"/to-late", "/late", []string{"/late"}, ""},
	}
	for _, c := range cases {
		r, ok := inv[u(c.url)]
		if !ok {
			t.Errorf("%s: no record", c.url)
			continue
		}
		var want []string
		for _, h := range c.chain {
			want = append(want, u(h))
		}
		if r.FinalURL != u(c.final) || !slices.Equal(r.RedirectChain, want) || r.Error != c.err {
			t.Errorf("%s: final_url %s, redirect_chain %v, error %q; want %s, %v, %q",
				c.url, r.FinalURL, r.RedirectChain, r.Error, u(c.final), want, c.err)
		}
	}
	if r := inv[u("/out")]; r.FinalURL != other.URL+"/elsewhere" || !slices.Equal(r.RedirectChain, []string{other.URL + "/elsewhere"}) {
		t.Errorf("/out: final_url %s, redirect_chain %v; want the other host's URL", r.FinalURL, r.RedirectChain)
	}
	if r := inv[u("/c")]; r.FinalURL != u("/c") || r.RedirectChain != nil {
		t.Errorf("/c: final_url %s, redirect_chain %v; want itself and none", r.FinalURL, r.RedirectChain)
	}
}

// A redirect's record waits in the state for its chain's end: a crawl
// stopped while the chain's next hop is in flight writes it as far as it
// is known, and the next run writes it again whole.
func TestRedirectRecordWaitsAcrossARestart(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.html("/", "/a")
	s.set("/a", page{status: 301, headers: map[string]string{"Location": "/b"}})
	s.set("/b", page{status: 302, headers: map[string]string{"Location": "/c"}})
	s.html("/c")
	s.hold = 0
	cfg := testConfig(t, s.URL+"/")
	cfg.Fetch.Workers = 1

	// The first run stops once /b is asked for, before its answer.
	release := make(chan struct{})
	asked := make(chan struct{}, 1)
	blocking := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/b" {
			select {
			case asked <- struct{}{}:
			default:
			}
			<-release
		}
		s.serve(w, r)
	})
	s.Config.Handler = blocking
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(c)
	<-asked
	err = stop() // the request in flight is cancelled, /b not answered
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	u := func(p string) string { return s.URL + p }
	if r := inventory(t, cfg.Output.URLs)[u("/a")]; r.FinalURL != u("/b") || r.Status != 301 {
		t.Fatalf("after the first run, /a: status %d, final_url %s; want 301 and /b, as far as known", r.Status, r.FinalURL)
	}

	s.Config.Handler = http.HandlerFunc(s.serve)
	runCrawl(t, cfg)
	r := inventory(t, cfg.Output.URLs)[u("/a")]
	if r.FinalURL != u("/c") || !slices.Equal(r.RedirectChain, []string{u("/b"), u("/c")}) {
		t.Errorf("after the second run, /a: final_url %s, redirect_chain %v; want /c by /b", r.FinalURL, r.RedirectChain)
	}
}

func testChains(t *testing.T) (*chains, *storage.State) {
	t.Helper()
	st, err := storage.Open(t.TempDir(), storage.StateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ch, err := newChains(st, func() int { return 5 })
	if err != nil {
		t.Fatal(err)
	}
	return ch, st
}

func chainLease(raw string) *frontier.Lease {
	u, _ := frontier.Canonicalize(raw, 0)
	return &frontier.Lease{Item: frontier.Item{URL: u}}
}

func chainHop(raw string) *frontier.Item {
	u, _ := frontier.Canonicalize(raw, 0)
	return &frontier.Item{URL: u, Via: frontier.ViaRedirect}
}

// A redirect to a URL whose visit ended already ends its chain there, be
// the target's page record not yet committed or not kept at all (a URL
// refused); a loop found in flight is not extended past its repeat.
func TestRedirectChainsMeetVisitsThatEnded(t *testing.T) {
	a, b, c := "http://h.test/a", "http://h.test/b", "http://h.test/c"

	ch, _ := testChains(t)
	ch.settle(chainLease(b), storage.Record{URL: b, Status: 200, FinalURL: b}, nil) // not yet committed
	recs, _ := ch.settle(chainLease(a), storage.Record{URL: a, Status: 301, FinalURL: b}, chainHop(b))
	if len(recs) != 1 || recs[0].FinalURL != b || !slices.Equal(recs[0].RedirectChain, []string{b}) {
		t.Errorf("redirect to a URL settled, not committed: %+v; want written, ending at it", recs)
	}

	ch, _ = testChains(t)
	ch.settle(chainLease(c), storage.Record{URL: c, Error: "disallowed by robots.txt"}, nil)
	ch.committed(chainLease(c).Key, false)
	ch.settle(chainLease(b), storage.Record{URL: b, Status: 302, FinalURL: c}, chainHop(c))
	recs, _ = ch.settle(chainLease(a), storage.Record{URL: a, Status: 301, FinalURL: b}, chainHop(b))
	if len(recs) != 1 || recs[0].FinalURL != c || !slices.Equal(recs[0].RedirectChain, []string{b, c}) {
		t.Errorf("redirect through a redirect to a refused URL: %+v; want written, ending at it", recs)
	}

	ch, _ = testChains(t)
	ch.settle(chainLease(a), storage.Record{URL: a, Status: 301, FinalURL: b}, chainHop(b))
	recs, _ = ch.settle(chainLease(b), storage.Record{URL: b, Status: 301, FinalURL: a}, chainHop(a))
	got := map[string]storage.Record{}
	for _, r := range recs {
		got[r.URL] = r
	}
	if err := ch.flush(true, func(r storage.Record) error { got[r.URL+" again"] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("a loop in flight: records %v; want /a and /b, each once", got)
	}
	for url, want := range map[string][]string{a: {b, a}, b: {a, b}} {
		if r := got[url]; !slices.Equal(r.RedirectChain, want) || r.Error != "redirect loop" {
			t.Errorf("%s: chain %v, error %q; want %v, a loop", url, r.RedirectChain, r.Error, want)
		}
	}
}
