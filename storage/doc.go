// Package storage keeps what the crawler fetched, in four forms:
//
//   - the URL inventory (Inventory, Record): JSON Lines, one object per
//     visit, appended as visits happen, with the fields CONTRACT.md lists
//     (output.urls, and what `crawler discover` prints);
//   - the mirror (Mirror, MirrorPath, RelativeRef): bodies as files in a
//     browsable tree laid out as wget -x --adjust-extension would, from which
//     no URL can escape (output.mirror_dir);
//   - page records (Pages, Page): per canonical URL, what the last visit
//     found — status, ETag, Last-Modified, content hash, unchanged streak,
//     mirror path, WARC reference — in a bbolt database shared with the
//     frontier, under buckets named "storage.*";
//   - WARC 1.1 files (WARCWriter, WARCReader): request, response and revisit
//     records, one gzip member each, rotated at a size cap (output.warc).
//
// Nothing here fetches, schedules or reads the clock: the engine passes
// times in, and calls Flush on the inventory as often as it wants lines to
// reach the disk. Inventory, Mirror, Pages and WARCWriter are safe for
// concurrent use; a WARCReader is not.
//
// The WARC writer picks the record for a visit from the status and the
// payload: a 304 becomes a server-not-modified revisit, a payload equal to
// the one last stored for the URL (by SHA-1, as WARCRef carries it) an
// identical-payload-digest revisit, anything else a full response.
//
// # Specifications
//
// The WARC writer follows ISO 28500:2017 (WARC 1.1): WARC-Record-ID as a
// random urn:uuid, WARC-Date in whole seconds UTC, WARC-Concurrent-To both
// ways between a request and its response, SHA-1 block and payload digests
// in base32 ("sha1:..."), the two revisit profiles of section 6.7 with
// WARC-Refers-To, WARC-Refers-To-Target-URI and WARC-Refers-To-Date, and the
// record-at-a-time gzip and file naming of annexes A and B.
//
// # Deviations and caveats
//
// Go's HTTP client does not expose the bytes on the wire, so the request
// record is rebuilt from the request (request line, Host, the other fields
// in key order), and the response record holds the header and body as the
// engine read them: without Transfer-Encoding (the body is no longer
// chunked), without Content-Encoding and Content-Length when the engine
// decoded the body, and with a Content-Length added when none was sent and
// the body is complete. HTTP/2 exchanges are recorded with the status line
// "HTTP/2.0 ..." as Go reports the protocol.
//
// The mirror's names are made for POSIX file systems: ':' (in host:port) and
// the other characters Windows forbids are kept, and names differing only
// in case collide on case-insensitive file systems. A few distinct URLs
// share a file: /a and /a.html both served as HTML (as in wget), http and
// https of one host, and spellings servers treat alike (a literal '@' and
// %40). When a URL's file and another URL's directory would share a name,
// the directory wins and the file becomes index.html inside it; Locate
// finds it there.
//
// A crash can leave, at worst, a temporary ".tmp-*" file in the mirror and
// a torn last record in the WARC file being written; the next run starts a
// new WARC file. Inventory lines reach the file whole.
//
// Open refuses a crawl.db that is not a whole bbolt database (empty, cut
// short, metas overwritten, or, in a file of up to 64 MiB, a page of the
// tree that is not what its parent says) with an error wrapping ErrDamaged,
// before bbolt can crash on it; damage inside the tree of a larger file is
// found only when a read meets it (see checkStateFile).
//
// Link rewriting for output.mirror_links: relative (RewriteHTML, RewriteCSS,
// CheckMirror) works like wget -k: links to files in the mirror become
// relative, others absolute, and <base href> is dropped; UnlinkGone makes
// links to files removed since (pages gone) absolute again. It works on bytes
// and keeps all but the values it changes, which suits UTF-8 and other
// ASCII-compatible pages; a page in UTF-16 is left as it is, and in a
// rewritten style, srcset or refresh value, characters that were written as
// character references come back as UTF-8. Left alone: URLs in scripts, SVG
// xlink:href, link imagesrcset and CSS image-set() strings.
package storage
