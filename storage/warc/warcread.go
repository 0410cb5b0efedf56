package warc

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// ErrDigestMismatch is returned when a WARC record's block or payload does
// not match the digest its header declares.
var ErrDigestMismatch = errors.New("digest mismatch")

// Limits that keep a hostile or broken WARC file from taking unbounded
// memory: the header of one record, and one line of it.
const (
	maxWARCHeader = 256 << 10
	maxWARCLine   = 64 << 10
)

// WARCRecord is one record read back by a Reader.
type Record struct {
	Version string               // "WARC/1.1"
	Header  textproto.MIMEHeader // the named fields; Get is case-insensitive
	Offset  int64                // where the gzip member holding it begins; in an uncompressed file, where it begins
	Block   io.Reader            // the block; valid until the next call to Next
}

// Reader reads the records of one WARC file, gzip-compressed (one or
// more records per member) or not, and verifies their digests.
//
// The WARC-Block-Digest of every record, and the WARC-Payload-Digest of
// request, response and resource records, are checked when the block has
// been read to its end, whether by the caller or by Next skipping it: a
// mismatch makes the Read that reaches the end, or the following Next,
// return an error wrapping ErrDigestMismatch. Digests are verified for
// sha1 and sha256, in base32 or hex; others are not checked. The payload of
// an application/http block is everything after its header, as stored (a
// chunked body is not decoded).
//
// After a digest mismatch, Next goes on with the following record; after
// any other error (a malformed or torn record) the reader cannot go on.
// Memory stays bounded whatever the input: blocks are streamed, and a
// record's header may not exceed 256 KiB.
type Reader struct {
	count  countingReader
	raw    *bufio.Reader // the file
	gz     *gzip.Reader  // nil for an uncompressed file
	data   *bufio.Reader // the uncompressed records
	cur    *blockReader
	offset int64 // of the current gzip member
}

// NewWARCReader returns a reader of the WARC file r.
func NewReader(r io.Reader) (*Reader, error) {
	wr := &Reader{count: countingReader{r: r}}
	wr.raw = bufio.NewReaderSize(&wr.count, 64<<10)
	magic, err := wr.raw.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read warc: %w", err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(wr.raw)
		if err != nil {
			return nil, fmt.Errorf("read warc: %w", err)
		}
		gz.Multistream(false)
		wr.gz = gz
		wr.data = bufio.NewReaderSize(gz, maxWARCLine)
	} else {
		wr.data = wr.raw
	}
	return wr, nil
}

// Next returns the next record, or io.EOF after the last. It first reads
// whatever the caller left of the previous record's block, so a digest
// mismatch there the caller has not seen is returned here; calling Next
// again then goes on with the following record.
func (wr *Reader) Next() (*Record, error) {
	if cur := wr.cur; cur != nil {
		wr.cur = nil
		reported := cur.done // the caller has seen how the block ended
		_, err := io.Copy(io.Discard, cur)
		if err != nil && !errors.Is(err, ErrDigestMismatch) {
			return nil, err
		}
		if terr := wr.readTrailer(); terr != nil {
			return nil, fmt.Errorf("warc record %s: %w", cur.id, terr)
		}
		if err != nil && !reported {
			return nil, err // the reader can go on past a bad digest
		}
	}
	offset, err := wr.nextRecordStart()
	if err != nil {
		return nil, err
	}
	version, header, err := wr.readHeader()
	if err != nil {
		return nil, fmt.Errorf("warc record at %d: %w", offset, err)
	}
	length, err := strconv.ParseInt(header.Get("Content-Length"), 10, 64)
	if err != nil || length < 0 {
		return nil, fmt.Errorf("warc record at %d: bad Content-Length %q", offset, header.Get("Content-Length"))
	}
	wr.cur = newBlockReader(io.LimitReader(wr.data, length), length, header)
	return &Record{Version: version, Header: header, Offset: offset, Block: wr.cur}, nil
}

// nextRecordStart skips blank lines and, in a gzip file, moves on to the
// next member when the current one is used up. It returns the offset of
// the record about to be read, or io.EOF.
func (wr *Reader) nextRecordStart() (int64, error) {
	for {
		if wr.gz == nil {
			wr.offset = wr.count.n - int64(wr.raw.Buffered())
		}
		b, err := wr.data.Peek(1)
		switch {
		case err == nil && (b[0] == '\r' || b[0] == '\n'):
			wr.data.ReadByte()
			continue
		case err == nil:
			return wr.offset, nil
		case !errors.Is(err, io.EOF):
			return 0, fmt.Errorf("read warc: %w", err)
		case wr.gz == nil:
			return 0, io.EOF
		}
		// The gzip member is done; the next one begins here.
		wr.offset = wr.count.n - int64(wr.raw.Buffered())
		if err := wr.gz.Reset(wr.raw); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			return 0, fmt.Errorf("read warc at %d: %w", wr.offset, err)
		}
		wr.gz.Multistream(false)
		wr.data.Reset(wr.gz)
	}
}

