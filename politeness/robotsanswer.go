package politeness

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/crawler/robots"
)

// RobotsAnswer is what one answer to a request for robots.txt says, for
// robots.Update: its status, the body of a 2xx (cut at robots.MaxSize), its
// Cache-Control max-age and, on a 429 or 503, how long its Retry-After asks
// to wait (an HTTP date is read on the server's clock, its Date header,
// else on now). Redirects are the caller's to follow and count.
func RobotsAnswer(status int, h http.Header, body []byte, now time.Time) robots.Fetch {
	f := robots.Fetch{Status: status}
	f.MaxAge, f.HasMaxAge = maxAge(h)
	switch {
	case status >= 200 && status <= 299:
		f.Body = body[:min(len(body), robots.MaxSize)]
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		if d, err := http.ParseTime(h.Get("Date")); err == nil {
			now = d
		}
		f.RetryAfter, _ = ParseRetryAfter(h.Get("Retry-After"), now)
	}
	return f
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
