package storage_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/politecrawl/crawler/storage"
)

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
