package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/robots"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/lru"
	"github.com/politecrawl/crawler/storage/render"
	"github.com/politecrawl/crawler/storage/warc"
)

// rendering is render.enabled at work: the browser (package
// storage/render, which knows the DevTools protocol; the engine knows
// only "render this page"), and the bodies this run fetched, which
// answer the browser's requests for them instead of the server.
type rendering struct {
	r    *render.Renderer
	kept *lru.Cache[*response]
}

// renderCacheSize bounds the bodies kept for the browser (README,
// "Rendering"): the least recently used go first.
const renderCacheSize = 64 << 20

// rendered is what became of a page's render: the rendered document and
// the routes its script took, or why there is none.
type rendered struct {
	html   string
	routes []string
	took   time.Duration
	err    error
}

// rendersPage reports whether the lease's answer is rendered: a 2xx HTML
// page of the crawl (not a requisite, not a sitemap) when render.enabled.
func (c *Crawler) rendersPage(l *frontier.Lease, resp *response) bool {
	return c.render != nil && l.Kind == frontier.KindPage && !l.Requisite &&
		isHTML(resp.header.Get("Content-Type"), resp.body)
}

// renderPage renders the lease's page, every request of the browser made
// by the crawl (renderNet), while the lease is held.
func (c *Crawler) renderPage(ctx context.Context, l *frontier.Lease, resp *response) rendered {
	res, err := c.render.r.Render(ctx, render.Page{URL: l.Request, Status: resp.status, Header: resp.header, Body: resp.body},
		renderNet{c: c})
	if err != nil {
		c.log.Info("page not rendered", "url", l.Request, "err", err)
		return rendered{err: err}
	}
	return rendered{html: res.HTML, routes: res.Routes, took: res.Took}
}

// renderNet is the browser's network: the crawl's one request path.
type renderNet struct{ c *Crawler }

// RoundTrip judges a request of the browser as any request of the crawl:
// http(s) only, to a host in scope or one scope.requisites allows, not
// refused by scope.exclude or the trap guards, allowed by its host's
// robots.txt; then answered from what this run
// fetched already, or sent through the exchange (the host's delay,
// Crawl-delay, Retry-After and max_per_host), counted and archived.
func (n renderNet) RoundTrip(ctx context.Context, r render.Request) (*render.Response, error) {
	c := n.c
	cfg := c.conf()
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: not an http(s) URL", render.ErrRefused)
	}
	canon, err := frontier.Canonicalize(r.URL, cfg.Scope.MaxURLLength)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", render.ErrRefused, err)
	}
	origin := canon.Origin
	if cfg.scope.checkStart(origin) != "" && !cfg.scope.requisites.allows(origin) {
		return nil, fmt.Errorf("%w: out of scope: %s", render.ErrRefused, origin)
	}
	// As a requisite or a link checked on another host is judged: what
	// scope.exclude, the length and the trap guards refuse is never asked
	// (a script's /logout or a tracking URL); include and max_depth say
	// which pages are crawled, not what a page loads.
	if why := cfg.scope.checkExternal(frontier.MustParse(canon.Request)); why != "" {
		c.obs.reject(why)
		return nil, fmt.Errorf("%w: out of scope: %s", render.ErrRefused, why)
	}
	head := r.Method == http.MethodHead
	if !head {
		if kept, ok := c.render.kept.Get(canon.Key); ok {
			return &render.Response{Status: kept.status, Header: kept.header, Body: kept.body}, nil
		}
	}
	group, err := c.robotsGroup(ctx, origin)
	if err != nil {
		return nil, err
	}
	if !group.Allowed(canon.Request) {
		c.obs.disallow()
		return nil, fmt.Errorf("%w: disallowed by robots.txt", render.ErrRefused)
	}
	if err := c.x.wait(ctx, origin); err != nil {
		return nil, err
	}
	resp, _, err := c.x.do(ctx, origin, request{url: canon.Request, head: head, accept: r.Header.Get("Accept"), timeout: cfg.Fetch.Timeout}, nil)
	if err != nil {
		return nil, err
	}
	if resp.undecoded != "" {
		return nil, fmt.Errorf("body in an unsupported Content-Encoding %q", resp.undecoded)
	}
	if _, err := c.out.saveWARC(frontier.MustParse(canon.Request), resp, resp.sent, warc.Ref{}); err != nil {
		c.writeFailed(&writeError{output: "output.warc", err: err})
		return nil, err
	}
	if !head {
		c.render.keep(canon.Key, resp)
	}
	return &render.Response{Status: resp.status, Header: resp.header, Body: resp.body}, nil
}

