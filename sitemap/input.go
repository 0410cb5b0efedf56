package sitemap

import (
	"bufio"
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// maxGzipLayers bounds how many times gzip is undone: real files have one
// layer, a .gz served with Content-Encoding: gzip has two.
const maxGzipLayers = 8

// errRawCap ends the input when more compressed bytes arrive than any file
// within the cap could need.
var errRawCap = errors.New("compressed input larger than the byte cap allows")

// rawReader is the bottom of the input: it bounds the bytes taken from the
// caller's reader and records the caller's own errors, so they can be told
// from a damaged gzip stream above it.
type rawReader struct {
	r      io.Reader
	left   int64
	capped bool  // the bound was reached
	err    error // the first error other than io.EOF from r
}

// rawLimit is the bound on compressed bytes for a cap of max uncompressed
// bytes: gzip adds a little to incompressible data, never much.
func rawLimit(max int64) int64 { return max + max/64 + 64<<10 }

func (r *rawReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		r.capped = true
		return 0, errRawCap
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.r.Read(p)
	r.left -= int64(n)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// capReader passes on at most left bytes, then probes for one more to tell
// a file of exactly the cap from a longer one.
type capReader struct {
	r    io.Reader
	left int64
	over bool // the file was longer than the cap
	done bool // the probe was made
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if !c.done {
			c.done = true
			var one [1]byte
			n, _ := io.ReadFull(c.r, one[:])
			c.over = n == 1
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// isGzip reports whether br starts with the gzip magic bytes.
func isGzip(br *bufio.Reader) bool {
	b, _ := br.Peek(2)
	return len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b
}

// gunzip undoes one layer of gzip. Concatenated members are read in turn,
// as gzip(1) does; anything after the last member that is not another
// member (padding, junk) ends the stream quietly.
type gunzip struct {
	br   *bufio.Reader
	z    *gzip.Reader
	done bool
}

func newGunzip(br *bufio.Reader) (*gunzip, error) {
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	z.Multistream(false)
	return &gunzip{br: br, z: z}, nil
}

func (g *gunzip) Read(p []byte) (int, error) {
	for !g.done {
		n, err := g.z.Read(p)
		if err != io.EOF {
			return n, err
		}
		if !isGzip(g.br) {
			g.done = true
		} else if err := g.z.Reset(g.br); err != nil {
			return n, err
		} else {
			g.z.Multistream(false)
		}
		if n > 0 {
			return n, nil
		}
	}
	return 0, io.EOF
}

// utf16Reader turns UTF-16 into UTF-8 as it streams; unpaired surrogates
// become U+FFFD.
type utf16Reader struct {
	r       io.Reader
	big     bool // big-endian
	in      [4096]byte
	n       int    // bytes pending in in
	out     []byte // UTF-8 ready to be read
	outBuf  [4096 * 2]byte
	err     error
	pending rune // a high surrogate waiting for its pair, or -1
}

func newUTF16Reader(r io.Reader, big bool) *utf16Reader {
	return &utf16Reader{r: r, big: big, pending: -1}
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.err != nil {
			if u.pending >= 0 {
				u.pending = -1
				u.out = utf8.AppendRune(u.outBuf[:0], utf8.RuneError)
				break
			}
			return 0, u.err
		}
		m, err := u.r.Read(u.in[u.n:])
		u.n += m
		u.err = err
		u.decode()
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

// decode converts the complete code units pending in u.in.
func (u *utf16Reader) decode() {
	out := u.outBuf[:0]
	i := 0
	for ; i+1 < u.n; i += 2 {
		var c rune
		if u.big {
			c = rune(u.in[i])<<8 | rune(u.in[i+1])
		} else {
			c = rune(u.in[i+1])<<8 | rune(u.in[i])
		}
		switch {
		case u.pending >= 0 && utf16.IsSurrogate(c) && c >= 0xdc00:
			out = utf8.AppendRune(out, utf16.DecodeRune(u.pending, c))
			u.pending = -1
			continue
		case u.pending >= 0:
			out = utf8.AppendRune(out, utf8.RuneError)
			u.pending = -1
		}
		if utf16.IsSurrogate(c) {
			if c < 0xdc00 {
				u.pending = c
			} else {
				out = utf8.AppendRune(out, utf8.RuneError)
			}
			continue
		}
		out = utf8.AppendRune(out, c)
	}
	u.n = copy(u.in[:], u.in[i:u.n])
	u.out = out
}
