// Package crawler is the crawl engine of a polite web crawler: its Config,
// and the wiring of the packages that do each job. robots parses and
// matches robots.txt (RFC 9309), sitemap reads sitemaps, frontier keeps the
// persistent queue of URLs, politeness decides when a host may be asked,
// storage keeps what was fetched (the state database, page records, the
// inventory; storage/mirror and storage/warc their files), and storage/links
// is the one grammar of what a link is. Imports point one way, towards those
// packages; only frontier and storage know bbolt. TestImportDirections
// keeps it so. The command line, the config keys, the inventory's fields
// and the metrics are described in the README.
//
// # The pipeline
//
//	dispatch ── lease ──▶ process: visit(ctx, lease) outcome ──▶ settle(lease, outcome)
//
// dispatch (dispatch.go) takes leases from the frontier as hosts become
// ready and hands them to a fixed pool of workers; it holds back a host's
// pages while one of its sitemaps is read (so in_sitemap and depth 0 are
// known first), pages no link reaches yet, or two link hops deeper than
// a linked page of the host being visited, until it is done (with the
// frontier handing a host's linked pages out by link depth, this makes
// link_depth the shortest chain of links), and pages past max_pages
// (budget). A worker's visit (visit.go, answer.go) is a flat pipeline whose
// every step may end it: in scope, not fetched already, robots.txt
// (robots.go), the host's page budget, a slot of the host, the request, the
// answer (links found and admitted by admit.go, the body saved). It
// returns an outcome — done with its records and links, retry, release,
// or a failed write — and settle (settle.go) alone acts on it: it is the
// only caller of the frontier's Done, Retry and Release.
//
// # Who owns what
//
//   - hosts (hosts.go) owns all per-host state: the politeness gate, the
//     robots.txt cache and the answers shared between hosts whose
//     robots.txt redirects (robotsshare.go), the robots.txt states saved
//     for the next run, waits that outlast a restart, parking, the pages
//     fetched per host and the sitemaps being read. Every change it makes
//     that bears on when a host may next be asked, it tells the frontier
//     itself.
//   - exchange (exchange.go) is the one path of every request — pages,
//     sitemaps, robots.txt and each of its redirect hops: take a slot of the
//     host, send, hear the first byte, give the slot back with the result,
//     all on the crawl's one clock. fetcher (fetch.go) is the one place that
//     builds requests and reads bodies within their limits; the commands'
//     one-off requests (oneoff.go) use it too.
//   - observer (observer.go) hears each event once; the end summary, the
//     progress line, /metrics and /hosts are read from it, with the
//     frontier's and the hosts' own state, so they cannot disagree.
//   - outputs (outputs.go) and the page records keep what was fetched; a
//     URL is done only once what the config keeps of it is kept. chains
//     (chains.go) holds a redirect's inventory record until the end of
//     its chain is known, in memory and in the state.
//   - checkLink (external.go) asks a link to a host out of scope whether
//     it works (scope.check_external), through the same robots.txt and
//     exchange as a page.
//   - requisites (requisites.go) says what becomes of a page's requisite
//     (frontier.Item.Requisite): fetched and kept when a mirror or WARC is
//     written, from the hosts in scope and those scope.requisites allows,
//     as politely as a page but never crawled from and counted toward no
//     page budget; otherwise checked by checkLink. At max_pages the
//     dispatcher still hands out what counts toward no budget, putting
//     off the hosts whose next URL is a page.
//   - rendering (renderer.go), with render.enabled, renders each 2xx HTML
//     page of the crawl in package storage/render's headless browser while
//     its lease is held, and is the browser's network: each request it
//     makes is judged (scheme, scope or scope.requisites, robots.txt) and
//     sent through the exchange, archived, or answered from the bodies
//     this run kept. The rendered page's links join the served page's
//     (answer.go); a host has at most render.tabs pages visited at once.
//     In a crawl shared by several workers, a browser's request to a host
//     another worker holds fails in the browser.
//   - shared (shared.go), in a crawl shared by several workers (the
//     cluster block, frontier/cluster), owns this worker's part: which
//     hosts it may ask (hosts consult it before the gate), what must reach
//     the partition's log before the frontier commits it (settle and
//     queue), the links routed to other workers, and a loop that takes
//     partitions over, hands them on, reads what is routed here, compacts,
//     and tells the dispatcher when every worker is done.
//   - Crawler (crawler.go) is the wiring: config, log, clock, and the parts
//     above.
//
// # Caveats
//
// A failed write of an output (inventory, mirror, WARC) or of a URL's
// outcome or a host's parking in the state database stops the crawl: the
// URL being settled stays queued, Run returns the error, and the same
// command carries on once the cause (a full disk) is mended. A failed save
// of a host's wait or robots.txt copy is logged and counted
// (crawler_state_errors_total), and the crawl goes on: the next run asks
// again. The politeness wait counted for /metrics is the
// time hosts with URLs queued or in flight are held back, each moment of
// a host counted once, so it includes waits the dispatcher would not have
// filled. Hosts' ready times live in memory; only waits a server asked for
// and parking survive a restart, and a host an earlier run parked is
// tried again once its wait is over: its URLs, recorded as not fetched,
// stay queued for it. Requests outside a crawl (the
// commands) follow no politeness but the delay their caller adds.
package crawler
