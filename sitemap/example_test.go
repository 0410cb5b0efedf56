package sitemap_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/politecrawl/crawler/sitemap"
)

func ExampleRead() {
	body := strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/shop/shoes</loc><lastmod>2024-05-06</lastmod><priority>0.8</priority></url>
  <url><loc>page?id=7&amp;lang=en</loc></url>
  <url><loc>https://example.com/blog/</loc></url>
</urlset>`)
	res, err := sitemap.Read(body, "https://example.com/shop/sitemap.xml", sitemap.DefaultLimits(),
		func(e sitemap.Entry) error {
			fmt.Println(e.Loc, e.Lastmod.Format("2006-01-02"), e.Priority)
			return nil
		},
		func(w sitemap.Warning) { fmt.Println("warning:", w.Rule, w.URL) })
	if err != nil {
		fmt.Println(err)
	}
	fmt.Println(res.Kind, res.Pages, "pages,", res.Dropped, "dropped")
	// Output:
	// https://example.com/shop/shoes 2024-05-06 0.8
	// https://example.com/shop/page?id=7&lang=en 0001-01-01 0.5
	// warning: scope https://example.com/blog/
	// urlset 2 pages, 1 dropped
}

func ExampleWalker_Walk() {
	files := map[string]string{
		"https://example.com/sitemap_index.xml": `<sitemapindex>
  <sitemap><loc>https://example.com/a.xml</loc></sitemap>
  <sitemap><loc>https://example.com/b.xml</loc></sitemap>
</sitemapindex>`,
		"https://example.com/a.xml": `<urlset><url><loc>https://example.com/1</loc></url></urlset>`,
		"https://example.com/b.xml": "https://example.com/2\nhttps://example.com/1\n",
	}
	w := sitemap.Walker{
		Fetch: func(_ context.Context, url string) (io.ReadCloser, string, error) {
			body, ok := files[url]
			if !ok {
				return nil, "", fmt.Errorf("HTTP status 404 Not Found")
			}
			return io.NopCloser(strings.NewReader(body)), url, nil
		},
		Warn: func(w sitemap.Warning) { fmt.Println("warning:", w) },
	}
	stats, err := w.Walk(context.Background(), []string{"https://example.com/sitemap_index.xml"}, func(e sitemap.Entry) error {
		fmt.Println(e.Loc, "from", e.Sitemap)
		return nil
	})
	fmt.Println(stats.Files, "files,", stats.Pages, "pages,", err)
	// Output:
	// https://example.com/1 from https://example.com/a.xml
	// https://example.com/2 from https://example.com/b.xml
	// 3 files, 2 pages, <nil>
}
