package frontier_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

func ExampleCanonicalize() {
	u, err := frontier.Canonicalize("HTTP://Müller.EU:80/a/./b/../%7euser?q=%7e#top", 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("request:", u.Request)
	fmt.Println("key:    ", u.Key)
	fmt.Println("origin: ", u.Origin)

	_, err = frontier.Canonicalize("mailto:someone@example.com", 0)
	var ue *frontier.URLError
	if errors.As(err, &ue) {
		fmt.Println("rejected:", ue.Reason)
	}
	// Output:
	// request: http://xn--mller-kva.eu:80/a/%7euser?q=%7e
	// key:     http://xn--mller-kva.eu/a/~user?q=~
	// origin:  http://xn--mller-kva.eu
	// rejected: scheme
}

func ExampleResolve() {
	page, _ := frontier.Canonicalize("https://example.com/docs/guide/intro.html", 0)
	for _, href := range []string{"../api/", "setup.html#step-2", "//cdn.example.net/x.js", "javascript:void(0)"} {
		u, err := frontier.Resolve(page, href, 0)
		if err != nil {
			fmt.Println("skip", href)
			continue
		}
		fmt.Println(u.Key)
	}
	// Output:
	// https://example.com/docs/api/
	// https://example.com/docs/guide/setup.html
	// https://cdn.example.net/x.js
	// skip javascript:void(0)
}

// Example shows the loop of a crawl engine: take a lease, make its host
// wait before the next request, fetch, and complete the lease with the
// links found, until the frontier is drained.
func Example() {
	dir, err := os.MkdirTemp("", "frontier-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	f, err := frontier.Open(filepath.Join(dir, "state.db"), frontier.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	seed, _ := frontier.Canonicalize("https://example.com/", 0)
	if _, err := f.Add([]frontier.Item{{URL: seed, Via: frontier.ViaSeed}}); err != nil {
		log.Fatal(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for {
		l, idle, err := f.Next(now)
		if err != nil {
			log.Fatal(err)
		}
		if l == nil {
			if idle.Drained {
				break
			}
			now = idle.Until // or wait for f.Wake()
			continue
		}
		f.SetReady(l.Origin, now.Add(time.Second)) // politeness: a request a second
		fmt.Println(now.Format("15:04:05"), l.Request, l.Via, l.Depth)

		// Fetch l.Request here; say the page links to two pages, one twice.
		var links []frontier.Item
		for _, href := range []string{"/about", "/contact", "about#team"} {
			if l.Depth > 0 {
				break
			}
			u, err := frontier.Resolve(l.URL, href, 0)
			if err != nil {
				continue
			}
			links = append(links, frontier.Item{URL: u, Via: frontier.ViaLink, Depth: l.Depth + 1, Referrer: l.Request})
		}
		if _, err := f.Done(l, frontier.Outcome{}, links); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%+v\n", f.Stats())
	// Output:
	// 00:00:00 https://example.com/ seed 0
	// 00:00:01 https://example.com/about link 1
	// 00:00:02 https://example.com/contact link 1
	// {Queued:0 Leased:0 Done:3 Scheduled:0}
}
