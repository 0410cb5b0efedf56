package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// runCmd runs the binary's run with args and stdin; it returns stdout,
// stderr and the exit code.
func runCmd(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	code := exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const cmdRobots = "User-agent: *\nDisallow: /private/\n\nUser-agent: ExampleBot\nDisallow: /drafts/\nAllow: /drafts/public$\n"

func TestRobotsFileArgs(t *testing.T) {
	file := writeFile(t, "robots.txt", cmdRobots)
	out, errOut, code := runCmd(t, "", "robots", "--agent", "ExampleBot/1.0 (+https://example.com/bot)", "--file", file,
		"https://example.com/drafts/a", "https://example.com/private/b", "/drafts/public", "https://example.com/robots.txt", "")
	want := "disallowed\thttps://example.com/drafts/a\nallowed\thttps://example.com/private/b\n" +
		"allowed\t/drafts/public\nallowed\thttps://example.com/robots.txt\nallowed\t\n"
	if out != want || code != 0 || errOut != "" {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", code, out, want, errOut)
	}
	// Flags after the URLs, and single dashes, as wget allows.
	out, _, code = runCmd(t, "", "robots", "https://example.com/private/b", "-agent", "OtherBot", "-file", file)
	if out != "disallowed\thttps://example.com/private/b\n" || code != 0 {
		t.Errorf("flags after URL: exit %d, %q", code, out)
	}
}

func TestRobotsStdin(t *testing.T) {
	file := writeFile(t, "robots.txt", cmdRobots)
	in := "https://example.com/private/a\r\n\n   https://example.com/b  \r\n\t\nhttps://example.com/private/c"
	out, _, code := runCmd(t, in, "robots", "--agent", "OtherBot", "--file", file)
	want := "disallowed\thttps://example.com/private/a\nallowed\thttps://example.com/b\ndisallowed\thttps://example.com/private/c\n"
	if out != want || code != 0 {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
	}

	// Many URLs keep their order.
	var b, w strings.Builder
	for i := range 20000 {
		u := fmt.Sprintf("https://example.com/%s/%d", []string{"private", "public"}[i%2], i)
		b.WriteString(u + "\n")
		w.WriteString([]string{"disallowed\t", "allowed\t"}[i%2] + u + "\n")
	}
	out, _, code = runCmd(t, b.String(), "robots", "--agent", "OtherBot", "--file", file)
	if out != w.String() || code != 0 {
		t.Errorf("20000 URLs from stdin: exit %d, %d bytes out, want %d", code, len(out), w.Len())
	}
}

// TestRobotsOddInput: lines that are not URLs get a verdict in their turn,
// as Google's library gives one (for the path "/"), and the stream goes on;
// a non-ASCII space is part of a URL, not white space to trim.
func TestRobotsOddInput(t *testing.T) {
	file := writeFile(t, "robots.txt", "User-agent: *\nDisallow: /\nAllow: /ok\nAllow: /*%C2%A0$\n")
	in := "not a url\n::::\nhttps://example.com/ok\nhttp://[::1\n%zz\nhttps://example.com/x\u00a0\n"
	out, errOut, code := runCmd(t, in, "robots", "--agent", "FooBot", "--file", file)
	want := "disallowed\tnot a url\ndisallowed\t::::\nallowed\thttps://example.com/ok\ndisallowed\thttp://[::1\n" +
		"disallowed\t%zz\nallowed\thttps://example.com/x\u00a0\n"
	if out != want || code != 0 || errOut != "" {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", code, out, want, errOut)
	}
	// An empty agent is compared as Google's library compares it.
	file = writeFile(t, "robots.txt", "User-agent: *\nAllow: /\n\nUser-agent:\nDisallow: /\n")
	out, _, code = runCmd(t, "", "robots", "--agent", "", "--file", file, "https://example.com/a")
	if out != "disallowed\thttps://example.com/a\n" || code != 0 {
		t.Errorf("empty agent: exit %d, %q", code, out)
	}
}

func TestRobotsUsage(t *testing.T) {
	file := writeFile(t, "robots.txt", cmdRobots)
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no agent", []string{"robots", "--file", file, "https://example.com/"}, 2, "--agent is required"},
		{"bad flag", []string{"robots", "--agent", "x", "--nope"}, 2, "nope"},
		{"bad timeout", []string{"robots", "--agent", "x", "--timeout", "-1s", "https://example.com/"}, 2, "--timeout"},
		{"missing file", []string{"robots", "--agent", "x", "--file", filepath.Join(t.TempDir(), "none.txt"), "https://example.com/"}, 1, "read --file"},
		{"directory as file", []string{"robots", "--agent", "x", "--file", t.TempDir(), "https://example.com/"}, 1, "read --file"},
		{"help", []string{"robots", "-h"}, 0, ""},
	} {
		out, errOut, code := runCmd(t, "", c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q", c.name, code, errOut, c.code, c.msg)
		}
		if c.code != 0 && out != "" {
			t.Errorf("%s: stdout %q", c.name, out)
		}
	}
}

