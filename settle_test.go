package crawler

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/politecrawl/crawler/frontier"
)

// A URL is done only once its inventory record is written: with the
// inventory on a full disk (/dev/full) the crawl stops with an error
// naming output.urls and the cause, and records nothing done; run again
// with room, the same state fetches and records every page.
func TestInventoryOnFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	s := newSite(t)
	s.html("/", "/a", "/b")
	s.html("/a")
	s.html("/b")
	cfg := testConfig(t, s.URL+"/")
	cfg.Output.URLs = "/dev/full"
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	sum, err := c.Run(ctx)
	c.Close()
	var we *writeError
	if !errors.As(err, &we) || we.output != "output.urls" || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Run: %v, want a failed write of output.urls with ENOSPC", err)
	}
	if sum.Done != 0 || sum.OutputErrors["output.urls"] == 0 {
		t.Errorf("summary %+v: want nothing done and the failed write counted", sum)
	}

	cfg.Output.URLs = filepath.Join(t.TempDir(), "urls.jsonl")
	runCrawl(t, cfg)
	inv := inventory(t, cfg.Output.URLs)
	for _, p := range []string{"/", "/a", "/b"} {
		if r, ok := inv[s.URL+p]; !ok || r.Status != 200 {
			t.Errorf("%s after the resume: %+v (recorded %v), want 200", p, r, ok)
		}
	}
}

// A body in an encoding the crawler did not ask for and cannot undo (br)
// is neither read for links nor saved in the mirror as if it were HTML:
// its record says why.
func TestUnaskedContentEncoding(t *testing.T) {
	s := newSite(t)
	s.set("/", page{body: "\x1b\x00\x00not really brotli <a href=/a>a</a>", headers: map[string]string{"Content-Encoding": "br"}})
	s.html("/a")
	cfg := testConfig(t, s.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	runCrawl(t, cfg)
	r := inventory(t, cfg.Output.URLs)[s.URL+"/"]
	if r.Status != 200 || r.Error != `body in an unsupported Content-Encoding "br": not read` {
		t.Errorf("record %+v, want status 200 and the encoding named", r)
	}
	if s.hits()["/a"] != 0 {
		t.Error("a link was read from the undecoded body")
	}
	if entries, _ := os.ReadDir(cfg.Output.MirrorDir); len(entries) != 0 {
		t.Errorf("the mirror holds %d entries, want none", len(entries))
	}
}

// A 429 is tried fetch.retries times more, as other retried answers are,
// and then recorded: the host is not given up on for one URL's answers.
// A host an earlier run gave up on is tried again by the next run once
// the wait it asked for is over.
func TestTooManyRequestsFollowsRetries(t *testing.T) {
	s := newSite(t)
	s.html("/", "/a", "/b")
	s.set("/a", page{status: 429, headers: map[string]string{"Retry-After": "0"}})
	s.html("/b")
	cfg := testConfig(t, s.URL+"/")
	cfg.Fetch.Retries = 2
	sum := runCrawl(t, cfg)
	if n := s.hits()["/a"]; n != 3 {
		t.Errorf("/a asked %d times, want 3 (fetch.retries 2)", n)
	}
	if r := inventory(t, cfg.Output.URLs)[s.URL+"/a"]; r.Status != 429 {
		t.Errorf("/a recorded %+v, want its 429", r)
	}
	if len(sum.Parked) != 0 || s.hits()["/b"] != 1 {
		t.Errorf("parked %+v, /b asked %d times; want the host kept and /b fetched", sum.Parked, s.hits()["/b"])
	}
}

func TestParkedHostTriedAgainNextRun(t *testing.T) {
	s := newSite(t)
	s.html("/", "/a")
	s.html("/a")
	cfg := testConfig(t, s.URL+"/")
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	origin := originOf(frontier.MustParse(s.URL))
	if _, err := c.front.Add(c.seedItems()); err != nil {
		t.Fatal(err)
	}
	if err := c.front.Park(origin, "10 failures in a row"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	sum := runCrawl(t, cfg)
	if len(sum.Parked) != 0 || s.hits()["/a"] != 1 {
		t.Errorf("parked %+v, /a asked %d times; want the host tried again", sum.Parked, s.hits()["/a"])
	}
}
