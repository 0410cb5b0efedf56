package render

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// browserOrSkip returns the browser the tests run, or skips: they need
// Debian's chromium (or any Chromium or Chrome in PATH).
func browserOrSkip(t *testing.T) string {
	t.Helper()
	path, err := FindBrowser("")
	if err != nil {
		t.Skipf("no browser (%v): install Debian's chromium to run the rendering tests", err)
	}
	return path
}

// fakeNet answers the browser's requests from a map of bodies, noting each
// request; a path in refuse is refused, one in hang never answers.
type fakeNet struct {
	mu     sync.Mutex
	bodies map[string]string // path to body
	types  map[string]string // path to Content-Type
	refuse map[string]bool
	hang   map[string]bool
	asked  []string
}

func (n *fakeNet) RoundTrip(ctx context.Context, r Request) (*Response, error) {
	path := r.URL[strings.Index(r.URL[len("http://"):], "/")+len("http://"):]
	n.mu.Lock()
	n.asked = append(n.asked, path)
	body, ok := n.bodies[path]
	ctype, refuse, hang := n.types[path], n.refuse[path], n.hang[path]
	n.mu.Unlock()
	switch {
	case refuse:
		return nil, fmt.Errorf("%w: robots.txt", ErrRefused)
	case hang:
		<-ctx.Done()
		return nil, ctx.Err()
	case !ok:
		return &Response{Status: 404, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("not found")}, nil
	}
	if ctype == "" {
		ctype = "text/html; charset=utf-8"
	}
	return &Response{Status: 200, Header: http.Header{"Content-Type": {ctype}}, Body: []byte(body)}, nil
}

func (n *fakeNet) askedFor() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.asked)
}

const spaShell = `<!doctype html><html><head><title>shell</title><script src="/app.js"></script></head>
<body><nav id="nav"></nav><p id="late"></p></body></html>`

const spaScript = `
fetch('/api/menu.json').then(r => r.json()).then(menu => {
	const nav = document.getElementById('nav');
	for (const item of menu) {
		const a = document.createElement('a');
		a.href = item.href; a.textContent = item.title;
		nav.appendChild(a);
	}
	history.pushState({}, '', '/route/settings');
});
fetch('/private/secret.json').catch(() => {});
setTimeout(() => {
	const a = document.createElement('a');
	a.href = '/added-later';
	document.getElementById('late').appendChild(a);
}, 300);
setTimeout(() => {
	const a = document.createElement('a');
	a.href = '/added-much-later';
	document.getElementById('late').appendChild(a);
}, 3000);
const carousel = () => setTimeout(carousel, 100); // set again from its callback: does not hold the page
carousel();
`

// A script-built page renders whole: links from a JSON API, a pushState
// route, a link added after a delay; its requests go to the Network, a
// refused one fails in the browser, and nothing reaches a server directly.
func TestRenderScriptBuiltPage(t *testing.T) {
	direct := 0
	var dmu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dmu.Lock()
		direct++
		dmu.Unlock()
	}))
	defer srv.Close()
	n := &fakeNet{
		bodies: map[string]string{
			"/app.js":        spaScript + "\nfetch('" + srv.URL + "/escape').catch(() => {});",
			"/api/menu.json": `[{"href": "/docs/", "title": "Docs"}, {"href": "/blog/post-1", "title": "Post"}]`,
		},
		types:  map[string]string{"/app.js": "application/javascript", "/api/menu.json": "application/json"},
		refuse: map[string]bool{"/private/secret.json": true},
	}
	r := New(Options{Browser: browserOrSkip(t), Timeout: 30 * time.Second, Settle: 500 * time.Millisecond})
	defer r.Close()
	res, err := r.Render(context.Background(), Page{
		URL: "http://spa.test/", Status: 200,
		Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: []byte(spaShell),
	}, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered in %v, %d requests", res.Took, res.Requests)
	for _, want := range []string{`href="/docs/"`, `href="/blog/post-1"`, `href="/added-later"`, `href="/added-much-later"`} {
		if !strings.Contains(res.HTML, want) {
			t.Errorf("rendered page lacks %s:\n%s", want, res.HTML)
		}
	}
	if !slices.Contains(res.Routes, "http://spa.test/route/settings") {
		t.Errorf("routes %v, want the pushState route", res.Routes)
	}
	asked := n.askedFor()
	for _, want := range []string{"/app.js", "/api/menu.json", "/private/secret.json", "/escape"} {
		if !slices.Contains(asked, want) {
			t.Errorf("the Network was not asked for %s: %v", want, asked)
		}
	}
	if slices.Contains(asked, "/") {
		t.Errorf("the page itself was asked of the Network: %v", asked)
	}
	dmu.Lock()
	defer dmu.Unlock()
	if direct != 0 {
		t.Errorf("the browser reached a server by itself %d times", direct)
	}
}

// A script that never yields, and a page whose load never ends, are errors
// within the timeout, and the renderer goes on rendering after them.
func TestRenderHungPages(t *testing.T) {
	n := &fakeNet{
		bodies: map[string]string{"/spin.js": "while (true) {}"},
		types:  map[string]string{"/spin.js": "application/javascript"},
		hang:   map[string]bool{"/never.png": true},
	}
	r := New(Options{Browser: browserOrSkip(t), Timeout: 3 * time.Second, Settle: 200 * time.Millisecond})
	defer r.Close()
	html := http.Header{"Content-Type": {"text/html"}}
	for _, body := range []string{
		`<html><body><a href="/x">x</a><script src="/spin.js"></script></body></html>`,
		`<html><body><img src="/never.png"></body></html>`,
	} {
		start := time.Now()
		_, err := r.Render(context.Background(), Page{URL: "http://hung.test/", Status: 200, Header: html, Body: []byte(body)}, n)
		if err == nil {
			t.Errorf("%s: rendered, want an error", body)
		}
		if took := time.Since(start); took > time.Minute {
			t.Errorf("%s: took %v", body, took)
		}
	}
	res, err := r.Render(context.Background(), Page{URL: "http://ok.test/", Status: 200, Header: html, Body: []byte(`<a href="/fine">fine</a>`)}, n)
	if err != nil || !strings.Contains(res.HTML, `href="/fine"`) {
		t.Errorf("a page after the hung ones: %v, %v", res, err)
	}
}
