// Package storage keeps what the crawl knows of the URLs it fetched:
//
//   - the URL inventory (Inventory, Record): JSON Lines, one object per
//     visit, appended as visits happen, with the fields the README lists
//     (output.urls, and what `crawler discover` prints), and the link
//     graph (Link, Inventory.WriteLink; output.links), written the same way;
//   - page records (Pages, Page): per canonical URL, what the last visit
//     found — status, ETag, Last-Modified, content hash, unchanged streak,
//     mirror path, WARC reference — in a bbolt database shared with the
//     frontier, under buckets named "storage.*";
//   - the WARC writer's index of archived payloads (Digests, a
//     warc.Index): by payload digest and by URL, so that identical bodies
//     and 304s become revisits of records the WARC files hold;
//   - the state database itself (Open, State, RobotsStates).
//
// The bodies are kept by its subpackages, one job each: storage/mirror
// writes the browsable mirror and rewrites its links, storage/warc writes
// WARC files, and storage/links is the one scanner of HTML and CSS that
// knows what a link is, for the crawler and for the mirror.
//
// Nothing here fetches, schedules or reads the clock: the engine passes
// times in, and calls Flush on the inventory as often as it wants lines to
// reach the disk. Inventory and Pages are safe for concurrent use.
//
// # Caveats
//
// Inventory lines reach the file whole; a torn last line left by a crash
// is repaired when the file is opened again. Every field of a record and a
// link is cut to a cap as it is written (bounds.go, and the README's
// "Caps"), so that no line is over MaxLine, the longest a reader takes: a
// title of a megabyte is kept as its first 1,024 characters.
package storage
