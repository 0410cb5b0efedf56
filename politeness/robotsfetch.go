package politeness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/crawler/robots"
)

// BeforeRequest is called before each request FetchRobots sends, redirect
// hops included, with the URL about to be fetched (not to be modified). It
// may wait (for the host's turn) or refuse (out of scope); an error stops
// the fetch.
type BeforeRequest func(ctx context.Context, u *url.URL) error

// FetchRobots fetches origin's /robots.txt ("https://example.com" or
// "http://127.0.0.2:8001"; a path on it is ignored) with the given
// User-Agent, for robots.Update. It follows up to robots.MaxRedirects
// redirects itself, across hosts too (RFC 9309 §2.3.1.2), calling before
// (if not nil) ahead of every request; a copy of client is used that does
// not follow them. It reads at most robots.MaxSize bytes of a 2xx body and
// stops there, so a huge body is not downloaded; of other bodies it reads
// no more than 4 KiB, to keep the connection.
//
// HTTP statuses, network errors and the client's own timeout
// (http.Client.Timeout) are results, in the returned Fetch. The error is for
// a fetch that could not be made or was abandoned: an origin that is not an
// http or https URL, a refusal by before, or ctx done (cancelled or past its
// deadline), which says nothing about the host.
func FetchRobots(ctx context.Context, client *http.Client, origin, userAgent string, before BeforeRequest) (robots.Fetch, error) {
	u, err := robotsURL(origin)
	if err != nil {
		return robots.Fetch{}, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for hop := 0; ; hop++ {
		if before != nil {
			if err := before(ctx, u); err != nil {
				return robots.Fetch{}, fmt.Errorf("fetch %s: %w", u, err)
			}
		}
		f, next, err := fetchOnce(ctx, &c, u, userAgent)
		if err != nil {
			return robots.Fetch{}, err
		}
		f.Redirects = hop
		if next == nil || hop == robots.MaxRedirects {
			return f, nil // an answer, or a redirect too many: robots.Update decides
		}
		u = next
	}
}

// robotsURL is origin's /robots.txt.
func robotsURL(origin string) (*url.URL, error) {
	o, err := url.Parse(origin)
	if err != nil {
		return nil, fmt.Errorf("robots.txt of %q: %w", origin, err)
	}
	if o.Scheme != "http" && o.Scheme != "https" || o.Host == "" {
		return nil, fmt.Errorf("robots.txt of %q: not an http or https origin", origin)
	}
	return &url.URL{Scheme: o.Scheme, Host: o.Host, Path: "/robots.txt"}, nil
}

// fetchOnce sends one request. It returns the redirect target when the
// response is a redirect with a usable Location.
func fetchOnce(ctx context.Context, c *http.Client, u *url.URL, userAgent string) (robots.Fetch, *url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return robots.Fetch{}, nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	req.Body = NoReplay() // one request, as the gate counted it
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	req.Header.Set("Accept", "text/plain, */*;q=0.5")
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return robots.Fetch{}, nil, fmt.Errorf("fetch %s: %w", u, ctx.Err())
		}
		return robots.Fetch{Err: err}, nil, nil
	}
	defer func() {
		// Drain a little, so that a short body does not cost the connection.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
	}()
	f := robots.Fetch{Status: resp.StatusCode}
	f.MaxAge, f.HasMaxAge = maxAge(resp.Header)
	switch {
	case isRedirect(resp.StatusCode):
		next, err := resp.Location()
		if err != nil {
			return f, nil, nil // a redirect to nowhere: unreachable
		}
		return f, next, nil
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		f.Body, err = io.ReadAll(io.LimitReader(resp.Body, robots.MaxSize))
		if err != nil {
			if ctx.Err() != nil {
				return robots.Fetch{}, nil, fmt.Errorf("fetch %s: %w", u, ctx.Err())
			}
			return robots.Fetch{Err: fmt.Errorf("read %s: %w", u, err)}, nil, nil
		}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		now := time.Now()
		if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			now = d // an HTTP-date Retry-After is on the server's clock
		}
		f.RetryAfter, _ = ParseRetryAfter(resp.Header.Get("Retry-After"), now)
	}
	return f, nil, nil
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// maxAge reads the max-age of a Cache-Control header (RFC 9111 §5.2.2.1);
// no-store and no-cache count as max-age=0.
func maxAge(h http.Header) (time.Duration, bool) {
	var d time.Duration
	found := false
	for _, v := range h.Values("Cache-Control") {
		for dir := range strings.SplitSeq(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(name) {
			case "no-store", "no-cache":
				return 0, true
			case "max-age":
				secs, err := strconv.ParseInt(strings.Trim(arg, `"`), 10, 64)
				if errors.Is(err, strconv.ErrRange) && secs > 0 {
					err = nil // RFC 9111 §1.2.2: too large is the largest
				}
				if err != nil || secs < 0 {
					continue
				}
				d = time.Duration(min(secs, int64(robots.CacheMax/time.Second))) * time.Second
				found = true
			}
		}
	}
	return d, found
}
