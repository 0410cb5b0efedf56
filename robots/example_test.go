package robots_test

import (
	"fmt"
	"time"

	"github.com/politecrawl/crawler/robots"
)

func ExampleParse() {
	rules := robots.Parse([]byte(`
User-agent: *
Disallow: /private/
Allow: /private/press/

User-agent: ExampleBot
Disallow: /drafts/
Crawl-delay: 0.5

Sitemap: https://example.com/sitemap.xml
`))
	// Choose the group once, then ask about many URLs.
	g := rules.ForAgent("ExampleBot/1.0 (+https://example.com/bot)")
	for _, u := range []string{"https://example.com/drafts/a", "https://example.com/private/b"} {
		fmt.Println(u, g.Allowed(u))
	}
	delay, _ := g.CrawlDelay()
	fmt.Println("crawl-delay:", delay)
	fmt.Println("other bots, /private/b:", rules.Allowed("OtherBot", "https://example.com/private/b"))
	fmt.Println("sitemaps:", rules.Sitemaps())
	// Output:
	// https://example.com/drafts/a false
	// https://example.com/private/b true
	// crawl-delay: 500ms
	// other bots, /private/b: false
	// sitemaps: [https://example.com/sitemap.xml]
}

func ExampleUpdate() {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var s robots.State // never fetched: everything disallowed until the first fetch
	s = robots.Update(s, robots.Fetch{Status: 503}, now)
	fmt.Println(s.Result, s.Rules().Allowed("ExampleBot", "/a"), s.NextFetch.Sub(now))

	s = robots.Update(s, robots.Fetch{Status: 200, Body: []byte("User-agent: *\nDisallow: /b\n")}, now.Add(time.Minute))
	fmt.Println(s.Result, s.Rules().Allowed("ExampleBot", "/a"), s.NextFetch.Sub(now.Add(time.Minute)))

	s = robots.Update(s, robots.Fetch{Status: 404}, now.Add(48*time.Hour))
	fmt.Println(s.Result, s.Rules().Allowed("ExampleBot", "/b"))
	// Output:
	// unreachable false 1m0s
	// ok true 24h0m0s
	// missing true
}