// readHeader reads the version line and the named fields up to the blank
// line, joining continuation lines.
func (wr *Reader) readHeader() (string, textproto.MIMEHeader, error) {
	total := 0
	version, err := wr.readLine(&total)
	if err != nil {
		return "", nil, err
	}
	if !strings.HasPrefix(version, "WARC/") {
		return "", nil, fmt.Errorf("no WARC version line, got %.40q", version)
	}
	header := textproto.MIMEHeader{}
	var lastKey string
	for {
		line, err := wr.readLine(&total)
		if err != nil {
			return "", nil, err
		}
		if line == "" {
			return version, header, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			if lastKey == "" {
				return "", nil, errors.New("continuation line before any field")
			}
			vs := header[lastKey]
			vs[len(vs)-1] += " " + strings.TrimSpace(line)
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || !validToken(k) {
			return "", nil, fmt.Errorf("malformed field line %.40q", line)
		}
		lastKey = textproto.CanonicalMIMEHeaderKey(k)
		header[lastKey] = append(header[lastKey], strings.TrimSpace(v))
	}
}

// readLine reads one header line without its line ending, counting its
// bytes against maxWARCHeader.
func (wr *Reader) readLine(total *int) (string, error) {
	line, err := wr.data.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return "", fmt.Errorf("header line longer than %d bytes", maxWARCLine)
	case errors.Is(err, io.EOF):
		return "", io.ErrUnexpectedEOF
	case err != nil:
		return "", err
	}
	*total += len(line)
	if *total > maxWARCHeader {
		return "", fmt.Errorf("header longer than %d bytes", maxWARCHeader)
	}
	return string(bytes.TrimRight(line, "\r\n")), nil
}

// readTrailer reads the CRLF CRLF that ends every record.
func (wr *Reader) readTrailer() error {
	var end [4]byte
	if _, err := io.ReadFull(wr.data, end[:]); err != nil {
		return fmt.Errorf("record end: %w", noEOF(err))
	}
	if string(end[:]) != "\r\n\r\n" {
		return fmt.Errorf("record not followed by CRLF CRLF, got %q", end[:])
	}
	return nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// blockReader reads a record's block and checks its digests at the end.
type blockReader struct {
	r      io.Reader
	left   int64
	id     string
	block  digestCheck
	pay    digestCheck
	inBody bool // past the HTTP header (or no header to pass)
	match  int  // bytes of "\r\n\r\n" matched so far while in the header
	done   bool
	err    error
}

func newBlockReader(r io.Reader, length int64, h textproto.MIMEHeader) *blockReader {
	b := &blockReader{r: r, left: length, id: h.Get("WARC-Record-ID")}
	b.block = newDigestCheck(h.Get("WARC-Block-Digest"))
	switch strings.ToLower(h.Get("WARC-Type")) {
	case "request", "response":
		if strings.HasPrefix(strings.ToLower(h.Get("Content-Type")), "application/http") {
			b.pay = newDigestCheck(h.Get("WARC-Payload-Digest"))
		}
	case "resource":
		b.pay = newDigestCheck(h.Get("WARC-Payload-Digest"))
		b.inBody = true
	}
	return b
}

func (b *blockReader) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	b.block.write(p[:n])
	if b.pay.h != nil {
		b.hashPayload(p[:n])
	}
	if errors.Is(err, io.EOF) && b.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if b.left == 0 && err == nil {
		err = io.EOF
	}
	if errors.Is(err, io.EOF) {
		err = b.verify()
	}
	if err != nil {
		b.done, b.err = true, err
	}
	return n, err
}

// hashPayload feeds the bytes after the HTTP header to the payload digest.
func (b *blockReader) hashPayload(p []byte) {
	const end = "\r\n\r\n"
	for i := 0; !b.inBody && i < len(p); i++ {
		switch {
		case p[i] == end[b.match]:
			b.match++
		case p[i] == '\r':
			b.match = 1
		default:
			b.match = 0
		}
		if b.match == len(end) {
			b.inBody = true
			p = p[i+1:]
		}
	}
	if b.inBody {
		b.pay.write(p)
	}
}

func (b *blockReader) verify() error {
	if !b.block.ok() {
		return fmt.Errorf("warc record %s: block %w", b.id, ErrDigestMismatch)
	}
	if !b.pay.ok() {
		return fmt.Errorf("warc record %s: payload %w", b.id, ErrDigestMismatch)
	}
	return io.EOF
}

// digestCheck computes a digest and compares it with a labelled one
// ("sha1:BASE32"); a zero digestCheck (no digest, or an unknown algorithm)
// checks nothing.
type digestCheck struct {
	h    hash.Hash
	want []byte
}

func newDigestCheck(label string) digestCheck {
	alg, value, ok := strings.Cut(strings.TrimSpace(label), ":")
	if !ok {
		return digestCheck{}
	}
	var h hash.Hash
	switch strings.ToLower(alg) {
	case "sha1":
		h = sha1.New()
	case "sha256":
		h = sha256.New()
	default:
		return digestCheck{}
	}
	want, err := base32.StdEncoding.DecodeString(strings.ToUpper(value))
	if err != nil || len(want) != h.Size() {
		want, err = hex.DecodeString(value)
	}
	if err != nil || len(want) != h.Size() {
		// A digest we cannot decode cannot match.
		return digestCheck{h: h, want: []byte{}}
	}
	return digestCheck{h: h, want: want}
}

func (d digestCheck) write(p []byte) {
	if d.h != nil {
		d.h.Write(p)
	}
}

func (d digestCheck) ok() bool {
	return d.h == nil || bytes.Equal(d.h.Sum(nil), d.want)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
