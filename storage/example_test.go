package storage_test

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

	"go.etcd.io/bbolt"

	"github.com/politecrawl/crawler/storage"
)

func ExampleMirrorPath() {
	for _, raw := range []string{
		"https://example.com/docs/",
		"https://example.com/docs/intro",
		"http://127.0.0.1:8001/search?q=go&page=2",
		"https://example.com/%2e%2e/%2e%2e/etc/passwd",
	} {
		u, _ := url.Parse(raw)
		fmt.Println(storage.MirrorPath(u, "text/html"))
	}
	// Output:
	// example.com/docs/index.html
	// example.com/docs/intro.html
	// 127.0.0.1:8001/search@q=go&page=2.html
	// example.com/%2E%2E/%2E%2E/etc/passwd.html
}

func ExampleRelativeRef() {
	fmt.Println(storage.RelativeRef("example.com/docs/intro.html", "example.com/search@q=go.html"))
	// Output: ../search@q=go.html
}

func ExampleMirror() {
	dir, _ := os.MkdirTemp("", "mirror")
	defer os.RemoveAll(dir)
	m, err := storage.NewMirror(dir)
	if err != nil {
		log.Fatal(err)
	}
	u, _ := url.Parse("https://example.com/about")
	rel, err := m.Write(u, "text/html", strings.NewReader("<h1>About</h1>"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rel)
	// Output: example.com/about.html
}

func ExampleInventory() {
	inv := storage.NewInventory(os.Stdout)
	inv.Write(storage.Record{
		URL: "https://example.com/", Status: 200, ContentType: "text/html",
		Bytes: 5120, DurationMS: 42, FetchedAt: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
		FoundVia: storage.FoundSeed, Robots: storage.RobotsAllowed,
	})
	inv.Write(storage.Record{
		URL: "https://example.com/private/", Depth: 1, FoundVia: storage.FoundLink,
		Referrer: "https://example.com/", Robots: storage.RobotsDisallowed,
	})
	if err := inv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// {"url":"https://example.com/","status":200,"content_type":"text/html","fetched_at":"2025-03-04T05:06:07Z","depth":0,"found_via":"seed","robots":"allowed","bytes":5120,"duration_ms":42}
	// {"url":"https://example.com/private/","status":0,"depth":1,"found_via":"link","referrer":"https://example.com/","robots":"disallowed"}
}

func ExamplePages() {
	dir, _ := os.MkdirTemp("", "pages")
	defer os.RemoveAll(dir)
	db, err := bbolt.Open(filepath.Join(dir, "state.db"), 0o600, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	pages, err := storage.NewPages(db)
	if err != nil {
		log.Fatal(err)
	}
	err = pages.Put(storage.Page{
		Key: "https://example.com/", URL: "https://example.com/", Status: 200,
		ETag: `"abc"`, Hash: storage.ContentHash([]byte("<h1>Hi</h1>")),
	})
	if err != nil {
		log.Fatal(err)
	}
	p, ok, err := pages.Get("https://example.com/")
	if err != nil {
		log.Fatal(err)
	}
	// A revisit sends If-None-Match with the ETag seen last time.
	fmt.Println(ok, p.ETag)
	// Output: true "abc"
}

func ExampleWARCWriter() {
	dir, _ := os.MkdirTemp("", "warc")
	defer os.RemoveAll(dir)
	w, err := storage.NewWARCWriter(storage.WARCOptions{Dir: dir, Software: "politecrawl/1.0"})
	if err != nil {
		log.Fatal(err)
	}
	u, _ := url.Parse("https://example.com/")
	ex := storage.Exchange{
		Date: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC), URL: u,
		RequestHeader: http.Header{"User-Agent": {"ExampleBot/1.0"}},
		Status:        200, Header: http.Header{"Content-Type": {"text/html"}},
		Body: []byte("<h1>Hi</h1>"),
	}
	ref, err := w.WriteExchange(ex, storage.WARCRef{}) // keep ref in the Page
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
	r, err := storage.NewWARCReader(f)
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