// keep keeps an answer of this run, for the browser and for the
// requisite leases of the same URL, unless it says to come back later,
// is cut short, or is a 304 (which has no body). The body is not copied: nothing changes a response's body.
func (r *rendering) keep(key string, resp *response) {
	if r == nil || resp.truncated || resp.undecoded != "" || resp.status == 304 || resp.status == 429 || resp.status >= 500 {
		return
	}
	r.kept.Put(key, resp)
}

// fetchedForRender is the answer a render got for requisite lease l this
// run, if any: the crawl does not ask for it again. The WARC has it
// already, from the render.
func (c *Crawler) fetchedForRender(l *frontier.Lease) (*response, bool) {
	if c.render == nil || !l.Requisite || l.Revisit || l.Kind != frontier.KindPage {
		return nil, false
	}
	kept, ok := c.render.kept.Get(l.Key)
	if !ok {
		return nil, false
	}
	resp := *kept
	resp.archived = true
	return &resp, true
}

// robotsGroup returns the robots.txt group of origin for a request of the
// browser, fetching robots.txt first when it must be (a requisite host
// not asked yet), or waiting while another worker does. An unreachable
// robots.txt refuses the request, as it refuses a page.
func (c *Crawler) robotsGroup(ctx context.Context, origin string) (*robots.Group, error) {
	for {
		now := c.now()
		changed := c.hosts.gate.Changed(origin)
		act, g, st := c.hosts.robots.Lookup(origin, now)
		switch {
		case act == politeness.RobotsFetch:
			c.readRobots(ctx, origin, now)
			if act, _, _ = c.hosts.robots.Lookup(origin, c.now()); act == politeness.RobotsFetch {
				c.hosts.robots.Abandon(origin) // not fetched: no slot of the host yet
			} else {
				continue
			}
		case act == politeness.RobotsReady && st.DisallowAll:
			return nil, fmt.Errorf("%w: robots.txt unavailable", render.ErrRefused)
		case act == politeness.RobotsReady:
			return g, nil
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-changed:
		case <-t.C:
		}
		t.Stop()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// keptCost is what an answer kept costs the cache: its bodies, decoded
// and as received, which the fetcher keeps both.
func keptCost(resp *response) int { return len(resp.body) + len(resp.raw) }

// render validates render: its values, and that the browser is there when
// it is enabled.
func (c *configCheck) render(r RenderConfig) {
	c.atLeast("render.tabs", r.Tabs, 1)
	if r.Timeout <= 0 {
		c.addf("render.timeout", "must be > 0, got %v", r.Timeout)
	}
	if r.Settle <= 0 {
		c.addf("render.settle", "must be > 0, got %v", r.Settle)
	}
	if !r.Enabled {
		return
	}
	if _, err := render.FindBrowser(r.Browser); err != nil {
		c.addf("render.browser", "%v: install chromium or give its path", err)
	}
}

// withRendered is what served page e says once rendered (rd): its links
// and those of the rendered document and of the routes its script took
// that it lacks, and the rendered document's facts (title, h1,
// description, canonical, robots, hreflang). e's references stay the
// served page's; added are the link graph's lines of page from found
// only after rendering, marked so.
func (c *Crawler) withRendered(e extracted, rd *rendered, base *url.URL, from string) (extracted, []storage.Link) {
	r := extractHTML([]byte(rd.html), "text/html; charset=utf-8", base, c.agent, c.conf().Scope.MaxLinksPerPage)
	type line struct{ kind, to string }
	lines := map[line]bool{}
	for _, ln := range e.graph(from, false) {
		lines[line{ln.Kind, ln.To}] = true
	}
	var added []storage.Link
	for _, ln := range r.graph(from, false) {
		if k := (line{ln.Kind, ln.To}); !lines[k] {
			lines[k] = true
			ln.Rendered = true
			added = append(added, ln)
		}
	}
	have := make(map[string]bool, len(e.links))
	for _, ln := range e.links {
		have[ln.url.String()] = true
	}
	merged := r
	merged.refs, merged.base, merged.cut = e.refs, e.base, max(e.cut, r.cut)
	merged.links = append([]link(nil), e.links...)
	for _, ln := range r.links {
		if !have[ln.url.String()] {
			have[ln.url.String()] = true
			merged.links = append(merged.links, ln)
		}
	}
	for _, route := range rd.routes {
		u, err := base.Parse(route)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		if !have[u.String()] {
			have[u.String()] = true
			merged.links = append(merged.links, link{url: u, kind: linkAnchor})
		}
		if k := (line{"a", u.String()}); !lines[k] {
			lines[k] = true
			added = append(added, storage.Link{From: from, To: u.String(), Kind: "a", Rendered: true})
		}
	}
	merged.linksOut = e.linksOut + len(added)
	return merged, added
}
