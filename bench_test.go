package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// benchSite serves pages /0 … /n-1 of about 2 KB, each linking to ten
// others, and an empty robots.txt.
func benchSite(b *testing.B, n int) *httptest.Server {
	filler := strings.Repeat("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n", 25)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%d</title></head><body>%s", i, filler)
		for k := 1; k <= 10; k++ {
			fmt.Fprintf(w, `<a href="/%d">page %d</a> `, (i*7+k*13)%n, k)
		}
		fmt.Fprint(w, "</body></html>")
	}))
	b.Cleanup(srv.Close)
	return srv
}

// benchCrawls runs the crawl config makes (given a fresh directory) once
// per iteration, each to its end with at least want pages fetched, and
// reports pages/s, CPU time per page (client and test servers together,
// as both run in this process) and allocations.
func benchCrawls(b *testing.B, want int, config func(dir string) Config) {
	b.ReportAllocs()
	var pages int64
	var elapsed, cpu time.Duration
	for b.Loop() {
		c, err := New(config(b.TempDir()), Options{})
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime()
		sum, err := c.Run(context.Background())
		elapsed += time.Since(start)
		cpu += cpuTime() - cpu0
		c.Close()
		if err != nil {
			b.Fatal(err)
		}
		if sum.Pages["2xx"] < int64(want) {
			b.Fatalf("fetched %d pages, want %d", sum.Pages["2xx"], want)
		}
		pages += sum.Pages["2xx"]
	}
	b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(pages), "cpu-µs/page")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCrawl crawls loopback hosts with no delay, each from its seed
// "/0", and reports pages/s and CPU time per page (client and the test
// servers together, as both run in this process).
func BenchmarkCrawl(b *testing.B) {
	for _, tc := range []struct {
		hosts, pages, perHost, workers int
	}{
		{1, 2000, 1, 4},  // one host, one request at a time: as wget --mirror
		{20, 250, 2, 16}, // many hosts
	} {
		b.Run(fmt.Sprintf("hosts=%d/per_host=%d", tc.hosts, tc.perHost), func(b *testing.B) {
			var seeds []string
			for range tc.hosts {
				seeds = append(seeds, benchSite(b, tc.pages).URL+"/0")
			}
			benchCrawls(b, tc.hosts*tc.pages, func(dir string) Config {
				cfg := DefaultConfig()
				cfg.Seeds, cfg.StateDir = seeds, dir
				cfg.Politeness.Delay, cfg.Politeness.MaxPerHost = 0, tc.perHost
				cfg.Fetch.Workers = tc.workers
				return cfg
			})
		})
	}
}

// docsPage is an HTML page shaped like a Sphinx documentation page (the
// Python docs): a navigation of links, sections whose code is highlighted
// in many small spans, and cross-references to a few pages at many
// anchors. About 270 KB.
func docsPage() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>os — Miscellaneous interfaces</title>` +
		`<meta name="viewport" content="width=device-width, initial-scale=1.0"><link rel="stylesheet" href="../_static/pygments.css" type="text/css">` +
		`<link rel="index" title="Index" href="../genindex.html"><link rel="next" title="io" href="io.html"><script src="../_static/doctools.js"></script></head><body>`)
	b.WriteString(`<div class="related" role="navigation"><ul>`)
	for i := range 40 {
		fmt.Fprintf(&b, `<li class="nav-item"><a href="../library/mod%d.html" title="Module %d" accesskey="N">mod%d</a></li>`, i, i, i)
	}
	b.WriteString(`</ul></div><div class="body" role="main">`)
	for s := range 60 {
		fmt.Fprintf(&b, `<section id="s%d"><h2>Section %d<a class="headerlink" href="#s%d" title="Permalink to this headline">¶</a></h2>`, s, s, s)
		fmt.Fprintf(&b, `<p>See <a class="reference internal" href="functions.html#f%d" title="functions.f%d"><code class="xref py py-func docutils literal notranslate"><span class="pre">f%d()</span></code></a> and `+
			`<a class="reference external" href="https://example.org/pep-%d/">PEP %d</a> for the details of this call, which returns a value.</p>`, s, s, s, s, s)
		b.WriteString(`<div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span>`)
		for l := range 12 {
			fmt.Fprintf(&b, `<span class="gp">&gt;&gt;&gt; </span><span class="kn">import</span> <span class="nn">os</span><span class="p">;</span> <span class="n">x%d</span> <span class="o">=</span> <span class="n">os</span><span class="o">.</span><span class="n">f%d</span><span class="p">(</span><span class="s1">&#39;a&#39;</span><span class="p">)</span>`+"\n", l, l)
		}
		b.WriteString(`</pre></div></div></section>`)
	}
	b.WriteString(`</div></body></html>`)
	return []byte(b.String())
}

