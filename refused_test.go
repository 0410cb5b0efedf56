package crawler

import (
	"os"
	"strings"
	"testing"
)

// A URL out of scope is recorded once in its request form, as a fetched
// URL is: http://h and http://h/ are one URL (RFC 3986 §6.2.3), and
// links written both ways make one record, not two.
func TestRefusedURLRecordedInRequestForm(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	s.html("/", "http://other.example", "/a")
	s.html("/a", "http://other.example/", "/b")
	s.html("/b", "HTTP://Other.Example:80")
	cfg := testConfig(t, s.URL+"/")
	runCrawl(t, cfg)
	b, err := os.ReadFile(cfg.Output.URLs)
	if err != nil {
		t.Fatal(err)
	}
	var recs []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "other.example") {
			recs = append(recs, line)
		}
	}
	if len(recs) != 1 || !strings.Contains(recs[0], `"url":"http://other.example/"`) {
		t.Errorf("records of the out-of-scope URL: %q; want one, of http://other.example/", recs)
	}
}
