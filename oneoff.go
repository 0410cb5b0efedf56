package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/politecrawl/crawler/robots"
)

// Requests outside a crawl, for the diagnostic commands (crawler robots,
// crawler sitemap): built by the crawl's one request builder (fetcher),
// one at a time, following redirects across hosts, with no politeness but
// what the caller's before hook adds.

// Getter makes GET requests outside a crawl. Make one with NewGetter; it
// is safe for concurrent use.
type Getter struct {
	f       *fetcher
	timeout time.Duration
}

// NewGetter returns a Getter that sends userAgent, gives each request at
// most timeout, body included, and reads at most maxBody bytes of a body
// (after undoing gzip or deflate; more is cut).
func NewGetter(userAgent string, timeout time.Duration, maxBody int64) *Getter {
	return &Getter{f: newFetcher(userAgent, timeout, maxBody, 1, time.Now, nil), timeout: timeout}
}

// Response is an answer to a Getter's request.
type Response struct {
	Status    int
	URL       string // the URL that answered, after redirects
	Redirects int    // redirects followed
	Body      []byte
	Truncated bool // the body was cut at maxBody
	Partial   bool // the body was cut short by the error Get returned
}

// Get fetches rawURL, following up to maxRedirects redirects; before, if
// not nil, is called ahead of every request (the first and each hop), to
// space them or refuse one. Statuses are results: a redirect that is one
// too many is returned as it is. The error is for no answer, or no whole
// one: a network error, a timeout ("timeout after …"), a body in an
// encoding that could not be undone, or ctx done; the Response then holds
// what was read of the body, if anything.
func (g *Getter) Get(ctx context.Context, rawURL string, maxRedirects int, before func(context.Context) error) (Response, error) {
	resp, u, hops, err := g.follow(ctx, request{url: rawURL}, maxRedirects, before)
	var out Response
	if resp != nil {
		out = Response{Status: resp.status, URL: u.String(), Redirects: hops, Body: resp.body,
			Truncated: resp.truncated, Partial: err != nil}
		if err == nil && resp.undecoded != "" {
			err = fmt.Errorf("unsupported Content-Encoding %q", resp.undecoded)
		}
	}
	return out, err
}

// follow makes r and follows its redirects, up to maxRedirects, returning
// the last answer, its URL and how many redirects led to it. With an error,
// the answer is what was read of it, or nil.
func (g *Getter) follow(ctx context.Context, r request, maxRedirects int, before func(context.Context) error) (*response, *url.URL, int, error) {
	u, err := url.Parse(r.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, 0, fmt.Errorf("%q is not an http or https URL", r.url)
	}
	for hop := 0; ; hop++ {
		if before != nil {
			if err := before(ctx); err != nil {
				return nil, u, hop, err
			}
		}
		r.url = u.String()
		resp, err := g.f.get(ctx, r)
		switch {
		case err != nil && ctx.Err() != nil:
			return resp, u, hop, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			return resp, u, hop, fmt.Errorf("timeout after %s", g.timeout)
		case err != nil:
			return resp, u, hop, err
		}
		next := redirectTarget(u, resp)
		if next == nil || hop == maxRedirects {
			return resp, u, hop, nil
		}
		u = next
	}
}

// redirectTarget is where a redirect answer to a request for u points,
// or nil when it is no redirect or points nowhere an http client can go.
func redirectTarget(u *url.URL, resp *response) *url.URL {
	if !isRedirect(resp.status) {
		return nil
	}
	loc := resp.header.Get("Location")
	next, err := u.Parse(loc)
	if loc == "" || err != nil || (next.Scheme != "http" && next.Scheme != "https") {
		return nil
	}
	return next
}

// FetchRobots fetches the robots.txt of origin ("https://example.com"; a
// path on it is ignored) for `crawler robots`, following up to
// robots.MaxRedirects redirects (RFC 9309 §2.3.1.2). timeout bounds each
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
	g := NewGetter(userAgent, timeout, robots.MaxSize)
	resp, last, hops, err := g.follow(ctx, request{url: u.String(), robots: true, limit: robots.MaxSize}, robots.MaxRedirects, nil)
	if err != nil {
		err = fmt.Errorf("fetch %s: %w", last, err)
		if ctx.Err() != nil {
			return robots.Fetch{}, err
		}
		return robots.Fetch{Err: err, Redirects: hops}, nil
	}
	f := robotsAnswer(resp, nil, time.Now())
	f.Redirects = hops
	return f, nil
}
