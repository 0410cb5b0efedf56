// Package frontier is the crawler's persistent URL frontier: which URL to
// fetch next, kept in bbolt so that a crawl survives kill -9 at any instant
// with nothing lost, in memory that does not grow with the number of URLs.
//
// # URL identity
//
// Canonicalize and Resolve give every URL three forms (URL): the request
// form (the URL as found, made valid), the canonical key used for
// deduplication, scope and robots, and the origin (scheme://host[:port]),
// which is the "host" of politeness. The key is the RFC 3986 §6 normal form
// as the README ("Each URL once") says: scheme and host lower-cased, IDN hosts
// in punycode (golang.org/x/net/idna, UTS #46 lookup profile), default ports
// dropped, an empty path written "/", dot-segments removed, percent-encoding
// normalised (unreserved characters decoded, hex upper-cased), the fragment
// dropped, the query kept as written and in its order. A rejected URL comes
// with a Reason to count. Resolve follows RFC 3986 §5.2.
//
// Choices where the specifications leave room: percent-encoding is
// normalised in the query too (RFC 3986 §6.2.2.2 holds for every
// component); the request form resolves literal "." and ".." segments, as
// reference resolution and browsers do, and writes the host in canonical
// ASCII, but keeps escapes as written; like browsers, surrounding spaces
// and inner tabs and newlines are removed; a trailing dot in a host is kept
// (example.com. is not example.com); URLs with userinfo are rejected, and
// so are URLs with any other C0 control character or DEL, the fragment
// included (a browser would percent-encode them; a crawler that prints
// URLs must not pass on an escape sequence); a port is written without
// leading zeros in the request form too; IPv4 addresses in unusual
// notations (0x7f.1) are not rewritten.
//
// Redact masks the password of every URL in a string (user:xxxxx@, as
// url.URL.Redacted writes it), for what the crawl writes of URLs it did not
// make: the refused ones, errors, the log.
//
// # Storage
//
// A Frontier keeps its state in buckets named "frontier.*" of one bbolt
// database, which other packages may share (New; Open gives it a file of
// its own):
//
//   - frontier.urls: per host (every key starts with its id), first its
//     queue, then its URLs. The queue holds the URLs to hand out, undelayed
//     ones by priority (linked pages at the default one by link depth,
//     see Item.Priority) then first-in-first-out, delayed ones (retries,
//     NotBefore, revisits) by due time, and a done entry for each URL done.
//     Done moves entries rather than deleting them, so the bucket never
//     shrinks and bbolt's freelist, which every commit writes out whole,
//     stays short. The URLs are every URL ever added (the seen set), keyed
//     by path and query, so that a page's links land on few B+tree pages;
//     the value is a compact binary record of the Item. Add looks each URL
//     up there. There is no Bloom filter: the lookup lands on the page that
//     the insert of a new URL writes anyway, and a filter sized for the
//     crawl would make memory grow with it. A host's queue and URLs share a
//     bucket so that a new URL's record and queue entry, and the branch
//     pages above them, are fewer pages to write than in two buckets.
//   - frontier.hosts and frontier.log: per host its origin, counts of URLs,
//     persisted wait (SetHostWait) and parking; changes to the counts of
//     several hosts are appended to the log and folded into the host
//     records every 1,024 transactions, so that a transaction writes one
//     log page rather than one page per host; a transaction that changes
//     one host's counts (a lone Done) writes its record instead.
//   - frontier.marks: URLs done but not yet moved to the done class (see
//     marks.go): moving them a host at a time writes one page for many.
//   - frontier.inbox: new URLs not yet written to frontier.urls (see
//     inbox.go), those that come a few to a host in a batch, such as a
//     page's links to other sites, or the one new link among a page's
//     hundreds to its own site: written a host at a time, they too take
//     one page for many, where each would write a page (and its branch
//     page) of its own.
//
// In memory it keeps, per host only, its counts, leases, marks and URLs in
// the inbox (a few of each), the time it may next be asked, and a heap of
// the hosts that have a URL to hand out, ordered by when they became ready.
// Opening reads one record per host and replays the log, marks and inbox,
// each of bounded length; of the URLs it reads only whether each of the
// inbox's has its record. The Go heap depends on the number of hosts, not
// of URLs.
//
// # Leases and crash safety
//
// Next hands out a URL as a Lease without writing anything: the URL stays
// queued on disk and is only marked leased in memory, so a crash gives
// every lease back. A URL given back with Retry is due at its own time
// (the crawl's backoff for that URL), like any delayed URL: its host's
// other URLs are handed out meanwhile, as SetReady allows, so that one
// failing URL does not hold its host. Done, Retry and Release(at) change the URL in one
// transaction (Done with the links found and the caller's Hook), synced to
// disk before they return: a Done that returned is never lost, a URL done
// is never handed out again unless a revisit is scheduled, and at most the
// leases out at a crash are handed out again.
//
// All writes go through one writer goroutine that commits, in one
// transaction, every operation that arrives while it gathers (group
// commit): concurrent callers share each commit's two fsyncs. When recent
// groups were large it lingers for up to three quarters of a commit's time
// for the callers the last commit answered, holding bbolt's write lock
// meanwhile. When the last few were of one operation each, an operation
// that finds nothing queued and no commit under way is committed by its
// caller itself, as the writer would, sparing the hand-off to the writer
// and back. Transactions are capped at Options.MaxBatch URLs; larger
// batches are split (see Add and Done).
//
// # Caveats
//
// A host handed out stays busy until SetReady says when it may be handed
// out next, or until that lease is given back. Ready times live in memory: after a restart every host is
// ready at once unless SetHostWait persisted a wait. A page and a sitemap
// at the same address are separate entries (Kind), so that a sitemap already
// seen as a link is still read as one. Fairness is by ready time, not by
// share of requests. The database file never shrinks (bbolt does not give
// space back); a done URL takes about 100 bytes.
package frontier
