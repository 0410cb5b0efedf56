package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/crawler/robots"
)

// robotsServer scripts /robots.txt answers by path.
func robotsServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchRobotsAnswers(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		want    robots.Fetch
		result  robots.Result
	}{
		{"200", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "public, max-age=3600")
			fmt.Fprint(w, "User-agent: *\nDisallow: /x\n")
		}, robots.Fetch{Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"), HasMaxAge: true, MaxAge: time.Hour}, robots.ResultOK},
		{"200 no-store", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, "x")
		}, robots.Fetch{Status: 200, Body: []byte("x"), HasMaxAge: true}, robots.ResultOK},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			robots.Fetch{Status: 404}, robots.ResultMissing},
		{"403", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) },
			robots.Fetch{Status: 403}, robots.ResultMissing},
		{"429", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(429)
		}, robots.Fetch{Status: 429, RetryAfter: 2 * time.Minute}, robots.ResultUnreachable},
		{"503 date", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", "Sun, 01 Mar 2026 12:00:00 GMT")
			w.Header().Set("Retry-After", "Sun, 01 Mar 2026 12:10:00 GMT")
			w.WriteHeader(503)
		}, robots.Fetch{Status: 503, RetryAfter: 10 * time.Minute}, robots.ResultUnreachable},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) },
			robots.Fetch{Status: 500}, robots.ResultUnreachable},
		{"302 without Location", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(302) },
			robots.Fetch{Status: 302}, robots.ResultMissing}, // a redirect that cannot be followed: unavailable
	} {
		t.Run(c.name, func(t *testing.T) {
			var ua, path atomic.Value
			srv := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				ua.Store(r.Header.Get("User-Agent"))
				path.Store(r.URL.Path)
				c.handler(w, r)
			})
			f, err := FetchRobots(context.Background(), "ExampleBot/1.0", time.Minute, srv.URL+"/some/page?x=1")
			if err != nil {
				t.Fatal(err)
			}
			if f.Status != c.want.Status || string(f.Body) != string(c.want.Body) || f.Err != nil ||
				f.HasMaxAge != c.want.HasMaxAge || f.MaxAge != c.want.MaxAge || f.RetryAfter != c.want.RetryAfter {
				t.Errorf("got %+v, want %+v", f, c.want)
			}
			if got := robots.Classify(f); got != c.result {
				t.Errorf("result %s, want %s", got, c.result)
			}
			if ua.Load() != "ExampleBot/1.0" || path.Load() != "/robots.txt" {
				t.Errorf("requested %v as %v", path.Load(), ua.Load())
			}
		})
	}
}

// chainServer redirects /robots.txt through n hops, alternating relative
// and absolute Locations, then answers 200.
func chainServer(t *testing.T, n int, seen *[]string) *httptest.Server {
	var srv *httptest.Server
	srv = robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r.URL.RequestURI())
		hop := 0
		fmt.Sscanf(r.URL.Query().Get("hop"), "%d", &hop)
		if hop < n {
			loc := fmt.Sprintf("/robots.txt?hop=%d", hop+1)
			if hop%2 == 1 {
				loc = srv.URL + loc
			}
			http.Redirect(w, r, loc, []int{301, 302, 303, 307, 308}[hop%5])
			return
		}
		fmt.Fprint(w, "User-agent: *\nDisallow: /\n")
	})
	return srv
}

func TestFetchRobotsRedirects(t *testing.T) {
	for _, c := range []struct {
		hops     int
		status   int
		redirect int
		result   robots.Result
	}{
		{0, 200, 0, robots.ResultOK},
		{1, 200, 1, robots.ResultOK},
		{5, 200, 5, robots.ResultOK},
		{6, 301, 5, robots.ResultMissing},
		{50, 301, 5, robots.ResultMissing},
	} {
		var seen []string
		srv := chainServer(t, c.hops, &seen)
		f, err := FetchRobots(context.Background(), "ExampleBot", time.Minute, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if f.Status != c.status || f.Redirects != c.redirect || robots.Classify(f) != c.result {
			t.Errorf("%d hops: status %d after %d redirects (%s), want %d after %d (%s)",
				c.hops, f.Status, f.Redirects, robots.Classify(f), c.status, c.redirect, c.result)
		}
		if len(seen) != c.redirect+1 || seen[0] != "/robots.txt" {
			t.Errorf("%d hops: the server saw %q", c.hops, seen)
		}
	}
}

func TestFetchRobotsCrossHostRedirect(t *testing.T) {
	var hosts []string
	target := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		fmt.Fprint(w, "User-agent: *\nDisallow: /moved\n")
	})
	origin := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		http.Redirect(w, r, target.URL+"/elsewhere.txt", http.StatusMovedPermanently)
	})
	f, err := FetchRobots(context.Background(), "ExampleBot", time.Minute, origin.URL)
	if err != nil || f.Status != 200 || f.Redirects != 1 || !strings.Contains(string(f.Body), "/moved") {
		t.Fatalf("got %+v, %v", f, err)
	}
	if want := []string{strings.TrimPrefix(origin.URL, "http://"), strings.TrimPrefix(target.URL, "http://")}; fmt.Sprint(hosts) != fmt.Sprint(want) {
		t.Errorf("hops %q, want %q", hosts, want)
	}
}

// TestFetchRobotsBigBody checks that no more than MaxSize bytes are read,
// and that the server is not made to send the whole of a huge body.
func TestFetchRobotsBigBody(t *testing.T) {
	const huge = 256 << 20
	var written atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	srv := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		defer wg.Done()
		w.Header().Set("Content-Length", fmt.Sprint(huge))
		chunk := []byte(strings.Repeat("Disallow: /a\n", 5000))
		for written.Load() < huge {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	f, err := FetchRobots(context.Background(), "ExampleBot", time.Minute, srv.URL)
	if err != nil || f.Status != 200 || len(f.Body) != robots.MaxSize {
		t.Fatalf("got status %d, %d bytes, %v", f.Status, len(f.Body), err)
	}
	wg.Wait()
	if written.Load() >= huge {
		t.Errorf("the server sent all %d bytes", written.Load())
	}
}

func TestFetchRobotsTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	f, err := FetchRobots(context.Background(), "ExampleBot", 50*time.Millisecond, srv.URL)
	if err != nil || f.Err == nil || robots.Classify(f) != robots.ResultUnreachable {
		t.Errorf("timeout: got %+v, %v", f, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FetchRobots(ctx, "ExampleBot", time.Minute, srv.URL); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	// A server that is not there: a result, not an error.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	if f, err := FetchRobots(context.Background(), "ExampleBot", time.Minute, dead.URL); err != nil || f.Err == nil {
		t.Errorf("refused connection: got %+v, %v", f, err)
	}
}

func TestFetchRobotsBadOrigin(t *testing.T) {
	for _, o := range []string{"", "example.com", "ftp://example.com", "http://", "://x", "mailto:a@b"} {
		if _, err := FetchRobots(context.Background(), "ExampleBot", time.Minute, o); err == nil {
			t.Errorf("origin %q: no error", o)
		}
	}
}
