package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/politecrawl/crawler"
	"github.com/politecrawl/crawler/sitemap"
)

const sitemapUsage = "sitemap [--json] [--agent UA] [--timeout 30s] [--delay 0] [--max-urls N] [--max-bytes SIZE] [--max-children N] URL..."

// sitemapMaxRedirects is how many redirects one sitemap request follows,
// as fetch.max_redirects defaults to.
const sitemapMaxRedirects = 5

// runSitemap is `crawler sitemap`: it fetches each sitemap URL (and the
// sitemaps a sitemap index lists, one request at a time), and prints every
// accepted page URL on stdout and every warning on stderr.
//
// Exit status: 0 when at least one of the URLs given could be fetched —
// whatever its content, and whatever became of the children of an index —
// 1 when none could (each failure is also a warning), 2 for bad usage.
func runSitemap(ctx context.Context, args []string, s stdio) error {
	fs := flag.NewFlagSet("sitemap", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per URL (loc, lastmod, changefreq, priority, sitemap) instead of the bare URL")
	agent := fs.String("agent", sitemapAgent(), "send `UA` as the User-Agent")
	timeout := fs.Duration("timeout", 30*time.Second, "give each request, body included, at most `duration`")
	delay := fs.Duration("delay", 0, "leave at least `duration` between the starts of two requests")
	maxURLs := fs.Int("max-urls", sitemap.DefaultMaxURLs, "read at most `n` URLs from one file (sitemap_limits.max_urls)")
	maxBytes := crawler.ByteSize(sitemap.DefaultMaxBytes)
	fs.Func("max-bytes", "read at most `SIZE` bytes of one file after decompression, e.g. 10MiB (sitemap_limits.max_bytes; default 10MiB)", func(v string) error {
		n, err := crawler.ParseByteSize(v)
		maxBytes = n
		return err
	})
	maxChildren := fs.Int("max-children", sitemap.DefaultMaxChildren, "read at most `n` sitemaps of one index (sitemap_limits.max_children)")
	urls, err := parseFlags(fs, args, sitemapUsage, s.out)
	if err != nil {
		return err
	}
	switch {
	case len(urls) == 0:
		return usageErrorf("sitemap: no sitemap URL given (usage: crawler %s)", sitemapUsage)
	case *agent == "":
		return usageErrorf("sitemap: --agent: must not be empty")
	case *timeout <= 0:
		return usageErrorf("sitemap: --timeout: must be > 0, got %v", *timeout)
	case *delay < 0:
		return usageErrorf("sitemap: --delay: must be ≥ 0, got %v", *delay)
	case *maxURLs <= 0:
		return usageErrorf("sitemap: --max-urls: must be > 0, got %d", *maxURLs)
	case maxBytes <= 0:
		return usageErrorf("sitemap: --max-bytes: must be > 0, got %d", maxBytes)
	case *maxChildren <= 0:
		return usageErrorf("sitemap: --max-children: must be > 0, got %d", *maxChildren)
	}
	for _, u := range urls {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return usageErrorf("sitemap: %q is not an http or https URL", u)
		}
	}

	out := bufio.NewWriterSize(s.out, 64<<10)
	warnings := bufio.NewWriterSize(s.err, 16<<10)
	f := &sitemapFetcher{agent: *agent, delay: *delay}
	f.client = &http.Client{
		Timeout:       *timeout,
		Transport:     sitemapTransport(),
		CheckRedirect: f.checkRedirect,
	}
	w := sitemap.Walker{
		Fetch:  f.fetch,
		Limits: sitemap.Limits{MaxURLs: *maxURLs, MaxBytes: int64(maxBytes), MaxChildren: *maxChildren},
		Warn: func(warning sitemap.Warning) {
			fmt.Fprintf(warnings, "warning: %s\n", warning)
		},
	}
	emit := func(e sitemap.Entry) error {
		out.WriteString(e.Loc)
		return out.WriteByte('\n')
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		emit = func(e sitemap.Entry) error {
			return enc.Encode(sitemapJSON{Loc: e.Loc, Lastmod: e.LastmodRaw, ChangeFreq: e.ChangeFreq, Priority: e.Priority, Sitemap: e.Sitemap})
		}
	}
	stats, err := w.Walk(ctx, urls, emit)
	err = errors.Join(err, out.Flush(), warnings.Flush())
	if err != nil {
		return fmt.Errorf("sitemap: %w", err)
	}
	if stats.RootsRead == 0 {
		return errors.New("sitemap: no sitemap could be fetched")
	}
	return nil
}

// sitemapJSON is the --json form of one page.
type sitemapJSON struct {
	Loc        string  `json:"loc"`
	Lastmod    string  `json:"lastmod,omitempty"`
	ChangeFreq string  `json:"changefreq,omitempty"`
	Priority   float64 `json:"priority"`
	Sitemap    string  `json:"sitemap"`
}

// sitemapAgent is the default User-Agent: the product token, the version,
// and where to read about the crawler.
func sitemapAgent() string {
	v := strings.TrimPrefix(versionString(), "v")
	if v == "" || strings.ContainsAny(v, "() ") {
		v = "dev"
	}
	return "politecrawl/" + v + " (+https://github.com/politecrawl/crawler)"
}

// sitemapTransport is the default transport without its transparent gzip:
// the sitemap reader undoes gzip itself, by magic bytes and within its
// byte cap, so that a .gz served with or without Content-Encoding: gzip
// reads the same.
func sitemapTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	return t
}

// sitemapFetcher fetches one sitemap at a time, leaving at least delay
// between the starts of two requests (redirect hops included).
type sitemapFetcher struct {
	client *http.Client
	agent  string
	delay  time.Duration
	last   time.Time // start of the last request
}

func (f *sitemapFetcher) fetch(ctx context.Context, u string) (io.ReadCloser, string, error) {
	if err := f.wait(ctx); err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("User-Agent", f.agent)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		return nil, "", fmt.Errorf("HTTP status %s", resp.Status)
	}
	switch ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); ce {
	case "", "identity", "gzip", "x-gzip":
	default:
		resp.Body.Close()
		return nil, "", fmt.Errorf("unsupported Content-Encoding %q", ce)
	}
	return resp.Body, resp.Request.URL.String(), nil
}

// checkRedirect bounds the redirects of one request and spaces their
// requests like the others.
func (f *sitemapFetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= sitemapMaxRedirects {
		return fmt.Errorf("stopped after %d redirects", sitemapMaxRedirects)
	}
	return f.wait(req.Context())
}

// wait blocks until delay has passed since the start of the last request,
// then marks the start of a new one.
func (f *sitemapFetcher) wait(ctx context.Context) error {
	if f.delay > 0 && !f.last.IsZero() {
		if d := f.delay - time.Since(f.last); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	f.last = time.Now()
	return nil
}
