// Package crawler is the crawl engine of a polite web crawler: its Config, the
// worker pool that pulls URLs from the frontier, fetching through the
// politeness gate, link extraction, and the recording of every outcome.
//
// The packages beside it each do one job and know nothing of the engine:
// robots parses and matches robots.txt (RFC 9309), sitemap reads sitemaps,
// frontier keeps the persistent queue of URLs, politeness decides when a host
// may be asked, and storage keeps what was fetched. Imports point one way,
// towards those packages; TestImportDirections keeps it so.
package crawler
