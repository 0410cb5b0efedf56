package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Render renders p in a tab of the browser, every request of the page
// answered by net, and returns the rendered document within
// Options.Timeout. ctx ending stops it.
func (r *Renderer) Render(ctx context.Context, p Page, net Network) (*Result, error) {
	select {
	case r.tabs <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.tabs }()
	b, err := r.acquire()
	if err != nil {
		return nil, fmt.Errorf("start the browser: %w", err)
	}
	tabCtx, closeTab := chromedp.NewContext(b.ctx)
	stopWithCaller := context.AfterFunc(ctx, closeTab)
	defer stopWithCaller()
	t := &tab{opts: r.opts, page: p, net: net, ctx: tabCtx, start: time.Now()}
	done := make(chan struct{})
	var (
		res  *Result
		rerr error
	)
	go func() {
		defer close(done)
		res, rerr = t.render(ctx)
	}()
	timer := time.NewTimer(r.opts.Timeout)
	defer timer.Stop()
	finished := false
	select {
	case <-done:
		finished = true
		err = rerr
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("not rendered within render.timeout (%v)", r.opts.Timeout)
	}
	closeTab() // ends the tab's commands and requests, and closes it
	broken := false
	if !finished {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			// The tab does not let go (a script that never yields
			// holds its renderer): the browser is restarted rather
			// than trusted.
			broken = true
		}
	}
	if !waitTimeout(&t.serveWait, 5*time.Second) {
		broken = true // a Network call that does not end: not ours to wait for longer
	}
	if t.crashed.Load() {
		broken = true
	}
	r.release(b, broken)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// waitTimeout waits for wg at most d, and reports whether it ended.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
		return true
	case <-time.After(d):
		return false
	}
}

// tab is one page being rendered.
type tab struct {
	opts  Options
	page  Page
	net   Network
	ctx   context.Context // the tab's chromedp context
	start time.Time

	inFlight  atomic.Int64 // requests paused and not yet answered
	requests  atomic.Int64
	crashed   atomic.Bool
	mu        sync.Mutex
	lastDone  time.Time // when the last request was answered
	served    bool      // the page's own document was served
	serveWait sync.WaitGroup
}

// errCrashed is a render's error when its tab crashed.
var errCrashed = errors.New("the tab crashed")

