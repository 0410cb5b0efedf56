package report

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var (
	largeURLs  = flag.Int("report.urls", 1_000_000, "inventory records BenchmarkReportLarge generates")
	largeLinks = flag.Int("report.links", 20_000_000, "link graph lines BenchmarkReportLarge generates")
	largeDir   = flag.String("report.dir", "", "keep BenchmarkReportLarge's files in this directory (reused when there), for timing the binary on them")
)

// BenchmarkReportLarge makes the report of a generated crawl: by default
// a million inventory records and twenty million links (about 2.5 GB).
// It is slow and its files are large, so it runs only when asked:
//
//	go test ./storage/report -run '^$' -bench BenchmarkReportLarge -benchtime 1x -report.dir /tmp/large
//
// and then the binary on the same files, for its peak memory:
//
//	/usr/bin/time -v crawler report --urls /tmp/large/urls.jsonl --links /tmp/large/links.jsonl --format json --out /dev/null
func BenchmarkReportLarge(b *testing.B) {
	dir := *largeDir
	if dir == "" {
		dir = b.TempDir()
	}
	urls, links := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "links.jsonl")
	if _, err := os.Stat(links); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := writeFile(urls, func(w io.Writer) error { return genInventory(w, *largeURLs) }); err != nil {
			b.Fatal(err)
		}
		if err := writeFile(links, func(w io.Writer) error { return genLinks(w, *largeURLs, *largeLinks) }); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		u, err := os.Open(urls)
		if err != nil {
			b.Fatal(err)
		}
		l, err := os.Open(links)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Build(Inputs{Inventory: u, Links: l}, Names{})
		u.Close()
		l.Close()
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteJSON(io.Discard, r); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.Overview.URLs), "urls")
	}
}

func writeFile(path string, gen func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := gen(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// genURL is the generated crawl's URL number i.
func genURL(i int) string {
	return fmt.Sprintf("https://www.example.com/section-%d/page-%d.html", i%97, i)
}

// genInventory writes n records: mostly 200 HTML pages (titles shared by
// tens of pages now and then), a redirect every 50th, a 404 every 100th,
// a sitemap listing every 3rd, and a tenth of the pages written twice,
// as a resumed crawl does.
func genInventory(w io.Writer, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	var prevSim uint64
	for i := range n {
		u := genURL(i)
		var err error
		switch {
		case i%100 == 99:
			_, err = fmt.Fprintf(w, `{"url":%q,"status":404,"content_type":"text/html","bytes":120,"duration_ms":%d,"depth":2,"found_via":"link","robots":"allowed","link_depth":2}`+"\n", u, rng.IntN(500))
		case i%50 == 49:
			_, err = fmt.Fprintf(w, `{"url":%q,"status":301,"final_url":%q,"redirect_chain":[%q],"bytes":0,"duration_ms":%d,"depth":2,"found_via":"link","robots":"allowed","link_depth":2}`+"\n", u, genURL(i-1), genURL(i-1), rng.IntN(50))
		default:
			title := fmt.Sprintf("Page %d", i)
			if i%1000 < 30 {
				title = fmt.Sprintf("Shared %d", i/1000)
			}
			if i%10 == 0 {
				if _, err = fmt.Fprintf(w, `{"url":%q,"status":503,"depth":1,"found_via":"link","robots":"allowed","error":"retry"}`+"\n", u); err != nil {
					return err
				}
			}
			// The body's facts: a text shared by pages now and then (a
			// duplicate), a SimHash a few bits from the page before it
			// every 20th (a near duplicate), a few anchors, and hreflang
			// alternates on every 100th page.
			content, sim := rng.Uint64(), rng.Uint64()
			if i%500 < 3 {
				content = uint64(i / 500)
			}
			if i%20 == 1 {
				sim = prevSim ^ 0b10101
			}
			prevSim = sim
			hreflang := ""
			if i%100 == 5 {
				hreflang = fmt.Sprintf(`,"hreflang":[{"lang":"en","url":%q},{"lang":"de","url":%q}]`, u, genURL(i+1))
			}
			_, err = fmt.Fprintf(w, `{"url":%q,"status":200,"content_type":"text/html; charset=utf-8","bytes":%d,"duration_ms":%d,"fetched_at":"2026-11-25T10:00:00Z","depth":%d,"found_via":"link","referrer":%q,"robots":"allowed","in_sitemap":%t,"title":%q,"description":"A page of the generated crawl","h1":"Heading","canonical":%q,"links_out":20,"link_depth":%d,"word_count":%d,"content_hash":"%016x","simhash":"%016x","lang":"en","h1_count":%d,"img_no_alt":%d,"ttfb_ms":%d,"hsts":%t,"anchors":["top-%d","section-1","section-2","footer"]%s}`+"\n",
				u, 2000+rng.IntN(200000), rng.IntN(3000), i%7, genURL(i/2), i%3 == 0, title, u, i%7,
				rng.IntN(2000), content, sim, 1+i%13/12, i%17/16, rng.IntN(1000), i%4 != 0, i, hreflang)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// genLinks writes m links between the n pages, each with an anchor, one
// in twenty to a fragment (a tenth of those to none the page has).
func genLinks(w io.Writer, n, m int) error {
	rng := rand.New(rand.NewPCG(3, 4))
	for range m {
		from, to := rng.IntN(n), rng.IntN(n)
		kind := "a"
		if rng.IntN(10) == 0 {
			kind = "img"
		}
		frag := ""
		switch rng.IntN(200) {
		case 0, 1, 2, 3, 4, 5, 6, 7, 8:
			frag = "#section-1"
		case 9:
			frag = fmt.Sprintf("#missing-%d", rng.IntN(10))
		}
		if _, err := fmt.Fprintf(w, `{"from":%q,"to":"%s%s","kind":%q,"anchor":"Link to page %d"}`+"\n", genURL(from), genURL(to), frag, kind, to); err != nil {
			return err
		}
	}
	return nil
}
