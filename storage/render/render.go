package render

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// Options configure a Renderer. The zero value of a field means its default.
type Options struct {
	// Browser is the browser's path, as FindBrowser returns it. Required.
	Browser string
	// Tabs is the most pages rendered at once. Default 2.
	Tabs int
	// Timeout bounds one page, from its navigation to its being settled.
	// Default 20s.
	Timeout time.Duration
	// Settle is how long nothing must be in flight and the document
	// unchanged, after the load event, for the page to count as rendered.
	// Default 500ms.
	Settle time.Duration
	// UserAgent is what the page's script sees as navigator.userAgent
	// (the Network sends the requests, with its own).
	UserAgent string
	// RestartEvery starts a new browser after this many pages. Default 200.
	RestartEvery int
	// Log receives the browser's starts and restarts; nil discards.
	Log *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Tabs < 1 {
		o.Tabs = 2
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = 500 * time.Millisecond
	}
	if o.RestartEvery < 1 {
		o.RestartEvery = 200
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// Request is a request the browser made, for the Network to answer.
type Request struct {
	URL    string // without its fragment
	Method string // GET or HEAD
	// Type is what the browser will do with the answer, as the DevTools
	// protocol names it: Document, Stylesheet, Image, Media, Font,
	// Script, XHR, Fetch, Other and so on.
	Type string
	// Header holds the request headers the page's script set or the
	// browser would send (Accept, Referer, and for XHR its own).
	Header http.Header
}

// Response is the Network's answer to a Request. Body is the body as the
// browser should see it: decoded of any Content-Encoding.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Network answers the browser's requests. An error fails the request in
// the browser (the page goes on without it): ErrRefused for one that may
// not be made (robots.txt, scope, scheme), any other for one that got no
// answer. It is called from several goroutines at once.
type Network interface {
	RoundTrip(ctx context.Context, r Request) (*Response, error)
}

// ErrRefused is a Network's error for a request it may not make.
var ErrRefused = errors.New("refused")

// Page is a page the crawl fetched, to render.
type Page struct {
	URL    string
	Status int
	Header http.Header
	Body   []byte // decoded
}

// Result is a rendered page.
type Result struct {
	// HTML is the rendered document, serialised (outerHTML).
	HTML string
	// Routes are the URLs, absolute, the page's script gave
	// history.pushState or history.replaceState, in order (at most 1000).
	Routes []string
	// Requests counts the browser's requests the Network answered or
	// refused, the page's own document not included.
	Requests int
	// Took is the time from navigation to settled.
	Took time.Duration
}

// Renderer renders pages in one headless browser, a few at a time. It is
// safe for concurrent use; Close it when done.
type Renderer struct {
	opts Options
	tabs chan struct{}

	mu     sync.Mutex
	cur    *browser
	closed bool
}

// browser is one browser process and what has been done with it.
type browser struct {
	ctx     context.Context // a chromedp context on which the browser was started
	cancel  context.CancelFunc
	pages   int  // rendered, or being rendered, on it
	users   int  // renders under way on it
	retired bool // no new render starts on it; it stops when users is 0
}

// New returns a Renderer that starts its browser on the first Render.
func New(opts Options) *Renderer {
	opts = opts.withDefaults()
	return &Renderer{opts: opts, tabs: make(chan struct{}, opts.Tabs)}
}

// errClosed is Render's error after Close.
var errClosed = errors.New("renderer closed")

// acquire returns the browser to render the next page on, starting one if
// there is none, the last one died, or it has rendered its share.
func (r *Renderer) acquire() (*browser, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if b := r.cur; b != nil && (b.ctx.Err() != nil || b.pages >= r.opts.RestartEvery) {
		r.retireLocked(b)
	}
	if r.cur == nil {
		b, err := r.start()
		if err != nil {
			return nil, err
		}
		r.cur = b
	}
	b := r.cur
	b.users++
	b.pages++
	return b, nil
}

// release ends a render on b; broken says the browser should not be used
// again (a tab that could not be closed, a browser that stopped answering).
func (r *Renderer) release(b *browser, broken bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b.users--
	if broken && r.cur == b {
		r.retireLocked(b)
	}
	if b.retired && b.users == 0 {
		b.cancel()
	}
}

func (r *Renderer) retireLocked(b *browser) {
	b.retired = true
	if r.cur == b {
		r.cur = nil
	}
	if b.users == 0 {
		b.cancel()
	}
}

// start starts a browser process and waits until it answers.
func (r *Renderer) start() (*browser, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(r.opts.Browser),
		chromedp.DisableGPU,
		// The browser has no network of its own: whatever the
		// interception does not see goes to a proxy that leads
		// nowhere, loopback included.
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		// Every frame stays in its page's process, under the tab's
		// interception.
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,IsolateOrigins,site-per-process,OptimizationHints,MediaRouter"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("renderer-process-limit", strconv.Itoa(r.opts.Tabs+1)),
		chromedp.Flag("js-flags", "--max-old-space-size=512"),
	)
	if r.opts.UserAgent != "" {
		opts = append(opts, chromedp.UserAgent(r.opts.UserAgent))
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	stop := func() { cancel(); allocCancel() }
	select {
	case err := <-started:
		if err != nil {
			stop()
			return nil, err
		}
	case <-time.After(max(r.opts.Timeout, 30*time.Second)):
		stop()
		return nil, errors.New("the browser did not start in time")
	}
	r.opts.Log.Info("browser started", "browser", r.opts.Browser)
	return &browser{ctx: ctx, cancel: stop}, nil
}

// Close stops the browser. Renders under way end with an error.
func (r *Renderer) Close() error {
	r.mu.Lock()
	r.closed = true
	b := r.cur
	r.cur = nil
	r.mu.Unlock()
	if b != nil {
		b.cancel()
	}
	return nil
}
