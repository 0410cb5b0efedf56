// Package render renders HTML pages in a headless Chromium that has no
// network of its own: every request the browser makes — the page's
// frames, scripts, XHR and fetch calls, images, fonts — is paused by the
// DevTools protocol's Fetch domain and answered by the caller's Network,
// which is the crawler's one request path (its robots.txt, its hosts'
// delay, Crawl-delay, Retry-After and max_per_host, its archive). The
// README's "Rendering" section is the contract.
//
// A Renderer runs one browser process, started on the first Render and
// again after a crash or every Options.RestartEvery pages (a long-lived
// browser grows), and at most Options.Tabs pages in it at once. Render
// serves the page's own document from the body the crawl fetched, waits
// for the load event and then until nothing has been in flight, no timer
// the page set early (a link added after a delay) is still to fire, and
// the document has not changed for Options.Settle, and returns the rendered
// document's HTML and the URLs the page's script gave history.pushState or
// replaceState. A page whose tab crashes, whose script never yields, or
// that takes longer than Options.Timeout is an error; its tab is closed,
// and the browser restarted if the tab cannot be.
//
// What keeps the browser off the network: Fetch interception with the
// pattern "*" in every tab, every frame kept in its page's process
// (site isolation off, so that no frame escapes the tab's interception),
// service workers hidden from pages, and a proxy that leads nowhere for
// anything the interception would not see (the browser's own background
// requests, a worker's): such a request fails rather than reaching a
// server. github.com/chromedp/chromedp drives the browser.
//
// # Caveats
//
// Only GET and HEAD requests are passed to the Network; a page's POST (a
// form, an XHR that posts) fails in the browser, as a polite crawler
// sends none. The rendered document is read as the DOM serialises it
// (outerHTML), so links an element holds only in a JavaScript property,
// not an attribute, are not seen.
package render
