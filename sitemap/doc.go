// Package sitemap reads sitemaps: a pure, streaming and bounded reader over
// an io.Reader, and a Walker that follows sitemap indexes through a fetch
// function it is given. It does no networking of its own.
//
// # What it reads
//
// Read takes one file and tells its Kind by content alone: a <urlset>, a
// <sitemapindex>, a plain text list of URLs, an RSS 2.0 (or 1.0) feed or an
// Atom 1.0 (or 0.3) feed, as the sitemaps.org protocol 0.9
// (https://www.sitemaps.org/protocol.html) and Google's "Build and submit a
// sitemap" define them. Gzip is recognised by its magic bytes only, never
// by name or Content-Type, and undone as often as it was applied (a .gz
// served with Content-Encoding: gzip), up to 8 layers.
//
// Entries are yielded one at a time, as each ends: a page is <url><loc>
// (with lastmod, changefreq and priority, default 0.5), an RSS
// <item><link> (lastmod from <pubDate>) or an Atom <entry>'s first <link
// href> with rel="alternate" or no rel (lastmod from <updated>); an index
// child is <sitemap><loc> (with lastmod). Extensions — image, video, news,
// xhtml:link hreflang, mobile — and unknown namespaces are skipped: an
// <image:loc> is never a page.
//
// The XML is read by a purpose-built tokenizer for this small grammar, not
// encoding/xml: it reads a urlset at some 300 MB/s on one core, with one
// allocation per entry and memory that does not grow with the file (a 64 KiB window, bounded value buffers, an element
// stack of at most 256, the gzip state).
//
// # Rules and caps
//
// Location rules (sitemaps.org "Sitemap file location", Google's article
// on sub-folder sitemaps): a page must have the sitemap's scheme, host and
// port and lie under the sitemap's folder (/shop/sitemap.xml covers
// /shop/…, not /shopping/ nor /); an index's child must be on the index's
// site (scheme, host and port), in any folder. Hosts compare without case
// and default ports are implied; paths compare after RFC 3986 normalization
// (percent-encoding, dot segments) and, to be safe, with backslashes and
// runs of slashes read as one slash, as browsers and many servers read
// them. A location longer than 2,048 characters, of a scheme other than
// http or https, unparsable, or holding a C0 control character or DEL
// anywhere (the fragment included; XML character references count) is
// dropped. A relative location is resolved
// against the sitemap URL, then checked like the others; it is never
// passed on as written. (A text sitemap lists absolute URLs only.) The
// URL Read is given should be where the file was found, after redirects.
//
// Caps (Limits): at most MaxURLs page entries per file (default 50,000),
// MaxBytes uncompressed bytes per file (default 10 MiB, 10,485,760) and
// MaxChildren sitemaps per index (default 1,000). A file is cut at a cap,
// keeping what came before. The URL cap counts every entry with a
// location, dropped or not, as the protocol's limit does. The byte cap
// counts bytes after gzip (before any UTF-16 decoding); the compressed
// input is bounded too, so a gzip bomb costs no more reading than the cap.
//
// Every entry dropped, cap hit, bad value and damaged file is reported as
// a Warning naming its Rule, the URL concerned and, for a cap, the cap.
// Nothing that warns stops the rest.
//
// # Leniency, and where it stops
//
// Read accepts what real sitemaps contain: a byte order mark, white space
// around values, CDATA, the predefined entities and character references,
// a raw & (kept as written), a missing or wrong namespace (Google's old
// 0.84 one included), namespace prefixes (<sm:url>), element names in any
// case, comments and processing instructions anywhere, an encoding=
// declaration other than UTF-8 (bytes are read as UTF-8, and a value that
// is not valid UTF-8 as Windows-1252), UTF-16 with a byte order mark or
// without one (told by the NUL bytes of its first two characters, "<?",
// "<u" or "ht"), text before the XML declaration (with a warning),
// and anything after the root element, which is not read. lastmod takes
// every W3C Datetime form (YYYY, YYYY-MM, YYYY-MM-DD, with hh:mm, hh:mm:ss
// and fractions of a second, and a time zone) and the usual departures
// (t or a space for T, +hhmm, no zone); an invalid lastmod, changefreq or
// priority is dropped with a warning and the entry kept.
//
// Damage ends the reading: a truncated file, an end tag that closes the
// wrong element, a '<' that starts no tag, a tag over 64 KiB, nesting
// deeper than 256, damaged gzip. The entries that ended before the damage
// are kept and a warning says where it was. An entry is yielded at its end
// tag, so an entry cut by damage or a cap is not yielded.
//
// A DOCTYPE is skipped and its entities are never expanded: no billion
// laughs, no external entities. A location holding an entity reference
// that cannot be decoded (&name; beyond the five predefined, or a
// reference to no character) is dropped rather than passed on half-read.
//
// # Walking
//
// Walker.Walk reads roots and the children of root indexes one file at a
// time, with the FetchFunc it is given. A sitemap listed twice, or an
// index listing itself, is read once; an index listed by an index is
// reported and not followed, as Google does not process nested indexes; a
// child that cannot be fetched is reported and the walk goes on. Each page
// URL is yielded once per walk, duplicates told by their RFC 3986 normal
// form without fragment. To remember them the walk keeps 16 bytes (two
// independent 64-bit hashes) per distinct page in a map: its memory grows
// with the pages actually listed, bounded by roots × MaxChildren × MaxURLs
// of them (50 million for one full index at the defaults, over 1 GB). That
// bound is accepted: such an index is rare, and the engine keeps its own
// seen set anyway.
//
// # Deviations and caveats
//
//   - Google accepts 50 MB sitemaps; the default byte cap is the
//     protocol's 10 MiB, and configurable.
//   - Google asks an index's children to be in the index's folder or
//     below; this package follows sitemaps.org and asks only the same
//     site. Cross-site submission (a sitemap of another host listed in
//     robots.txt) is not this package's business: the location rules are
//     always applied against the sitemap's own URL.
//   - RSS and Atom feeds follow the location rules of sitemaps, folder
//     included.
//   - Host names are compared as written, in ASCII lower case: an IDN in
//     Unicode and its punycode are different hosts here.
//   - Other encodings than UTF-8, UTF-16 and (per value) Windows-1252 are
//     not decoded; EBCDIC and the like read as garbage.
//   - A duplicate page within one file is yielded by Read every time;
//     only Walker removes duplicates.
//
// Read may be called from many goroutines at once; a Walker may be reused
// but not by two walks at once.
package sitemap
