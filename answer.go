package crawler

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/links"
)

// answer turns a response into the visit's outcome: its inventory record,
// its page record, the URLs it leads to, and what is kept of it (the
// WARC record, the mirror file). What the config asks to keep must be
// kept for the URL to be done: a failed write is the outcome instead. A
// page rendered (render.enabled) is rendered here, while its lease is held.
func (c *Crawler) answer(ctx context.Context, l *frontier.Lease, resp *response, prev storage.Page, known bool) outcome {
	now := c.now()
	rec := storage.Record{
		Robots: storage.RobotsAllowed, Status: resp.status, ContentType: resp.header.Get("Content-Type"),
		Bytes: int64(len(resp.body)), DurationMS: resp.duration.Milliseconds(),
	}
	page := c.pageOf(l, resp, prev, known)
	page.FetchedAt = now
	u := frontier.MustParse(l.Request)
	if !resp.archived {
		ref, err := c.out.saveWARC(u, resp, resp.sent, page.WARC)
		if err != nil {
			return failed("output.warc", err)
		}
		page.WARC = ref
	}
	if l.Requisite && !resp.archived {
		c.render.keep(l.Key, resp) // for the browser: nil-safe when no page is rendered
	}
	var links []frontier.Item
	var graph []storage.Link
	var err error
	switch {
	case redirectAnswer(resp.status):
		links = c.redirect(l, resp, &rec)
		if rec.FinalURL != "" {
			page.FinalURL = rec.FinalURL // the next hop: the mirror links to the end of the chain
			graph = append(graph, storage.Link{From: l.Request, To: rec.FinalURL, Kind: "redirect"})
		}
	case resp.status == 304 && known:
		rec.NotModified = true
		c.obs.notModifiedAnswer()
		warc := page.WARC
		page = prev
		page.FetchedAt, page.Unchanged, page.WARC = now, prev.Unchanged+1, warc
	case resp.status >= 200 && resp.status < 300 && resp.undecoded != "":
		rec.Error = fmt.Sprintf("body in an unsupported Content-Encoding %q: not read", resp.undecoded)
	case resp.status >= 200 && resp.status < 300:
		if links, err = c.content(ctx, l, resp, &rec, &page, prev, known, &graph); err != nil {
			return failed("output.mirror_dir", err)
		}
		if ctx.Err() != nil {
			return release(time.Time{}) // stopping during its render: the URL goes back
		}
	case (resp.status == 404 || resp.status == 410) && known && l.Revisit:
		// Every revisit that finds the page missing says so, whether it
		// was there at the first visit or not: the last record of a URL
		// is its current state. The page keeps the type of its last
		// body, which named its mirror file.
		rec.Gone, page.ContentType = true, prev.ContentType
		if !c.conf().Daemon.KeepGone && prev.MirrorPath != "" {
			if err := c.out.removeMirror(u, prev.ContentType); err != nil {
				return failed("output.mirror_dir", err)
			}
			page.MirrorPath, page.Relinked = "", false
		}
	}
	if resp.status >= 200 && resp.status < 300 && l.Kind == frontier.KindPage && !l.Requisite {
		// A requisite counts toward no page budget (README, "Whole sites").
		c.hosts.addPage(l.Origin)
		c.budget.fetched.Add(1)
	}
	o := done(rec)
	o.links, o.page, o.graph = links, &page, graph
	return o
}

// pageOf starts the page record of a response. The file an earlier visit
// saved stays as it is until a new body replaces it or the page is gone:
// its type named it, and it may have been relinked. An answer with no body
// for the mirror (a redirect, an error) must not leave it to be relinked
// again, which would read its relative links as the site's.
func (c *Crawler) pageOf(l *frontier.Lease, resp *response, prev storage.Page, known bool) storage.Page {
	page := storage.Page{
		Key: l.Key, URL: l.Request, FinalURL: l.Request, Status: resp.status,
		ContentType: resp.header.Get("Content-Type"), Length: int64(len(resp.body)),
		ETag: resp.header.Get("ETag"), LastModified: resp.header.Get("Last-Modified"),
		Depth: l.Depth, Referrer: l.Referrer, Duration: resp.duration,
	}
	if known {
		page.Unchanged, page.WARC = prev.Unchanged, prev.WARC
		if prev.MirrorPath != "" {
			page.MirrorPath, page.ContentType, page.Relinked = prev.MirrorPath, prev.ContentType, prev.Relinked
		}
	}
	return page
}

