// Package warc writes the crawl's exchanges as WARC 1.1 files
// (output.warc): request, response and revisit records, one gzip member
// each, rotated at a size cap. Writer is safe for concurrent use.
//
// The writer picks the record for a visit from the status and the payload:
// a 304 becomes a server-not-modified revisit, a payload equal to the one
// last stored for the URL (by SHA-1, as Ref carries it) an
// identical-payload-digest revisit, anything else a full response. The
// engine keeps the Ref of a URL in its page record (storage.Page.WARC).
//
// Reader reads such files back and checks their digests. The crawler itself
// never reads WARC files; the reader is here because the tests use it to
// check what the writer wrote, and it is small enough to keep beside it. A
// Reader is not safe for concurrent use.
//
// # Specifications
//
// The writer follows ISO 28500:2017 (WARC 1.1): WARC-Record-ID as a random
// urn:uuid, WARC-Date in whole seconds UTC, WARC-Concurrent-To both ways
// between a request and its response, SHA-1 block and payload digests in
// base32 ("sha1:..."), the two revisit profiles of section 6.7 with
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
// A crash can leave a torn last record in the file being written; the next
// run starts a new file.
package warc
