package crawler

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/politecrawl/crawler/storage"
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

// The records of the URLs a page refuses are held, not written one by one
// (a write system call each), and reach the inventory with the page's
// own record, before the page is done: every write holds a record of a
// URL visited, and a refused URL's record is never written after the
// record of the page that refused it.
func TestRefusalsWrittenWithTheirPage(t *testing.T) {
	s := newSite(t)
	s.set("/robots.txt", page{ctype: "text/plain"})
	var root, a []string
	for i := range 40 {
		root = append(root, fmt.Sprintf("http://other%d.example/", i))
		a = append(a, fmt.Sprintf("http://more%d.example/x", i))
	}
	s.html("/", append(root, "/a")...)
	s.html("/a", a...)
	cfg := testConfig(t, s.URL+"/")
	w := &writes{}
	if _, err := crawlWith(t, cfg, Options{Inventory: w}); err != nil {
		t.Fatal(err)
	}
	writtenAt := map[string]int{} // URL: the write that held its record
	refusals := 0
	for i, b := range w.all {
		visited := false
		err := storage.ReadInventory(bytes.NewReader(b), func(r storage.Record) error {
			writtenAt[r.URL] = i
			if strings.HasPrefix(r.Error, "out of scope") {
				refusals++
				if at, ok := writtenAt[r.Referrer]; ok && at < i {
					t.Errorf("%s written after the record of %s, which refused it", r.URL, r.Referrer)
				}
			} else {
				visited = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !visited {
			t.Errorf("write %d holds refused URLs only: %q", i, b)
		}
	}
	if refusals != 80 {
		t.Errorf("%d refused URLs recorded, want 80", refusals)
	}
}

// writes keeps each write made to it.
type writes struct {
	mu  sync.Mutex
	all [][]byte
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, bytes.Clone(p))
	return len(p), nil
}
