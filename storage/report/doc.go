// Package report makes the audit of a crawl, `crawler report`, from its
// inventory (JSON Lines of storage.Record) and its link graph (JSON Lines
// of storage.Link): the README's "Audit report" is the contract, and
// Report's members are its table's.
//
// # Inputs
//
// The last record of a URL is its current state, wherever it is: a
// resumed crawl's file, or several workers' files concatenated, are read
// as one. Two facts outlive a later record: in_sitemap (a sitemap listed
// the URL; a later record made without that sitemap in hand does not
// unlist it) and, for a 304 revisit (not_modified), the page facts of the
// answer before it (status for the page tables, HTML or not, title,
// description, canonical, meta robots, bytes), which the 304 confirms;
// the overview counts the 304 as a 304. A malformed line (a torn write of
// a crawl still running or killed, or a line longer than 1 MiB) is skipped
// and counted in a warning that gives the first one's number; a missing
// link graph is a warning, and the tables that need it are null.
//
// A link's target is found as written, then without its fragment, then
// by its canonical key (frontier.Canonicalize, the crawler's identity of
// URLs); a target with no record is not in any table.
//
// # Tables
//
// External records (external: true, asked by scope.check_external) are
// counted in overview and listed in broken, and in nothing else. Every
// list is sorted by URL (slowest and largest too: the text, CSV and HTML
// formats show those by value).
//
//   - overview: urls are the distinct URLs with a record; fetched those
//     asked, with an answer or a network error of their own request (not
//     those of a host given up on because its robots.txt got no answer:
//     never requested, though broken), by_status by their current
//     status (error: no answer); disallowed is robots "disallowed";
//     out_of_scope is an error starting "out of scope" (admit.go's
//     "out of scope: REASON"); pages_html the 2xx HTML pages of the
//     crawl's hosts. URLs not fetched for other reasons (max_pages, a
//     host given up on, robots.txt answering 5xx) count in urls only.
//   - broken: a final status of 400 or more, or a network error (status
//     0 with an error that is not one of the engine's refusals; a host
//     given up on because its robots.txt got no answer at all is a
//     network error, one whose robots.txt answered 5xx or 429 is not). A URL
//     that redirects is judged by the end of its chain, with that end's
//     status; a loop is not broken (it is in redirects). inlinks are
//     every page with a link of any kind to it (an <img> to a 404 is a
//     broken link too), once per page with its first non-empty anchor,
//     sorted by page.
//   - redirects: every 3xx answer bar 304. The chain is redirect_chain
//     when the record has it, else final_url followed from record to
//     record (for inventories written before redirect_chain); hops count
//     to its end, final_status is the end's status (0 when the end has no
//     record). loop is the engine's "redirect loop" error or a chain that
//     comes back to a URL; final_url is then the last hop.
//   - orphans: URLs a sitemap lists to which no fetched page has a link,
//     other than to itself (a fragment aside, or in another form of its
//     URL: the same canonical key). Every line of the link
//     graph is a link, as the README has it: a <link> (rel=next and the
//     like), a canonical and an hreflang alternate are ways in for a
//     crawler, and the crawl follows them; nofollow links count too. A
//     record's redirect_chain and final_url count as redirect links, but
//     for a hop to the URL it leaves (a redirect to itself).
//   - not_in_sitemap: 200 HTML pages without noindex whose canonical is
//     absent or themselves, reached by links (link_depth present, or
//     found_via seed or link in older inventories), that no sitemap
//     lists; null when no sitemap was read (no record is in_sitemap or
//     found_via sitemap).
//   - sitemap_issues: for URLs a sitemap lists, the first of disallowed
//     (robots), redirect (3xx), not-200, noindex, canonicalised (a
//     canonical other than the page) that applies.
//   - noindex, nofollow: meta_robots holds the directive, or "none".
//   - canonicals: pages whose canonical is not themselves, compared by
//     canonical key (case of scheme and host, default port, dot segments,
//     percent-encoding), with the first of: not-http (no http(s) URL),
//     other-host (another origin: scheme, host and port, as the README
//     defines a host), not-200 (the canonical's record, at the end of its
//     redirects, is not a 200; a canonical with no record is not judged
//     so), elsewhere.
//   - titles, descriptions: over 200 HTML pages of the crawl's hosts,
//     those with none, and each text (exactly as recorded) that more than
//     one has. A duplicate is {title, urls} or {description, urls}.
//   - depth: 200 HTML pages by link_depth; pages without one (reached
//     only by sitemaps) are not counted.
//   - slowest, largest: the 20 URLs of the crawl's hosts with an answer
//     (any type) with the greatest duration_ms and bytes, ties to the
//     lesser URL.
//   - compare (with Inputs.Previous): URLs of the crawl's hosts, not
//     refused by scope, matched by canonical key too, with a
//     record now and not before (new), before and not now (gone), and
//     the changes of status (a 304 standing for the status it confirms),
//     title, canonical (as written) and noindex of the others.
//
// # Verdicts
//
// judgeAll applies the README's rules ("The audit's verdicts and CI")
// to the tables and the page facts, into findings, one per (rule, URL),
// and rules, the count of each. Where the README leaves room:
//
//   - broken-link is judged over link graph lines of the README's
//     "links" kinds; without a link graph, over broken URLs found by a
//     link. Options.Accept makes statuses not broken, in broken too.
//   - redirect-chain is a chain of 2 hops or more that does not loop (a
//     loop is redirect-loop only).
//   - link-to-redirect and mixed-content read the link graph's kind and
//     rel: an a link; img, script, css and link rel=stylesheet, icon,
//     preload, modulepreload or manifest as requisites.
//   - hreflang-no-return asks only targets that answered 200 themselves;
//     hreflang-broken, targets with a record (as canonicals' not-200).
//   - The rules on the body's facts (img-alt-missing, lang-missing,
//     thin-content, h1-multiple, hsts-missing, the duplicates,
//     broken-fragment) judge only records that have content_hash: an
//     inventory of a crawl that did not record them is not judged on them.
//     Pages with no words are no duplicates of each other.
//   - near-duplicate compares 64-bit SimHashes of the pages' words:
//     similarity is cos(π·d/64) for d bits apart (Charikar's estimate of
//     the cosine of the word counts), at least Options.NearDuplicate
//     (0.9: at most 9 bits). Pairs are found by the block method (Manku
//     et al., 2007): the bits cut into d+2 blocks (8 to 16), a table
//     sorted by each pair of them,
//     and each page compared with the 8 after it in a bucket of a table;
//     a bucket of thousands of alike pages may hide a pair, never make a
//     false one (on the generated crawl of a million pages, a window of 8
//     finds 96,752 near-duplicates, one of 16 finds 96,870, 6 s of CPU later).
//   - broken-fragment: the link graph's workers note the (page, fragment
//     hash) pairs that links ask of 200 HTML pages; the inventory is then
//     read a second time (so it must be a file: an io.Seeker) for the
//     anchors of those pages only. A page with 1,000 anchors, as many as
//     the crawl keeps, is not judged; a fragment is compared percent-decoded.
//     The finding's URL is the page's URL as recorded, '#', and the
//     fragment as first written.
//   - pages: inlinks are distinct pages with an a or area link (not to
//     themselves); PageRank runs over the links between 200 HTML pages,
//     collected as (from, to) ids in fixed blocks, sorted, made compressed
//     sparse rows in place, and iterated to a change under 1e-9 (at most
//     100 times).
//   - CI: MarkBaseline marks the findings an earlier report's JSON had
//     (rule and URL); FailOn picks those that fail a gate; WriteJUnit,
//     WriteSARIF, WriteGitHub and WriteMarkdown write the findings for CI.
//
// # Formats
//
// What a crawled site wrote is data, never markup or a command:
// WriteText (and WriteTextFit, which fits a terminal's width, cutting the
// widest cells in the middle with "…") turns C0 controls into spaces and
// writes C1 and bidi controls, U+2028 and U+2029 as \uXXXX; WriteJSON
// escapes those as \uXXXX too; WriteCSV writes a cell that begins with
// =, +, -, @, a tab or a carriage return after a single quote (OWASP's
// defence against CSV injection); WriteHTML escapes every text with
// html/template and links only http(s) URLs.
//
// # Memory and time
//
// Build reads the inventory first, keeping per URL a fixed struct of
// numbers and flags plus the strings the tables print (title,
// description, a canonical other than the URL, an error), with URLs
// interned to uint32 ids by a hash table of their 64-bit hashes (index).
// It then streams the link graph, keeping a bitset of link targets and
// the inlinks of broken URLs only. Both files are read in 1 MiB chunks of
// whole lines, parsed on two goroutines: the inventory with encoding/json
// (records applied in file order by a third), the link graph with a
// scanner for storage.Link's shape that leaves anything else to
// encoding/json. A million records and twenty million links with every
// rule on take about 58 s of CPU and 832 MiB at peak (BenchmarkReportLarge's
// files, and the README). WriteJSON streams long lists.
//
// # Caveats
//
// The link graph has no visit id: a page's links from an earlier visit
// count as its links still. Titles are compared exactly, case and all.
package report
