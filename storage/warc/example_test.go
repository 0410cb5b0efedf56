package warc_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/politecrawl/crawler/storage/warc"
)

func ExampleWriter() {
	dir, _ := os.MkdirTemp("", "warc")
	defer os.RemoveAll(dir)
	w, err := warc.NewWriter(warc.Options{Dir: dir, Software: "politecrawl/1.0"})
	if err != nil {
		log.Fatal(err)
	}
	u, _ := url.Parse("https://example.com/")
	ex := warc.Exchange{
		Date: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC), URL: u,
		RequestHeader: http.Header{"User-Agent": {"ExampleBot/1.0"}},
		Status:        200, Header: http.Header{"Content-Type": {"text/html"}},
		Body: []byte("<h1>Hi</h1>"),
	}
	ref, err := w.WriteExchange(ex, warc.Ref{}) // keep ref in the Page
	if err != nil {
		log.Fatal(err)
	}
	ex.Status, ex.Body = http.StatusNotModified, nil // the next visit: 304
	if _, err := w.WriteExchange(ex, ref); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	f, err := os.Open(files[0])
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(filepath.Base(files[0]))
	r, err := warc.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err) // a digest mismatch, for one
		}
		fmt.Println(strings.TrimSpace(rec.Header.Get("WARC-Type") + " " + rec.Header.Get("WARC-Profile")))
	}
	// Output:
	// crawl-20250304050607-00001.warc.gz
	// warcinfo
	// request
	// response
	// request
	// revisit http://netpreserve.org/warc/1.1/revisit/server-not-modified
}