// content reads a 2xx body: a sitemap's entries, or a page's links, and
// saves the page in the mirror (as served, rendered or not). The error is
// the mirror's.
func (c *Crawler) content(ctx context.Context, l *frontier.Lease, resp *response, rec *storage.Record,
	page *storage.Page, prev storage.Page, known bool, graph *[]storage.Link) ([]frontier.Item, error) {
	page.ContentType = rec.ContentType
	page.Hash = storage.ContentHash(resp.body)
	if known && storage.SameContent(prev.Hash, page.Hash, resp.body) {
		page.Unchanged = prev.Unchanged + 1
	} else {
		page.Unchanged = 0
	}
	if resp.truncated {
		rec.Error = "body cut at fetch.max_body"
	}
	var links []frontier.Item
	if l.Kind == frontier.KindSitemap {
		c.parsing(func() { links = c.readSitemap(l, resp, rec) })
		return links, nil
	}
	var rd *rendered
	if c.rendersPage(l, resp) {
		r := c.renderPage(ctx, l, resp) // holding no CPU slot: the browser works meanwhile
		rd = &r
		c.obs.render(r.err == nil)
		if r.err != nil {
			rec.RenderError = r.err.Error()
		} else {
			rec.Rendered, rec.RenderMS = true, r.took.Milliseconds()
		}
	}
	c.parsing(func() { links = c.follow(l, resp, rec, page, graph, rd) })
	switch {
	case !c.mirroring():
	case page.Unchanged > 0 && prev.ContentType == page.ContentType && c.out.inMirror(page.MirrorPath):
		// The body the mirror holds, maybe relinked since: a revisit
		// of a server that sends no validators leaves it as it is.
	default:
		path, err := c.out.saveMirror(frontier.MustParse(l.Request), resp)
		if err != nil {
			return nil, err
		}
		page.MirrorPath, page.Relinked = path, false
	}
	return links, nil
}

// parsing runs parse, which reads a response's links, holding one of
// c.cpu's slots. Saving the body (file creation, whose cost is in the
// kernel and which one directory serialises) and writing the outcome
// (an fsync) hold none, so that they go on beside the next parse.
func (c *Crawler) parsing(parse func()) {
	c.cpu <- struct{}{}
	defer func() { <-c.cpu }()
	parse()
}

// redirect turns a 3xx answer into the next hop: a new frontier item with
// the depth of the URL that redirected, checked like any link. Loops end in
// the seen set; chains end at fetch.max_redirects.
func (c *Crawler) redirect(l *frontier.Lease, resp *response, rec *storage.Record) []frontier.Item {
	target, why := location(l, resp)
	if target == nil {
		rec.Error = why
		return nil
	}
	rec.FinalURL = target.String()
	if c.redirectsOf(l) >= c.conf().Fetch.MaxRedirects {
		rec.Error = "too many redirects"
		c.obs.reject("redirects")
		return nil
	}
	return c.admit(l, []link{{url: target, kind: linkRedirect}})
}

// location is where a redirect answer to the lease's request leads,
// resolved against its URL, or nil and why it leads nowhere.
func location(l *frontier.Lease, resp *response) (*url.URL, string) {
	loc := strings.TrimSpace(resp.header.Get("Location"))
	if loc == "" {
		return nil, "redirect without Location"
	}
	target, err := frontier.MustParse(l.Request).Parse(loc)
	if err != nil {
		return nil, "bad Location: " + err.Error()
	}
	return target, ""
}

