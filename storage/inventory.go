package storage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// FoundVia says how a URL was found.
type FoundVia string

// The ways a URL is found.
const (
	FoundSeed     FoundVia = "seed"
	FoundSitemap  FoundVia = "sitemap"
	FoundLink     FoundVia = "link"
	FoundRedirect FoundVia = "redirect"
)

// RobotsVerdict is what robots.txt said about a URL.
type RobotsVerdict string

// The robots.txt verdicts.
const (
	RobotsAllowed    RobotsVerdict = "allowed"
	RobotsDisallowed RobotsVerdict = "disallowed"
)

// Record is one line of the URL inventory: one visit of one URL, or one URL
// refused before any request. Its JSON form is the contract's: url and status
// are always written (status 0 when there was no response), depth too (0 is
// a seed's), bytes and duration_ms whenever there was a response (an empty
// body and an answer within a millisecond are values too), and every other
// field only when it has a value.
type Record struct {
	URL         string        `json:"url"`
	Status      int           `json:"status"`
	FinalURL    string        `json:"final_url,omitempty"`
	ContentType string        `json:"content_type,omitempty"`
	Bytes       int64         `json:"bytes,omitempty"`
	DurationMS  int64         `json:"duration_ms,omitempty"`
	FetchedAt   time.Time     `json:"fetched_at,omitzero"` // written in UTC, RFC 3339
	Depth       int           `json:"depth"`
	FoundVia    FoundVia      `json:"found_via,omitempty"`
	Referrer    string        `json:"referrer,omitempty"`
	Robots      RobotsVerdict `json:"robots,omitempty"`
	InSitemap   bool          `json:"in_sitemap,omitempty"`
	Lastmod     time.Time     `json:"lastmod,omitzero"` // the sitemap's, RFC 3339
	NotModified bool          `json:"not_modified,omitempty"`
	Gone        bool          `json:"gone,omitempty"`
	Error       string        `json:"error,omitempty"`

	// RedirectChain lists, for a URL that redirects, every hop after it
	// in order; FinalURL is then the chain's last URL.
	RedirectChain []string `json:"redirect_chain,omitempty"`
	// LinkDepth is the URL's link hops from a seed, sitemaps ignored and
	// redirects counting 0; nil when only a sitemap reaches the URL.
	LinkDepth *int `json:"link_depth,omitempty"`
	// External marks a URL of an out-of-scope host asked only to check
	// that a link to it works (scope.check_external).
	External bool `json:"external,omitempty"`

	// What an HTML page with a 2xx answer says of itself (see the
	// README, "Outputs"), each left out when empty.
	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	H1          string     `json:"h1,omitempty"`
	Canonical   string     `json:"canonical,omitempty"`
	MetaRobots  []string   `json:"meta_robots,omitempty"`
	Hreflang    []Hreflang `json:"hreflang,omitempty"`
	LinksOut    int        `json:"links_out,omitempty"`
	// LinksCut counts the references of the page (HTML or CSS) past
	// scope.max_links_per_page: found, neither followed nor in the link
	// graph.
	LinksCut int `json:"links_cut,omitempty"`

	// CanonicalConflict is a second canonical of the page naming another
	// URL than Canonical: a second tag, or the Link header.
	CanonicalConflict string `json:"canonical_conflict,omitempty"`

	// What the audit reads in a 200 HTML page's body (README, "Outputs"):
	// the words of its visible text, the text's hash (identical texts)
	// and SimHash (near ones) as 16 hex digits, <html lang>, how many
	// <h1> and <img> without alt, the time to the first byte, whether an
	// https answer sent Strict-Transport-Security, and the fragment
	// targets (ids and <a name>, at most 1,000).
	WordCount   int      `json:"word_count,omitempty"`
	ContentHash string   `json:"content_hash,omitempty"`
	SimHash     string   `json:"simhash,omitempty"`
	Lang        string   `json:"lang,omitempty"`
	H1Count     int      `json:"h1_count,omitempty"`
	ImgNoAlt    int      `json:"img_no_alt,omitempty"`
	TTFBMS      int64    `json:"ttfb_ms,omitempty"`
	HSTS        bool     `json:"hsts,omitempty"`
	Anchors     []string `json:"anchors,omitempty"`
	// Extracted are the config's custom extractions by name: a string,
	// or a list for one with all: true.
	Extracted map[string]any `json:"extracted,omitempty"`
	// Rendered marks a page rendered in the browser (render.enabled):
	// its page facts are the rendered page's, and RenderMS how long the
	// render took. RenderError says why a page was not rendered; it
	// keeps the links and facts of its served HTML.
	Rendered    bool   `json:"rendered,omitempty"`
	RenderMS    int64  `json:"render_ms,omitempty"`
	RenderError string `json:"render_error,omitempty"`
}

// Hreflang is a page's alternate in another language.
type Hreflang struct {
	Lang string `json:"lang"`
	URL  string `json:"url"`
}

// inventoryBuffer is how many bytes of complete lines the Inventory holds
// before writing them out.
const inventoryBuffer = 64 << 10

// Inventory writes Records as JSON Lines. It is safe for concurrent use.
//
// Lines are buffered (64 KiB) and reach the underlying writer whole, in one
// Write call per flush, so a process killed between flushes leaves no torn
// line. A failed write (a full disk) is returned by Write, Flush or Close;
// the bytes not yet written are kept and retried by the next Flush, and
// while they are pending, Write refuses the records it has no room for, so
// the buffer stays bounded and a partly written line is always completed
// before another begins.
type Inventory struct {
	mu      sync.Mutex
	w       io.Writer
	file    *os.File // non-nil when OpenInventory opened it
	pending []byte   // complete lines (and perhaps the rest of one) not yet written
	scratch []byte   // the line being encoded
	closed  bool
}

