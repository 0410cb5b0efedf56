package warc

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
)

// DefaultWARCMaxSize is the size at which a WARC file is closed and the next
// one begun, the 1 GB the WARC specification's annex recommends.
const DefaultMaxSize int64 = 1 << 30

// The revisit profiles of WARC 1.1, section 6.7.
const (
	ProfileIdenticalPayload = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
	ProfileNotModified      = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
)

const (
	warcVersion    = "WARC/1.1"
	warcDateFormat = "2006-01-02T15:04:05Z"
	warcSuffix     = ".warc.gz"
	conformsTo     = "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
)

// Options configures a Writer.
type Options struct {
	Dir      string            // where the files go; created if needed
	Prefix   string            // file names begin with it; "" means "crawl"
	MaxSize  int64             // compressed bytes after which a file is rotated; 0 means DefaultWARCMaxSize
	Software string            // the warcinfo "software" field, e.g. "politecrawl/1.0"
	Info     map[string]string // more warcinfo fields (operator, http-header-user-agent, robots, ...)
	// Index, when not nil, finds payloads already archived, at any URL,
	// so that an identical body becomes a revisit.
	Index Index
}

// Index is what the writer asks before it stores a payload: whether one
// with the same digest was archived already (at any URL), and what was
// last archived for a URL, for a 304 whose caller knows no record. The
// caller teaches it the Ref each WriteExchange returns, for the URL of the
// exchange; the crawler keeps it in its state database (storage.Digests),
// and commits each Ref with the page record that holds it. Its methods may
// be called concurrently.
type Index interface {
	ByDigest(digest string) (Ref, bool, error)
	ByURL(uri string) (Ref, bool, error)
}

// Exchange is one HTTP request and the response to it, as the engine saw
// them.
type Exchange struct {
	Date          time.Time   // when the request was sent: the WARC-Date of its records
	Method        string      // "" means GET
	URL           *url.URL    // the URL requested
	Proto         string      // "HTTP/1.1" when empty
	RequestHeader http.Header // as sent; Host is written from URL
	RemoteAddr    string      // the server's IP address, with or without a port
	Status        int         // the response's status code
	Reason        string      // the status line's reason phrase as sent; "" means the standard one
	Header        http.Header // the response header as received
	// Body is the response body as received, at most fetch.max_body: its
	// Content-Encoding kept, only its transfer coding (chunked) undone.
	Body      []byte
	Truncated bool // Body was cut short at fetch.max_body
}

// Ref identifies the record that holds a URL's payload, so that a later
// visit finding the same payload can refer to it rather than store it again.
// Keep it in the Page.
type Ref struct {
	RecordID      string    `json:"id,omitempty"`     // "<urn:uuid:...>"
	TargetURI     string    `json:"uri,omitempty"`    // its WARC-Target-URI
	Date          time.Time `json:"date,omitzero"`    // its WARC-Date (whole seconds, UTC)
	PayloadDigest string    `json:"digest,omitempty"` // "sha1:BASE32" of the payload
}

// Writer writes exchanges to gzip-compressed WARC 1.1 files named
// PREFIX-YYYYMMDDhhmmss-NNNNN.warc.gz, each record its own gzip member, each
// file headed by a warcinfo record. It is safe for concurrent use.
//
// A file is rotated once it reaches MaxSize, between exchanges, so that a
// request and its response share a file: a file exceeds MaxSize by at most
// one exchange. Every exchange is flushed to the file before WriteExchange
// returns. After a write error (a full disk) the file is cut back to its
// last whole exchange and abandoned, and the next exchange starts a new
// one, so a failure leaves no torn record in a file.
type Writer struct {
	opts Options

	mu     sync.Mutex
	serial int // of the last file begun
	f      *os.File
	count  countingWriter
	bw     *bufio.Writer
	gz     *gzip.Writer
	infoID string // WARC-Record-ID of the current file's warcinfo
	head   bytes.Buffer
	lines  []string // the CDXJ lines of the current file not yet in runs
	runs   []string // run files of the current file's index (spillIndex)
	// spillAt is how many lines are held before they go to a run:
	// indexSpill, less in tests.
	spillAt int
	closed  bool
}

