// Package frontier is the crawler's persistent URL frontier: which URL to
// fetch next, kept in bbolt so that a crawl survives kill -9 at any instant
// with nothing lost, in bounded memory however many URLs it holds.
//
// # URL identity
//
// Canonicalize and Resolve give every URL three forms (URL): the request
// form (the URL as found, made valid), the canonical key used for
// deduplication, scope and robots, and the origin (scheme://host[:port]),
// which is the "host" of politeness. The key is the RFC 3986 §6 normal form
// as CONTRACT.md ("Duplicates") asks: scheme and host lower-cased, IDN hosts
// in punycode (golang.org/x/net/idna, UTS #46 lookup profile), default ports
// dropped, an empty path written "/", dot-segments removed, percent-encoding
// normalised (unreserved characters decoded, hex upper-cased), the fragment
// dropped, the query kept as written and in its order. Rejections carry a
// Reason to count.
//
// Deviations and choices: percent-encoding is normalised in the query too
// (RFC 3986 §6.2.2.2 holds for every component); the request form resolves
// literal "." and ".." segments, as reference resolution (RFC 3986 §5.2) and
// browsers do, and writes the host in canonical ASCII, but keeps escapes as
// written; a trailing dot in a host is kept (example.com. is not
// example.com); URLs with userinfo are rejected; IPv4 addresses are not
// rewritten (WHATWG's 0x7f.1 is just a name that will not resolve).
//
// # The queue
//
// A Frontier keeps, in buckets named "frontier.*" of one bbolt database
// that other packages may share (New; Open for a file of its own):
//
//   - frontier.urls: every URL ever added, keyed by host id then path and
//     query, so that one page's links land on few B+tree pages. The value is
//     a compact binary record: state (queued, done, scheduled), metadata
//     (Item), and where the URL is queued. It is the seen set: Add looks each
//     URL up there. There is no Bloom filter: the lookup lands on the page
//     the insert of a new URL writes anyway, and a filter would add memory
//     that grows with the crawl.
//   - frontier.queue: per host, the URLs to hand out, undelayed ones by
//     priority then first-in-first-out, delayed ones (retries, NotBefore,
//     revisits) by due time; the key starts with the host id.
//   - frontier.hosts: per host, its origin, its counts of URLs, its
//     persisted wait (SetHostWait) and whether it is parked.
//
// In memory it keeps, per host only, the counts, the leases out, the time
// the host may next be asked, and a heap of the hosts that have a URL to
// hand out, ordered by when they became ready. Opening reads one record per
// host; nothing in memory grows with the number of URLs.
//
// # Leases and crash safety
//
// Next hands out a URL as a Lease without writing anything: the URL stays
// queued on disk and is only marked leased in memory. Done, Retry and
// Release(at) change the URL's state and queue entry in one transaction
// (Done with the links found and the caller's Hook), synced to disk before
// they return. So a crash loses at most the leases that were out, which are
// handed out again after the restart, and never a URL that was added or a
// Done that returned. Writes go through a single writer goroutine that
// commits, in one transaction, all the operations that queued up while the
// previous commit was syncing (group commit): many workers share each
// fsync, and a lone caller waits for one commit only. Transactions are
// capped at Options.MaxBatch URLs; larger batches are split (see Add, Done).
//
// Caveats: the caller must call SetReady once for each lease handed out, or
// the host stays busy; ready times live in memory, so after a restart every
// host is ready at once unless SetHostWait persisted a wait. A page and a
// sitemap at the same address are separate entries (Kind), so that a
// sitemap already seen as a link is still read as one. Next's fairness is by
// ready time, not by share of requests.
package frontier
