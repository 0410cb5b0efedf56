package crawler

import (
	"strings"
	"testing"
	"time"
)

// politeness.delay_factor, in the server's own log: a host whose answers
// take hold is asked again no sooner than (1+factor)·hold after the last
// request arrived (the answer took at least hold as we saw it, and we wait
// factor times that after its end), robots.txt included.
func TestDelayFactorInServerLog(t *testing.T) {
	s := newSite(t)
	s.hold = 30 * time.Millisecond
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow:\n"})
	s.html("/", "/a", "/b", "/c")
	for _, p := range []string{"/a", "/b", "/c"} {
		s.html(p)
	}
	cfg := testConfig(t, s.URL+"/")
	cfg.Politeness.DelayFactor = 2
	runCrawl(t, cfg)
	if n := len(s.hits()); n != 5 {
		t.Fatalf("requests %v, want robots.txt and 4 pages", s.hits())
	}
	if gap, want := s.minGap(), 3*s.hold; gap < want {
		t.Errorf("closest arrivals %v apart, want at least %v (hold %v × (1 + factor 2))", gap, want, s.hold)
	}
}

// politeness.max_bytes_per_second, in the server's own log: no two
// requests arrive closer than the previous answer's bytes take at the cap.
func TestBandwidthCapInServerLog(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nDisallow:\n" + strings.Repeat("#", 2000) + "\n"})
	big := strings.Repeat("x", 5000)
	s.set("/", page{body: `<a href="/a">a</a><a href="/b">b</a>` + big})
	s.set("/a", page{body: big})
	s.set("/b", page{body: big})
	cfg := testConfig(t, s.URL+"/")
	cfg.Politeness.MaxBytesPerSecond = 40 * KiB
	runCrawl(t, cfg)
	if n := len(s.hits()); n != 4 {
		t.Fatalf("requests %v, want robots.txt and 3 pages", s.hits())
	}
	// 2,000 bytes at 40 KiB/s is 49 ms; 5,000 bytes 122 ms. Our clock
	// starts a request a little before the server sees it: 5 ms of slack.
	if gap, want := s.minGap(), 2000*time.Second/(40*1024)-5*time.Millisecond; gap < want {
		t.Errorf("closest arrivals %v apart, want at least %v", gap, want)
	}
}
