// Package wacz packages a crawl's WARC files as one WACZ file (`crawler
// wacz`), the zip that replayweb.page and pywb open as they are: the WARC
// files under archive/, stored (not compressed again) so that a reader
// can seek into them; their CDXJ indexes merged and sorted in
// indexes/index.cdxj; pages/pages.jsonl, the entry points (url, ts, title
// of each 200 HTML page); datapackage.json, which lists every file with
// its size and SHA-256; and datapackage-digest.json, the SHA-256 of
// datapackage.json.
//
// # Specification
//
// WACZ 1.1.1 (specs.webrecorder.net/wacz/1.1.1): the directory layout,
// the pages header line {"format": "json-pages-1.0", "id": "pages",
// "title": "All Pages"}, the data-package profile with wacz_version,
// created and software, and STORE for archive/. The JSON, JSON Lines and
// CDXJ files are deflated, which the specification allows.
//
// # Caveats
//
// A WARC file without its NAME.cdxj (one a running crawl is still
// writing) is indexed from its records and copied only up to the end of
// its last whole record, so the package is consistent even while the
// crawl goes on. Only WARC files written one record to a gzip member, as
// package warc writes them, can be indexed so; others must come with their
// index. A page is listed only when the index holds a record of its URL,
// so that every entry point replays.
package wacz