// follow extracts the links of an HTML page (and, for the mirror, the
// references of a stylesheet) unless robots meta tags or X-Robots-Tag say
// nofollow. What the page says of itself goes into its records: the
// inventory's page facts, and the page record's canonical and hreflang.
// A page rendered (rd, without error) adds the links of its rendered
// document and its script's routes, and its facts are the rendered ones.
func (c *Crawler) follow(l *frontier.Lease, resp *response, rec *storage.Record, page *storage.Page, graph *[]storage.Link, rd *rendered) []frontier.Item {
	base := frontier.MustParse(l.Request)
	ct := resp.header.Get("Content-Type")
	switch {
	case isHTML(ct, resp.body):
		e := extractHTML(resp.body, ct, base, c.agent, c.conf().Scope.MaxLinksPerPage)
		var added []storage.Link // the link graph's lines found only after rendering
		if rd != nil && rd.err == nil {
			e, added = c.withRendered(e, rd, base, l.Request)
		}
		c.linksCut(l, rec, e.cut)
		if u := linkHeaderCanonical(resp.header, base); u != nil {
			switch h := u.String(); {
			case e.canonical == "":
				e.canonical = h
			case h != e.canonical && e.conflict == "":
				e.conflict = h
			}
		}
		rec.CanonicalConflict = e.conflict
		bodyFacts(rec, e.facts, resp, base)
		rec.Extracted = c.extracted(resp.body, ct)
		e.robots = xRobotsTag(e.robots, resp.header, c.agent)
		rec.Title, rec.Description, rec.H1, rec.Canonical = e.title, e.description, e.h1, e.canonical
		rec.MetaRobots, rec.Hreflang, rec.LinksOut = e.robots, e.hreflang, e.linksOut
		page.Canonical, page.Hreflang = e.canonical, nil
		for _, h := range e.hreflang {
			if page.Hreflang == nil {
				page.Hreflang = map[string]string{}
			}
			page.Hreflang[h.Lang] = h.URL
		}
		pageNofollow := nofollow(e.robots)
		if c.out.links != nil {
			*graph = append(*graph, e.graph(l.Request, pageNofollow)...)
			for _, ln := range added {
				ln.Nofollow = ln.Nofollow || pageNofollow
				*graph = append(*graph, ln)
			}
		}
		if l.Requisite || (c.conf().Links.HonorMetaRobots && pageNofollow) {
			// A requisite is never crawled from: an HTML one (an
			// object's, an embed's) brings its own requisites only.
			return c.admit(l, requisitesOnly(e.links))
		}
		return c.admit(l, e.links)
	case links.IsCSSType(ct) && c.keepsRequisites():
		found, cut := extractCSS(resp.body, base, c.conf().Scope.MaxLinksPerPage)
		c.linksCut(l, rec, cut)
		return c.admit(l, found)
	}
	return nil
}

// linksCut records that cut references of the lease's page were past
// scope.max_links_per_page, and not read.
func (c *Crawler) linksCut(l *frontier.Lease, rec *storage.Record, cut int) {
	if cut == 0 {
		return
	}
	rec.LinksCut = cut
	c.log.Info("page has more links than scope.max_links_per_page: the rest not read",
		"url", l.Request, "read", c.conf().Scope.MaxLinksPerPage, "cut", cut)
}

func requisitesOnly(links []link) []link {
	var out []link
	for _, ln := range links {
		if ln.kind == linkRequisite {
			out = append(out, ln)
		}
	}
	return out
}

func (c *Crawler) mirroring() bool { return c.conf().Output.MirrorDir != "" && !c.opts.NoBodies }

// redirectsOf is how many redirects led to the lease's URL: the chain of
// referrers, each recorded with a 3xx answer, that ends at it. It looks no
// further than max_redirects+1 hops.
func (c *Crawler) redirectsOf(l *frontier.Lease) int {
	if l.Via != frontier.ViaRedirect {
		return 0
	}
	n, ref := 0, l.Referrer
	for n <= c.conf().Fetch.MaxRedirects {
		u, err := frontier.Canonicalize(ref, 0)
		if err != nil {
			break
		}
		p, ok, err := c.pages.Get(u.Key)
		if err != nil || !ok || p.Status < 300 || p.Status > 399 {
			break
		}
		n++
		ref = p.Referrer
	}
	return n
}