// BenchmarkExtractDocs extracts the links of a documentation page, as a
// crawl of such a site does for each page it fetches.
func BenchmarkExtractDocs(b *testing.B) {
	body := docsPage()
	base := frontier.MustParse("http://docs.example/library/os.html")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		extractHTML(body, "text/html; charset=utf-8", base, "politecrawl", 0)
	}
	// CPU time, which a loaded machine measures better than the wall.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// docsSite serves a documentation site shaped like the Python docs:
// /library/mod0.html … mod{n-1}.html, each a docsPage-like page of
// about 150 KB whose navigation links to 40 modules and whose sections
// cross-reference others at anchors; a stylesheet and a script; and a
// robots.txt.
func docsSite(b *testing.B, n int) *httptest.Server {
	pages := make([][]byte, n)
	for i := range n {
		var p strings.Builder
		fmt.Fprintf(&p, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>mod%d — Module %d</title>`+
			`<link rel="stylesheet" href="../_static/pygments.css" type="text/css"><link rel="next" href="mod%d.html">`+
			`<script src="../_static/doctools.js"></script></head><body><div class="related" role="navigation"><ul>`, i, i, (i+1)%n)
		for k := range 40 {
			fmt.Fprintf(&p, `<li class="nav-item"><a href="mod%d.html" title="Module %d">mod%d</a></li>`, (i+k*7+1)%n, k, k)
		}
		p.WriteString(`</ul></div><div class="body" role="main">`)
		for s := range 35 {
			fmt.Fprintf(&p, `<section id="s%d"><h2>Section %d<a class="headerlink" href="#s%d">¶</a></h2>`, s, s, s)
			fmt.Fprintf(&p, `<p>See <a class="reference internal" href="mod%d.html#s%d"><code class="xref"><span class="pre">f%d()</span></code></a> for the details.</p>`, (i*3+s)%n, s, s)
			p.WriteString(`<div class="highlight"><pre>`)
			for l := range 12 {
				fmt.Fprintf(&p, `<span class="kn">import</span> <span class="nn">os</span><span class="p">;</span> <span class="n">x%d</span> <span class="o">=</span> <span class="n">f%d</span><span class="p">()</span>`+"\n", l, l)
			}
			p.WriteString(`</pre></div></section>`)
		}
		p.WriteString(`</div></body></html>`)
		pages[i] = []byte(p.String())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
			return
		case "/_static/pygments.css":
			w.Header().Set("Content-Type", "text/css")
			w.Write([]byte(strings.Repeat(".highlight .kn { color: #007020; font-weight: bold }\n", 100)))
			return
		case "/_static/doctools.js":
			w.Header().Set("Content-Type", "application/javascript")
			w.Write([]byte(strings.Repeat("function f(){ return 1; }\n", 200)))
			return
		}
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/library/mod%d.html", &i); err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(pages[i])
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkCrawlDocs mirrors a documentation site as the docs-mirror
// comparison with wget2 does: one host, one connection, no delay, large
// pages of many links each, with a mirror and an inventory; the mirror's
// links made relative (as wget -k), and kept as they are (as wget2
// --mirror, the default). It reports pages/s and CPU time per page (client and server
// together, as both run in this process).
func BenchmarkCrawlDocs(b *testing.B) {
	const n = 300
	srv := docsSite(b, n)
	for _, links := range []string{MirrorLinksRelative, MirrorLinksKeep} {
		b.Run("links="+links, func(b *testing.B) {
			benchCrawls(b, n, func(dir string) Config {
				cfg := DefaultConfig()
				cfg.Seeds, cfg.StateDir = []string{srv.URL + "/library/mod0.html"}, filepath.Join(dir, "state")
				cfg.Politeness.Delay, cfg.Politeness.MaxPerHost = 0, 1
				cfg.Fetch.Workers = 4
				cfg.Output.URLs = filepath.Join(dir, "urls.jsonl")
				cfg.Output.MirrorDir = filepath.Join(dir, "mirror")
				cfg.Output.MirrorLinks = links
				return cfg
			})
		})
	}
}