func TestRobotsBigFile(t *testing.T) {
	body := "User-agent: *\nDisallow: /a\n" + strings.Repeat("# padding\n", 60000) + "Disallow: /b\n"
	file := writeFile(t, "robots.txt", body)
	out, errOut, code := runCmd(t, "", "robots", "--agent", "x", "--file", file, "http://e.com/a", "http://e.com/b")
	if out != "disallowed\thttp://e.com/a\nallowed\thttp://e.com/b\n" || code != 0 || !strings.Contains(errOut, "500 KiB") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestRobotsFetch runs the command without --file against servers that
// script every answer a robots.txt fetch can get.
func TestRobotsFetch(t *testing.T) {
	const rules = "User-agent: *\nDisallow: /private/\n"
	type server struct {
		name     string
		handler  http.HandlerFunc
		private  string // verdict for /private/x
		public   string // verdict for /public
		note     string // on stderr
		requests int64  // robots.txt requests expected (redirects included)
	}
	redirects := func(n int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			hop := 0
			fmt.Sscanf(r.URL.Query().Get("hop"), "%d", &hop)
			if hop < n {
				http.Redirect(w, r, fmt.Sprintf("/robots.txt?hop=%d", hop+1), http.StatusFound)
				return
			}
			fmt.Fprint(w, rules)
		}
	}
	servers := []server{
		{"200", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, rules) }, "disallowed", "allowed", "", 1},
		{"5 redirects", redirects(5), "disallowed", "allowed", "", 6},
		{"6 redirects", redirects(6), "allowed", "allowed", "after 5 redirects", 6},
		{"404", http.NotFound, "allowed", "allowed", "status 404: no robots.txt", 1},
		{"403", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }, "allowed", "allowed", "status 403", 1},
		{"429", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) }, "disallowed", "disallowed", "status 429: unreachable", 1},
		{"503", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }, "disallowed", "disallowed", "status 503: unreachable", 1},
		{"over 500 KiB", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, rules+strings.Repeat("# padding\n", 60000)+"Disallow: /public\n")
		}, "disallowed", "allowed", "", 1},
	}
	var urls, want []string
	counts := make([]atomic.Int64, len(servers))
	for i, s := range servers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/robots.txt" {
				t.Errorf("%s: request for %s", s.name, r.URL)
			}
			if ua := r.Header.Get("User-Agent"); ua != "ExampleBot/1.0" {
				t.Errorf("%s: User-Agent %q", s.name, ua)
			}
			counts[i].Add(1)
			s.handler(w, r)
		}))
		defer srv.Close()
		// Each origin twice, interleaved with the others: fetched once.
		for _, p := range []string{"/private/x", "/public", "/robots.txt"} {
			urls = append(urls, srv.URL+p)
		}
		want = append(want, s.private+"\t"+srv.URL+"/private/x", s.public+"\t"+srv.URL+"/public", "allowed\t"+srv.URL+"/robots.txt")
	}
	args := append([]string{"robots", "--agent", "ExampleBot/1.0"}, urls...)
	out, errOut, code := runCmd(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	for i, s := range servers {
		if n := counts[i].Load(); n != s.requests {
			t.Errorf("%s: %d robots.txt requests, want %d", s.name, n, s.requests)
		}
		if s.note != "" && !strings.Contains(errOut, s.note) {
			t.Errorf("%s: stderr lacks %q:\n%s", s.name, s.note, errOut)
		}
	}
}

// TestRobotsFetchTimeout: a robots.txt that does not come in --timeout is
// unreachable, so everything is disallowed.
func TestRobotsFetchTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	out, errOut, code := runCmd(t, "", "robots", "--agent", "ExampleBot", "--timeout", "50ms", srv.URL+"/a", srv.URL+"/robots.txt")
	if out != "disallowed\t"+srv.URL+"/a\nallowed\t"+srv.URL+"/robots.txt\n" || code != 0 || !strings.Contains(errOut, "timeout after 50ms") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestRobotsFetchNoOrigin(t *testing.T) {
	out, errOut, code := runCmd(t, "/just/a/path\nftp://example.com/x\n", "robots", "--agent", "ExampleBot")
	if out != "disallowed\t/just/a/path\ndisallowed\tftp://example.com/x\n" || code != 1 || !strings.Contains(errOut, "2 URLs have no http or https origin") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestOriginOf(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://Example.COM/a", "http://example.com"},
		{"HTTP://example.com:80/a", "http://example.com"},
		{"https://example.com:443", "https://example.com"},
		{"https://example.com:8443/x?y", "https://example.com:8443"},
		{"http://127.0.0.2:8001/", "http://127.0.0.2:8001"},
		{"http://[::1]:80/", "http://[::1]"},
		{"example.com/a", ""},
		{"mailto:a@b.c", ""},
		{"http:///a", ""},
	} {
		got, ok := originOf(c.url)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("originOf(%q) = %q, %v; want %q", c.url, got, ok, c.want)
		}
	}
}