func (t *tab) render(ctx context.Context) (*Result, error) {
	// Open the tab and subscribe before anything can happen in it.
	if err := chromedp.Do(t.ctx); err != nil {
		return nil, err
	}
	paused := chromedp.Events(t.ctx, fetch.RequestPaused)
	loads := chromedp.Events(t.ctx, page.LoadEventFired)
	crashes := chromedp.Events(t.ctx, inspector.TargetCrashed)
	call := func(f func(ctx context.Context, s cdp.Session) error) error {
		return chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error { return f(ctx, tgt) }))
	}
	err := call(func(ctx context.Context, s cdp.Session) error {
		if _, err := cdp.Call(ctx, s, fetch.Enable, fetch.EnableParams{
			Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}},
		}); err != nil {
			return fmt.Errorf("intercept requests: %w", err)
		}
		if _, err := cdp.Call(ctx, s, page.Enable, page.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, s, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: pageScript})
		return err
	})
	if err != nil {
		return nil, err
	}
	t.serveWait.Add(1) // the loop itself, so that its Adds never come at a count of 0
	go func() {
		defer t.serveWait.Done()
		for ev, err := range paused {
			if err != nil {
				return
			}
			t.inFlight.Add(1)
			t.serveWait.Add(1)
			go t.serve(call, &ev)
		}
	}()
	crashed := make(chan struct{})
	go func() {
		for _, err := range crashes {
			if err != nil {
				return
			}
			t.crashed.Store(true)
			close(crashed)
			return
		}
	}()
	loaded := make(chan struct{})
	go func() {
		for _, err := range loads {
			if err == nil {
				close(loaded)
			}
			return
		}
	}()
	var nav page.NavigateResult
	err = call(func(ctx context.Context, s cdp.Session) (err error) {
		nav, err = cdp.Call(ctx, s, page.Navigate, page.NavigateParams{URL: t.page.URL})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("navigate: %w", err)
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("navigate: %s", nav.ErrorText)
	}
	select {
	case <-loaded:
	case <-crashed:
		return nil, errCrashed
	case <-t.ctx.Done():
		return nil, t.ctx.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := t.settle(ctx, crashed); err != nil {
		return nil, err
	}
	out, err := chromedp.Run(t.ctx, chromedp.Evaluate[string](resultExpr))
	if err != nil {
		return nil, fmt.Errorf("read the rendered page: %w", err)
	}
	var got struct {
		HTML   string   `json:"html"`
		Routes []string `json:"routes"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		return nil, fmt.Errorf("read the rendered page: %w", err)
	}
	return &Result{HTML: got.HTML, Routes: got.Routes, Requests: int(t.requests.Load()), Took: time.Since(t.start)}, nil
}

// settle waits until no request has been in flight, and the document has
// not changed, for Options.Settle.
func (t *tab) settle(ctx context.Context, crashed <-chan struct{}) error {
	tick := time.NewTicker(min(t.opts.Settle/4, 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-crashed:
			return errCrashed
		case <-t.ctx.Done():
			return t.ctx.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
		if t.inFlight.Load() > 0 {
			continue
		}
		t.mu.Lock()
		idle := time.Since(t.lastDone)
		if t.lastDone.IsZero() {
			idle = time.Since(t.start)
		}
		t.mu.Unlock()
		if idle < t.opts.Settle {
			continue
		}
		quiet, err := chromedp.Run(t.ctx, chromedp.Evaluate[float64](quietExpr))
		if err != nil {
			return fmt.Errorf("watch the page: %w", err)
		}
		if time.Duration(quiet)*time.Millisecond >= t.opts.Settle && t.inFlight.Load() == 0 {
			return nil
		}
	}
}

// serve answers one paused request: the page's own document from the
// body fetched, anything else through the Network; always answered.
func (t *tab) serve(call func(func(context.Context, cdp.Session) error) error, ev *fetch.EventRequestPaused) {
	defer func() {
		t.mu.Lock()
		t.lastDone = time.Now()
		t.mu.Unlock()
		t.inFlight.Add(-1)
		t.serveWait.Done()
	}()
	resp, err := t.answer(ev)
	fail := func(reason network.ErrorReason) {
		call(func(ctx context.Context, s cdp.Session) error {
			_, err := cdp.Call(ctx, s, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: reason})
			return err
		})
	}
	switch {
	case errors.Is(err, ErrRefused):
		fail(network.ErrorReasonBlockedByClient)
		return
	case err != nil:
		fail(network.ErrorReasonFailed)
		return
	}
	status := resp.Status
	if status < 100 || status > 599 {
		status = 502
	}
	call(func(ctx context.Context, s cdp.Session) error {
		_, err := cdp.Call(ctx, s, fetch.FulfillRequest, fetch.FulfillRequestParams{
			RequestID: ev.RequestID, ResponseCode: int64(status),
			ResponseHeaders: headerEntries(resp.Header), Body: resp.Body,
		})
		return err
	})
}

// answer is what a paused request gets: the page's document, or the
// Network's answer.
func (t *tab) answer(ev *fetch.EventRequestPaused) (*Response, error) {
	req := ev.Request
	if ev.ResourceType == network.ResourceTypeDocument && sameURL(req.URL, t.page.URL) {
		t.mu.Lock()
		first := !t.served
		t.served = true
		t.mu.Unlock()
		if first {
			return &Response{Status: t.page.Status, Header: t.page.Header, Body: t.page.Body}, nil
		}
	}
	t.requests.Add(1)
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, fmt.Errorf("%w: %s requests are not made", ErrRefused, req.Method)
	}
	h := http.Header{}
	for k, v := range req.Headers {
		if s, ok := v.(string); ok {
			h.Set(k, s)
		}
	}
	return t.net.RoundTrip(t.ctx, Request{URL: req.URL, Method: req.Method, Type: string(ev.ResourceType), Header: h})
}

// sameURL reports whether the browser's URL a is the page's URL b, the
// fragment aside.
func sameURL(a, b string) bool {
	if i := strings.IndexByte(b, '#'); i >= 0 {
		b = b[:i]
	}
	return a == b
}

// hopHeaders are the headers the browser must not get from a body already
// decoded and whole.
var hopHeaders = map[string]bool{
	"Content-Encoding": true, "Content-Length": true, "Transfer-Encoding": true,
	"Connection": true, "Keep-Alive": true,
}

func headerEntries(h http.Header) []*fetch.HeaderEntry {
	var out []*fetch.HeaderEntry
	for k, vs := range h {
		if hopHeaders[http.CanonicalHeaderKey(k)] {
			continue
		}
		for _, v := range vs {
			out = append(out, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	return out
}
