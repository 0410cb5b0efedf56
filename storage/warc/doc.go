// Package warc writes the crawl's exchanges as WARC 1.1 files
// (output.warc): request, response and revisit records, one gzip member
// each, rotated at a size cap, each file with its CDXJ index beside it.
// Writer is safe for concurrent use.
//
// Responses are kept as received: the status line with its reason phrase,
// the header fields with the values sent, and the body with its
// Content-Encoding (a gzip body stays gzip). Only the transfer coding is
// undone, so Transfer-Encoding is dropped and Content-Length set to the
// length stored. Payload digests are over the body as stored.
//
// The writer picks the record for a visit from the status and the payload:
// a 304 becomes a server-not-modified revisit of the URL's last payload
// (the caller's Ref, or the Index's record for the URL); a complete body
// whose SHA-1 equals that of one already archived, at this URL or any
// other (the Index, kept by the crawler in its state database), an
// identical-payload-digest revisit; anything else a full response. The
// caller teaches the Index the Ref each exchange returns (the crawler
// commits it with the page record, in the same transaction). Both
// revisits always carry WARC-Refers-To, WARC-Refers-To-Target-URI and
// WARC-Refers-To-Date, which is what pywb and replayweb.page need to load
// the original. A server-not-modified revisit has an empty block: both
// tools take the status and headers of a revisit that has them, and the
// 304's would replay as a 304 with no body (replayweb.page showed a blank
// page); with none they take the original's. The 304's own header fields
// are not kept. A 304 with no archived original at all is kept as a
// response record, as received, and left out of the index: a revisit
// naming nothing fails in pywb ("Original for revisit record could not be
// loaded"), and the crawler avoids the case by sending validators only
// for a page whose body the WARC files hold.
//
// # Index
//
// Beside NAME.warc.gz, NAME.cdxj indexes its response and revisit records
// in webrecorder's CDXJ: "SURT TIMESTAMP JSON", the JSON holding url,
// mime, status, digest, length and offset (of the record's gzip member)
// and filename, lines sorted as `LC_ALL=C sort` sorts them. It is written
// when the file is closed (rotated, or the writer closed), from lines kept
// in memory (some 300 bytes a record), 64Ki at most, the rest spilled
// sorted to run files beside it and merged at close. NewWriter writes the
// index of any file a killed run left without one, from its records
// (IndexFile), up to a torn last record, which it cuts off; a file another
// writer holds open in the same directory (an advisory lock, on Unix) is
// left to it. Request records are not indexed (the crawler makes no POST
// for a replay tool to match). The lines are those webrecorder's
// warcio.js (`warcio cdx-index`) makes of the same file, byte for byte:
// the digest without its "sha1:", the SURT key as warcio.js makes it
// (TestWarcioAgrees checks it when node and warcio are at hand).
//
// Reader reads such files back and checks their digests. The crawler itself
// never reads WARC files; the reader is here because the tests use it to
// check what the writer wrote, and it is small enough to keep beside it. A
// Reader is not safe for concurrent use. Package warctest checks the files
// with another library (gowarc), for tests only.
//
// # Specifications
//
// The writer follows ISO 28500:2017 (WARC 1.1): WARC-Record-ID as a random
// urn:uuid, WARC-Date in whole seconds UTC, WARC-Concurrent-To both ways
// between a request and its response, SHA-1 block and payload digests in
// base32 ("sha1:..."), the two revisit profiles of section 6.7 with
// WARC-Refers-To, WARC-Refers-To-Target-URI and WARC-Refers-To-Date, and the
// record-at-a-time gzip and file naming of annexes A and B. The index
// follows webrecorder's CDXJ (specs.webrecorder.net, "CDXJ") with keys made
// as warcio.js makes them (SURT).
//
// # Deviations and caveats
//
// Go's HTTP client does not expose the bytes on the wire, so the request
// record is rebuilt from the request (request line, Host, the other fields
// in key order), and the response header is written in key order with Go's
// canonical case of the names; the values, the status line's reason
// phrase and the body are as sent. HTTP/2 exchanges are recorded with the
// status line "HTTP/2.0 ..." as Go reports the protocol.
//
// The Index is trusted: a state_dir kept while its WARC files are deleted
// makes revisits of records that are gone. Keep the two together.
//
// A crash can leave a torn last record in the file being written; the next
// run starts a new file.
package warc
