package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/politecrawl/crawler/robots"
)

// FetchRobots fetches the robots.txt of origin ("https://example.com"; a
// path on it is ignored) for `crawler robots`, outside a crawl: with the
// requests a crawl makes (the crawl's one request builder), following up to
// robots.MaxRedirects redirects across hosts (RFC 9309 §2.3.1.2), one
// request at a time and with no delay between them. timeout bounds each
// request.
//
// HTTP statuses, network errors and timeouts are results, in the returned
// Fetch, for robots.Update. The error is for a fetch that could not be
// made: an origin that is not an http or https URL, or ctx done.
func FetchRobots(ctx context.Context, userAgent string, timeout time.Duration, origin string) (robots.Fetch, error) {
	o, err := url.Parse(origin)
	if err != nil || (o.Scheme != "http" && o.Scheme != "https") || o.Host == "" {
		return robots.Fetch{}, fmt.Errorf("robots.txt of %q: not an http or https origin", origin)
	}
	u := &url.URL{Scheme: o.Scheme, Host: o.Host, Path: "/robots.txt"}
	f := newFetcher(userAgent, timeout, robots.MaxSize, 1, time.Now)
	for hop := 0; ; hop++ {
		resp, err := f.get(ctx, request{url: u.String(), robots: true, limit: robots.MaxSize})
		if err != nil && ctx.Err() != nil {
			return robots.Fetch{}, fmt.Errorf("fetch %s: %w", u, ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("fetch %s: timeout: no answer within %s", u, timeout)
		}
		ans, next := robotsAnswer(u, resp, err, time.Now())
		ans.Redirects = hop
		if next == nil || hop == robots.MaxRedirects {
			return ans, nil
		}
		u = next
	}
}