// NewWriter returns a writer into opts.Dir. It opens no file until the
// first exchange, and numbers its files after any already in the directory
// with the same prefix, so a resumed crawl adds files and overwrites none.
func NewWriter(opts Options) (*Writer, error) {
	if opts.Dir == "" {
		return nil, errors.New("warc: empty directory")
	}
	if opts.Prefix == "" {
		opts.Prefix = "crawl"
	}
	if strings.ContainsAny(opts.Prefix, `/\`) || opts.Prefix == "." || opts.Prefix == ".." {
		return nil, fmt.Errorf("warc: prefix %q is not a plain file name", opts.Prefix)
	}
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	serial, err := lastSerial(opts.Dir, opts.Prefix)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	if err := indexMissing(opts.Dir, opts.Prefix); err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	gz, err := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	return &Writer{opts: opts, serial: serial, gz: gz, spillAt: indexSpill}, nil
}

// indexMissing writes the CDXJ index of every WARC file of dir with the
// prefix that has none: a file a killed run left open. Its torn last
// record, if any, is left out, and cut off the file (indexCut).
func indexMissing(dir, prefix string) error {
	names, err := filepath.Glob(filepath.Join(dir, prefix+"-*"+warcSuffix))
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := os.Stat(IndexPath(name)); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		lines, open, err := indexCut(name)
		if err != nil {
			return err
		}
		if open {
			continue // another writer's, which indexes it when it closes it
		}
		runs, _ := filepath.Glob(filepath.Join(dir, "."+filepath.Base(IndexPath(name))+".run*"))
		for _, run := range runs { // the killed run's spilled lines: these are whole
			os.Remove(run)
		}
		if err := writeIndex(IndexPath(name), lines, nil); err != nil {
			return err
		}
	}
	return nil
}

// indexCut returns the CDXJ lines of the WARC file a killed run left at
// path, and cuts its torn last record off it, as the inventory's is cut:
// the file then reads whole (and a WACZ made of it), and no writer will
// append to it, the next run beginning a file of its own. A file that
// cannot be written is indexed as it is, what is before a tear only. A
// file another writer still holds open (its lock, lockFile) is left
// alone: open is true, and it is neither read nor cut.
func indexCut(path string) (lines []string, open bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		lines, _ := IndexFile(path)
		return lines, false, nil
	}
	defer f.Close()
	if !lockFile(f) {
		return nil, true, nil
	}
	lines, end, torn := IndexRecords(f, filepath.Base(path))
	if torn != nil {
		if err := f.Truncate(end); err != nil {
			return nil, false, err
		}
	}
	return lines, false, nil
}

// lastSerial returns the highest serial number among dir's WARC files with
// the prefix, or 0.
func lastSerial(dir, prefix string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	last := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix+"-")
		if !ok {
			continue
		}
		rest, ok = strings.CutSuffix(rest, warcSuffix)
		if !ok {
			continue
		}
		_, num, ok := strings.Cut(rest, "-")
		if n, err := strconv.Atoi(num); ok && err == nil && n > last {
			last = n
		}
	}
	return last, nil
}

// WriteExchange archives one exchange as a request record followed by:
//
//   - for a 304, a revisit record with the server-not-modified profile,
//     referring to prev, or when prev is the zero Ref to what the Index
//     last archived for the URL;
//   - when the body is complete, not empty, and its digest is prev's or
//     one the Index knows (at any URL), a revisit record with the
//     identical-payload-digest profile, holding only the response header;
//   - otherwise a response record with the whole response.
//
// Both revisits carry WARC-Refers-To, WARC-Refers-To-Target-URI and
// WARC-Refers-To-Date of the record they point to. A 304 with nothing to
// refer to is kept as a response record, as received (a revisit naming no
// original is one a replay tool fails on); the index leaves it out.
//
// prev is the Ref of the URL's last stored payload, or the zero Ref.
// WriteExchange returns the Ref to keep for next time: the record a
// revisit points to, or the new response record.
//
// The response record holds the status line, the header and the body as
// received, Content-Encoding and all. Since the body is no longer chunked,
// Transfer-Encoding is dropped, and Content-Length is set to the length of
// the body stored when it is complete. A truncated body is marked with
// WARC-Truncated: length.
func (w *Writer) WriteExchange(ex Exchange, prev Ref) (Ref, error) {
	if ex.URL == nil || ex.Date.IsZero() || ex.Status < 100 || ex.Status > 999 {
		return Ref{}, errors.New("warc: exchange needs a URL, a date and a status")
	}
	target := oneLine(ex.URL.String())
	date := ex.Date.UTC().Truncate(time.Second)
	ip := remoteIP(ex.RemoteAddr)
	reqID, respID := newRecordID(), newRecordID()

	common := func(typ, id, concurrent string) []field {
		fs := []field{
			{"WARC-Type", typ},
			{"WARC-Record-ID", id},
			{"WARC-Date", date.Format(warcDateFormat)},
			{"WARC-Target-URI", target},
			{"WARC-Concurrent-To", concurrent},
		}
		if ip != "" {
			fs = append(fs, field{"WARC-IP-Address", ip})
		}
		return fs
	}
	reqFields := append(common("request", reqID, respID),
		field{"Content-Type", "application/http;msgtype=request"})
	reqHead := requestHead(ex)

	payload := sha1.New()
	payload.Write(ex.Body)
	digest := sha1Label(payload)
	respHead := responseHead(ex)
	orig, profile, err := w.original(ex, prev, target, digest)
	if err != nil {
		return Ref{}, err
	}

	var (
		respFields []field
		respBlock  [][]byte
		ref        Ref
	)
	switch profile {
	case ProfileNotModified:
		respFields = append(common("revisit", respID, reqID),
			field{"WARC-Profile", ProfileNotModified})
		respFields = appendRefersTo(respFields, orig)
		if orig.PayloadDigest != "" {
			respFields = append(respFields, field{"WARC-Payload-Digest", orig.PayloadDigest})
		}
		// An empty block: replay tools take the headers of a revisit
		// that has any, and the 304's would replay as a 304 with nothing.
		respBlock = [][]byte{nil}
		ref = orig
	case ProfileIdenticalPayload:
		respFields = append(common("revisit", respID, reqID),
			field{"WARC-Profile", ProfileIdenticalPayload})
		respFields = appendRefersTo(respFields, orig)
		respFields = append(respFields,
			field{"WARC-Payload-Digest", digest},
			field{"WARC-Truncated", "length"})
		respBlock = [][]byte{respHead}
		ref = orig
	default:
		respFields = append(common("response", respID, reqID),
			field{"WARC-Payload-Digest", digest})
		if ex.Truncated {
			respFields = append(respFields, field{"WARC-Truncated", "length"})
		}
		respBlock = [][]byte{respHead, ex.Body}
		ref = prev
		if ex.Status != http.StatusNotModified {
			ref = Ref{RecordID: respID, TargetURI: target, Date: date, PayloadDigest: digest}
		}
	}
	if len(respBlock[0]) > 0 {
		respFields = append(respFields, field{"Content-Type", "application/http;msgtype=response"})
	}

	if err := w.write(date, reqFields, reqHead, respFields, respBlock); err != nil {
		return Ref{}, err
	}
	return ref, nil
}

// indexable reports whether the payload of ex, stored in a response
// record, is one a later identical body may refer to.
func (w *Writer) indexable(ex Exchange) bool {
	return len(ex.Body) > 0 && !ex.Truncated && ex.Status != http.StatusNotModified
}

// original returns the record a revisit for ex points to and the revisit's
// profile, or a zero Ref and "" when ex is to be a response record.
func (w *Writer) original(ex Exchange, prev Ref, target, digest string) (Ref, string, error) {
	idx := w.opts.Index
	switch {
	case ex.Status == http.StatusNotModified:
		if prev.TargetURI == "" && idx != nil {
			var err error
			if prev, _, err = idx.ByURL(target); err != nil {
				return Ref{}, "", fmt.Errorf("warc: index %s: %w", target, err)
			}
		}
		if prev.TargetURI == "" || prev.Date.IsZero() {
			return Ref{}, "", nil
		}
		return prev, ProfileNotModified, nil
	case !w.indexable(ex):
		return Ref{}, "", nil
	case digest == prev.PayloadDigest && prev.TargetURI != "" && !prev.Date.IsZero():
		return prev, ProfileIdenticalPayload, nil
	case idx != nil:
		orig, ok, err := idx.ByDigest(digest)
		if err != nil {
			return Ref{}, "", fmt.Errorf("warc: index %s: %w", target, err)
		}
		if ok && orig.TargetURI != "" && !orig.Date.IsZero() {
			return orig, ProfileIdenticalPayload, nil
		}
	}
	return Ref{}, "", nil
}

// write writes a request record and its response (or revisit) record to
// the current file, and indexes the second.
func (w *Writer) write(date time.Time, reqFields []field, reqHead []byte, respFields []field, respBlock [][]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("warc: %w", os.ErrClosed)
	}
	if err := w.ready(date); err != nil {
		return err
	}
	start := w.count.n // the last exchange was flushed
	_, _, err := w.writeRecord(reqFields, reqHead)
	var offset, length int64
	if err == nil {
		offset, length, err = w.writeRecord(respFields, respBlock...)
	}
	if err == nil {
		err = w.bw.Flush()
	}
	if err != nil {
		name := w.f.Name()
		w.abandon(start) // its error is already the story
		return fmt.Errorf("warc %s: %w", filepath.Base(name), err)
	}
	get := func(name string) string {
		for _, f := range respFields {
			if f.name == name {
				return f.value
			}
		}
		return ""
	}
	if e, ok := indexEntry(get, respBlock[0], offset, length, filepath.Base(w.f.Name())); ok {
		w.lines = append(w.lines, e.Line())
	}
	if len(w.lines) >= w.spillAt {
		// On failure the lines stay in memory; a full disk tells at
		// the next write.
		if run, err := spillIndex(IndexPath(w.f.Name()), w.lines); err == nil {
			w.runs, w.lines = append(w.runs, run), nil
		}
	}
	return nil
}

// Close flushes and closes the current file. Later writes fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.closeFile(); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	return nil
}

// ready rotates the current file if it is full and begins one if there is
// none.
func (w *Writer) ready(date time.Time) error {
	if w.f != nil && w.count.n >= w.opts.MaxSize {
		if err := w.closeFile(); err != nil {
			return fmt.Errorf("warc: %w", err)
		}
	}
	if w.f != nil {
		return nil
	}
	return w.openFile(date)
}

// openFile begins the next file, named after date, with its warcinfo record.
func (w *Writer) openFile(date time.Time) error {
	var (
		f   *os.File
		err error
	)
	for range 100 { // another writer may have taken a name
		w.serial++
		name := fmt.Sprintf("%s-%s-%05d%s", w.opts.Prefix, date.Format("20060102150405"), w.serial, warcSuffix)
		f, err = os.OpenFile(filepath.Join(w.opts.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	lockFile(f) // released when f is closed
	w.f = f
	w.count = countingWriter{w: f}
	w.bw = bufio.NewWriterSize(&w.count, 64<<10)
	w.infoID, w.lines = "", nil
	id := newRecordID()
	_, _, err = w.writeRecord([]field{
		{"WARC-Type", "warcinfo"},
		{"WARC-Record-ID", id},
		{"WARC-Date", date.Format(warcDateFormat)},
		{"WARC-Filename", filepath.Base(f.Name())},
		{"Content-Type", "application/warc-fields"},
	}, w.warcinfo())
	if err == nil {
		err = w.bw.Flush()
	}
	if err != nil {
		w.abandon(0)
		os.Remove(f.Name())
		os.Remove(IndexPath(f.Name()))
		return fmt.Errorf("warc %s: %w", filepath.Base(f.Name()), err)
	}
	w.infoID = id
	return nil
}

// warcinfo returns the block of a warcinfo record: application/warc-fields.
func (w *Writer) warcinfo() []byte {
	var b bytes.Buffer
	put := func(k, v string) {
		if v != "" {
			b.WriteString(oneLine(k) + ": " + oneLine(v) + "\r\n")
		}
	}
	put("software", w.opts.Software)
	put("format", "WARC File Format 1.1")
	put("conformsTo", conformsTo)
	keys := make([]string, 0, len(w.opts.Info))
	for k := range w.opts.Info {
		if validToken(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		put(k, w.opts.Info[k])
	}
	return b.Bytes()
}

// abandon cuts the current file back to end, where its last whole record
// ends, dropping what a failed write (a full disk) left of the records
// after it, and closes it: the file reads whole, and the next exchange
// begins a file of its own.
func (w *Writer) abandon(end int64) {
	w.f.Truncate(end) // on failure, the tail is a torn record a reader reports
	w.bw.Reset(io.Discard)
	w.closeFile()
}

// closeFile flushes and closes the current file, if any, and writes its
// CDXJ index beside it: the records written whole, sorted.
func (w *Writer) closeFile() error {
	if w.f == nil {
		return nil
	}
	err := w.bw.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if ierr := writeIndex(IndexPath(w.f.Name()), w.lines, w.runs); err == nil && ierr != nil {
		err = fmt.Errorf("index: %w", ierr)
	}
	for _, run := range w.runs {
		os.Remove(run)
	}
	w.f, w.bw, w.lines, w.runs = nil, nil, nil, nil
	return err
}

type field struct{ name, value string }

// writeRecord writes one record as its own gzip member: the header fields,
// the WARC-Warcinfo-ID, WARC-Block-Digest and Content-Length of the block
// made of the parts, then the block and the closing CRLF CRLF. It returns
// where in the file the member begins and its length.
func (w *Writer) writeRecord(fields []field, parts ...[]byte) (offset, length int64, err error) {
	block := sha1.New()
	var size int
	for _, p := range parts {
		block.Write(p)
		size += len(p)
	}
	h := &w.head
	h.Reset()
	h.WriteString(warcVersion + "\r\n")
	for _, f := range fields {
		h.WriteString(f.name + ": " + oneLine(f.value) + "\r\n")
	}
	if w.infoID != "" {
		h.WriteString("WARC-Warcinfo-ID: " + w.infoID + "\r\n")
	}
	h.WriteString("WARC-Block-Digest: " + sha1Label(block) + "\r\n")
	h.WriteString("Content-Length: " + strconv.Itoa(size) + "\r\n\r\n")

	offset = w.count.n + int64(w.bw.Buffered())
	w.gz.Reset(w.bw)
	if _, err := w.gz.Write(h.Bytes()); err != nil {
		return 0, 0, err
	}
	for _, p := range parts {
		if _, err := w.gz.Write(p); err != nil {
			return 0, 0, err
		}
	}
	if _, err := io.WriteString(w.gz, "\r\n\r\n"); err != nil {
		return 0, 0, err
	}
	if err := w.gz.Close(); err != nil {
		return 0, 0, err
	}
	return offset, w.count.n + int64(w.bw.Buffered()) - offset, nil
}

// requestHead reconstructs the request as sent: request line, Host, then the
// other header fields in key order.
func requestHead(ex Exchange) []byte {
	var b bytes.Buffer
	method := ex.Method
	if method == "" {
		method = http.MethodGet
	}
	b.WriteString(oneLine(method) + " " + oneLine(ex.URL.RequestURI()) + " " + proto(ex) + "\r\n")
	b.WriteString("Host: " + oneLine(ex.URL.Host) + "\r\n")
	writeHeader(&b, ex.RequestHeader, "Host")
	b.WriteString("\r\n")
	return b.Bytes()
}

// responseHead returns the status line and header of the response as it is
// stored, adjusted as WriteExchange describes.
func responseHead(ex Exchange) []byte {
	h := ex.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Del("Transfer-Encoding")
	if !ex.Truncated && ex.Status >= 200 && ex.Status != http.StatusNoContent && ex.Status != http.StatusNotModified {
		h.Set("Content-Length", strconv.Itoa(len(ex.Body))) // (a 1xx, 204 or 304 has none: RFC 9110, 8.6)
	}
	reason := ex.Reason
	if reason == "" {
		reason = http.StatusText(ex.Status)
	}
	var b bytes.Buffer
	b.WriteString(proto(ex) + " " + strconv.Itoa(ex.Status) + " " + oneLine(reason) + "\r\n")
	writeHeader(&b, h)
	b.WriteString("\r\n")
	return b.Bytes()
}

func proto(ex Exchange) string {
	if ex.Proto == "" {
		return "HTTP/1.1"
	}
	return oneLine(ex.Proto)
}

// writeHeader writes h in key order, skipping the keys in skip and any key
// that is not an HTTP token, with line breaks in values made spaces.
func writeHeader(b *bytes.Buffer, h http.Header, skip ...string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		if validToken(k) && !slices.ContainsFunc(skip, func(s string) bool { return strings.EqualFold(s, k) }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			b.WriteString(k + ": " + oneLine(v) + "\r\n")
		}
	}
}

// validToken reports whether s is an RFC 9110 token, fit to be a field name.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7F || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// oneLine replaces CR and LF with spaces, so a value cannot end a header.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

func appendRefersTo(fs []field, prev Ref) []field {
	if prev.RecordID != "" {
		fs = append(fs, field{"WARC-Refers-To", prev.RecordID})
	}
	if prev.TargetURI != "" {
		fs = append(fs, field{"WARC-Refers-To-Target-URI", prev.TargetURI})
	}
	if !prev.Date.IsZero() {
		fs = append(fs, field{"WARC-Refers-To-Date", prev.Date.UTC().Format(warcDateFormat)})
	}
	return fs
}

// remoteIP returns the address part of addr ("1.2.3.4:80" or "1.2.3.4"),
// or "" when it is not an IP address.
func remoteIP(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	if ip := net.ParseIP(addr); ip != nil {
		return ip.String()
	}
	return ""
}

// newRecordID returns a fresh random (version 4) UUID URN in angle brackets.
func newRecordID() string {
	var u [16]byte
	rand.Read(u[:]) // never fails (crypto/rand, Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u[:])
	return "<urn:uuid:" + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:] + ">"
}

// sha1Label formats a SHA-1 digest as WARC writers customarily do.
func sha1Label(h hash.Hash) string {
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
