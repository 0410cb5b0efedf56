// Package relink keeps a mirror with output.mirror_links: relative
// browsable offline, as wget -k does: a pass (Relinker.Pass) rewrites the
// links of every HTML and CSS page saved since the last pass to the
// mirror's files, links to pages the mirror does not have becoming
// absolute, then checks that every relative link of the mirror resolves
// to a saved file (mirror.CheckKnown), and makes absolute again the links
// to pages removed from the mirror since (gone: 404 or 410).
//
// The page records (storage.Pages) say which pages a pass rewrites: those
// with a mirror file not yet marked Relinked, which it marks. A link is
// followed through the redirects its records hold, up to
// fetch.max_redirects hops, to the file of the end of its chain. The
// rewriting itself is storage/mirror's, over storage/links' grammar of a
// link. The engine decides when a pass runs (at the end of an ad hoc
// crawl; in a daemon, when the crawl is idle or a daemon.recrawl has gone
// by), and gives a Relinker what it needs as fields.
//
// # Caveats
//
// A file is rewritten once: a second rewrite would read the mirror's
// relative links as the site's. So a file two URLs share (/py/ and
// /py/index.html) is rewritten for the first of them only, a file whose
// body is no longer the one its record describes (its Hash) is left alone,
// and a link to a page not yet saved when its file is rewritten stays
// absolute for good: the engine runs a pass when no new URL waits. A page
// whose key Hold refuses (a worker is visiting it, and may be saving a new
// body and record) is left for the next pass. One Relinker runs one pass
// at a time.
package relink
