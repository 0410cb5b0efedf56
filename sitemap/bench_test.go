package sitemap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// genURLSet returns a urlset of n entries, about 200 bytes each: with
// n = 50,000 a file of about 10 MB, just under the 10 MiB cap.
func genURLSet(n int) []byte {
	var b bytes.Buffer
	b.Grow(n*210 + 200)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "<url>\n <loc>https://example.com/products/category-%02d/item-%06d-a-long-product-slug.html</loc>\n"+
			" <lastmod>2024-%02d-%02dT10:30:00+00:00</lastmod>\n <changefreq>weekly</changefreq>\n <priority>0.%d</priority>\n</url>\n",
			i%50, i, i%12+1, i%28+1, i%10)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// BenchmarkParse reads a 50,000-URL urlset of about 10 MB, plain and
// gzipped. MB/s is of uncompressed XML.
func BenchmarkParse(b *testing.B) {
	const n = 50_000
	plain := genURLSet(n)
	if len(plain) > DefaultMaxBytes {
		b.Fatalf("generated %d bytes, more than the cap", len(plain))
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"plain", plain}, {"gzip", gzipN(b, plain, 1)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			runs := 0
			for b.Loop() {
				got := 0
				_, err := Read(bytes.NewReader(c.data), "https://example.com/sitemap.xml", Limits{},
					func(Entry) error { got++; return nil }, nil)
				if err != nil || got != n {
					b.Fatalf("got %d entries, error %v", got, err)
				}
				runs++
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(runs*n), "allocs/entry")
		})
	}
}

// BenchmarkWalk reads the same 50,000-URL urlset through a Walker, which
// also removes duplicate pages: the cost of `crawler sitemap` less the
// network. MB/s is of uncompressed XML.
func BenchmarkWalk(b *testing.B) {
	const n = 50_000
	plain := genURLSet(n)
	b.SetBytes(int64(len(plain)))
	b.ReportAllocs()
	w := Walker{Fetch: func(context.Context, string) (io.ReadCloser, string, error) {
		return io.NopCloser(bytes.NewReader(plain)), "", nil
	}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	runs := 0
	for b.Loop() {
		got := 0
		_, err := w.Walk(context.Background(), []string{"https://example.com/sitemap.xml"}, func(Entry) error { got++; return nil })
		if err != nil || got != n {
			b.Fatalf("got %d pages, error %v", got, err)
		}
		runs++
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(runs*n), "allocs/entry")
}