// NewInventory returns an Inventory writing to w. Close flushes it but does
// not close w.
func NewInventory(w io.Writer) *Inventory {
	return &Inventory{w: w}
}

// OpenInventory returns an Inventory appending to the file at path, created
// 0o644 if needed, so that a resumed crawl keeps the history of the earlier
// runs. The path "-" means stdout, which is then never closed. If an
// existing file ends in a torn line (a crash, or a full disk, cut the last
// write short), that part line is cut off: its record was never counted
// done, so the crawl writes it again whole.
func OpenInventory(path string, stdout io.Writer) (*Inventory, error) {
	if path == "-" {
		return NewInventory(stdout), nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open inventory: %w", err)
	}
	if err := cutTorn(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open inventory: %w", err)
	}
	inv := NewInventory(f)
	inv.file = f
	return inv, nil
}

// cutTorn truncates a regular file after its last newline, dropping a
// torn last line; a file with no newline at all is emptied.
func cutTorn(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return err
	}
	buf := make([]byte, 64<<10)
	end := fi.Size()
	for end > 0 {
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	if end == fi.Size() {
		return nil
	}
	return f.Truncate(end)
}

// Write appends r as one line, each field cut to its cap (see MaxLine).
// FetchedAt is written in UTC. An error means r was not accepted: the
// buffer was full and could not be written out.
func (inv *Inventory) Write(r Record) error {
	r.FetchedAt = r.FetchedAt.UTC()
	r = r.bounded()
	return inv.writeLine(func(b []byte) ([]byte, error) { return appendRecord(b, &r) })
}

// Link is one line of the link graph (output.links): a link found on a
// fetched page, followed or not (see the README, "Outputs").
type Link struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Kind     string `json:"kind"` // a, area, frame, iframe, link, img, script, css, meta-refresh, canonical, hreflang, redirect
	Rel      string `json:"rel,omitempty"`
	Nofollow bool   `json:"nofollow,omitempty"`
	Anchor   string `json:"anchor,omitempty"`
	// Rendered marks a link found only in the rendered page (or a route
	// its script took), not in the HTML served.
	Rendered bool `json:"rendered,omitempty"`
}

// WriteLink appends l as one line, each field cut to its cap: the link
// graph is written as the inventory is, to a file of its own.
func (inv *Inventory) WriteLink(l Link) error {
	return inv.writeLine(func(b []byte) ([]byte, error) { return appendJSONValue(b, l.bounded()) })
}

// writeLine appends the line that encode appends to its argument, a JSON
// value, and a newline.
func (inv *Inventory) writeLine(encode func([]byte) ([]byte, error)) error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.closed {
		return fmt.Errorf("write inventory: %w", os.ErrClosed)
	}
	scratch, err := encode(inv.scratch[:0])
	if err != nil {
		return fmt.Errorf("encode inventory record: %w", err)
	}
	inv.scratch = append(scratch, '\n')
	line := EscapeJSON(inv.scratch) // no C1 or bidi control raw: discover prints it to terminals
	if len(inv.pending) > 0 && len(inv.pending)+len(line) > inventoryBuffer {
		if err := inv.flush(); err != nil {
			return err
		}
	}
	inv.pending = append(inv.pending, line...)
	return nil
}

// Flush writes the buffered lines out. The engine calls it periodically.
func (inv *Inventory) Flush() error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.flush()
}

// Close flushes the buffered lines and, when OpenInventory opened a file,
// syncs and closes it. Later Writes fail.
func (inv *Inventory) Close() error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.closed {
		return nil
	}
	inv.closed = true
	err := inv.flush()
	if inv.file != nil {
		if fi, serr := inv.file.Stat(); serr == nil && fi.Mode().IsRegular() {
			if serr := inv.file.Sync(); err == nil {
				err = serr
			}
		}
		if cerr := inv.file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("close inventory: %w", err)
	}
	return nil
}

// flush writes pending out, keeping what could not be written.
func (inv *Inventory) flush() error {
	if len(inv.pending) == 0 {
		return nil
	}
	n, err := inv.w.Write(inv.pending)
	if err == nil && n < len(inv.pending) {
		err = io.ErrShortWrite
	}
	inv.pending = inv.pending[:copy(inv.pending, inv.pending[n:])]
	if err != nil {
		return fmt.Errorf("write inventory: %w", err)
	}
	return nil
}

// ReadInventory parses JSON Lines written by an Inventory and calls fn for
// each record in order, stopping at the first error fn returns. Blank lines
// are skipped; a malformed line, or one over 1 MiB, is an error naming its
// line number. Unknown fields are ignored, so newer files stay readable.
func ReadInventory(r io.Reader, fn func(Record) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
				if len(long) > MaxLine {
					return fmt.Errorf("inventory line %d: longer than %d bytes", lineNo, MaxLine)
				}
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read inventory: %w", err)
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			var rec Record
			if uerr := json.Unmarshal(trimmed, &rec); uerr != nil {
				return fmt.Errorf("inventory line %d: %w", lineNo, uerr)
			}
			if ferr := fn(rec); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}
