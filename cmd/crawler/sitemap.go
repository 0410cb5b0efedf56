package main

import (
	"bufio"
	"bytes"
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
	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/sitemap"
	"github.com/politecrawl/crawler/storage"
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
	agent := fs.String("agent", crawler.DefaultConfig().UserAgent, "send `UA` as the User-Agent (user_agent's default, as crawl sends)")
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
	f := &sitemapFetcher{get: crawler.NewGetter(*agent, *timeout, int64(maxBytes)+1), delay: *delay}
	w := sitemap.Walker{
		Fetch:  f.fetch,
		Limits: sitemap.Limits{MaxURLs: *maxURLs, MaxBytes: int64(maxBytes), MaxChildren: *maxChildren},
		Warn: func(warning sitemap.Warning) {
			fmt.Fprintf(warnings, "warning: %s\n", storage.Printable(frontier.Redact(warning.String())))
		},
	}
	emit := func(e sitemap.Entry) error {
		out.WriteString(printableURL(frontier.Redact(e.Loc)))
		return out.WriteByte('\n')
	}
	if *asJSON {
		enc := json.NewEncoder(storage.JSONWriter(out)) // no C1 or bidi control raw
		enc.SetEscapeHTML(false)
		emit = func(e sitemap.Entry) error {
			return enc.Encode(sitemapJSON{Loc: frontier.Redact(e.Loc), Lastmod: e.LastmodRaw, ChangeFreq: e.ChangeFreq,
				Priority: e.Priority, Sitemap: frontier.Redact(e.Sitemap)})
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

// printableURL is u with each control character, bidi control, U+2028
// and U+2029 percent-encoded (as a browser would send it): a sitemap's
// <loc> cannot drive the terminal it is printed on (a C1 CSI, U+009B) or
// reorder the line (U+202E), and the line is still the URL.
func printableURL(u string) string {
	if strings.IndexFunc(u, storage.Hazard) < 0 {
		return u
	}
	var b strings.Builder
	for _, r := range u {
		if !storage.Hazard(r) {
			b.WriteRune(r)
			continue
		}
		for _, c := range []byte(string(r)) {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// sitemapJSON is the --json form of one page.
type sitemapJSON struct {
	Loc        string  `json:"loc"`
	Lastmod    string  `json:"lastmod,omitempty"`
	ChangeFreq string  `json:"changefreq,omitempty"`
	Priority   float64 `json:"priority"`
	Sitemap    string  `json:"sitemap"`
}

// sitemapFetcher fetches one sitemap at a time, leaving at least delay
// between the starts of two requests (redirect hops included). Its
// requests are built as a crawl's are; gzip, with Content-Encoding or as
// a .gz file, is undone within the sitemap reader's byte cap.
type sitemapFetcher struct {
	get   *crawler.Getter
	delay time.Duration
	last  time.Time // start of the last request
}

func (f *sitemapFetcher) fetch(ctx context.Context, u string) (io.ReadCloser, string, error) {
	resp, err := f.get.Get(ctx, u, sitemapMaxRedirects, f.wait)
	switch {
	case err != nil && resp.Partial && resp.Status >= 200 && resp.Status <= 299:
		// Cut short (a timeout mid-body): what came is read, then the
		// error is the sitemap's warning.
		return io.NopCloser(io.MultiReader(bytes.NewReader(resp.Body), errReader{err})), resp.URL, nil
	case err != nil:
		return nil, "", err
	case resp.Status >= 300 && resp.Status <= 399:
		return nil, "", fmt.Errorf("stopped after %d redirects", resp.Redirects)
	case resp.Status < 200 || resp.Status > 299:
		return nil, "", fmt.Errorf("HTTP status %d %s", resp.Status, http.StatusText(resp.Status))
	}
	return io.NopCloser(bytes.NewReader(resp.Body)), resp.URL, nil
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

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
