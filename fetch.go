package crawler

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"

	"github.com/politecrawl/crawler/politeness"
	"github.com/politecrawl/crawler/storage/reach"
)

// fetcher makes one HTTP request at a time for a worker: no redirects (the
// engine follows them, so every hop is checked against scope, robots.txt and
// politeness), a body read within a limit, and compressed bodies decoded
// inside that same limit.
//
// It is the one place that builds requests: their headers, user agent and
// validators.
type fetcher struct {
	client    *http.Client
	userAgent string
	timeout   time.Duration
	maxBody   int64
	now       func() time.Time
	reach     *reach.Reach // proxy, extra CAs, basic auth; nil: none
	// keepRaw keeps an encoded body as sent beside its decoded form
	// (response.raw), for the WARC; without one the copy would be
	// made for nothing.
	keepRaw bool
}

func newFetcher(userAgent string, timeout time.Duration, maxBody int64, maxPerHost int, now func() time.Time, rc *reach.Reach) *fetcher {
	dialer := &net.Dialer{Timeout: min(timeout, 10*time.Second), KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    max(maxPerHost, 1),
		MaxConnsPerHost:        max(maxPerHost, 1) + 1, // +1: robots.txt alongside a page
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    min(timeout, 10*time.Second),
		ResponseHeaderTimeout:  timeout,
		ExpectContinueTimeout:  time.Second,
		DisableCompression:     true, // we ask for gzip ourselves and decode within max_body
		MaxResponseHeaderBytes: 256 << 10,
		Proxy:                  rc.Proxy,
		TLSClientConfig:        rc.TLSConfig(),
	}
	return &fetcher{
		client: &http.Client{
			Transport: transport,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		userAgent: userAgent,
		timeout:   timeout,
		maxBody:   maxBody,
		now:       now,
		reach:     rc,
	}
}

// newReach builds the reach fc asks for (README, "Reaching sites"): its
// proxy, extra CAs and basic auth. getenv reads the environment for the
// proxy when fc names none; nil reads nothing. A fault of a key is named
// by it, as Validate names it (fetch.ca_file: ...).
func newReach(fc FetchConfig, getenv func(string) string) (*reach.Reach, error) {
	cfg := reach.Config{Proxy: fc.Proxy, CAFile: fc.CAFile}
	for _, a := range fc.Auth {
		cfg.Auth = append(cfg.Auth, reach.Auth(a))
	}
	r, err := reach.New(cfg, getenv)
	if fe := (*reach.FieldError)(nil); errors.As(err, &fe) {
		return nil, fmt.Errorf("fetch.%s: %w", fe.Field, fe.Err)
	}
	return r, err
}

// request is one GET to make.
type request struct {
	url          string
	robots       bool          // a robots.txt, asked for as text
	accept       string        // the Accept header, when not a page's (a browser's XHR asks for JSON)
	head         bool          // HEAD rather than GET
	limit        int64         // the most body bytes read; 0 means maxBody
	timeout      time.Duration // for the whole request; 0 means the fetcher's
	etag         string        // for If-None-Match on a revisit
	lastModified string        // for If-Modified-Since on a revisit
	attempt      int           // failed attempts of url before this one, for the gate's backoff
	sent         func(time.Time)
	answered     func(time.Time) // the first byte of the answer came
}

// response is what came back. Status codes are data, not errors.
type response struct {
	status    int
	header    http.Header
	body      []byte // decoded, at most the limit
	truncated bool   // the body was longer than the limit and was cut
	decoded   bool   // a Content-Encoding was undone
	// raw is the body as the server sent it (its Content-Encoding kept,
	// chunking undone) when that differs from body, at most the limit;
	// rawCut says it was cut there. The WARC keeps it as received.
	raw    []byte
	rawCut bool
	// undecoded names a Content-Encoding that could not be undone (one
	// not asked for, such as br, or a body that is not what it claims):
	// the body is as sent, fit for neither links nor the mirror.
	undecoded string
	sent      time.Time
	duration  time.Duration
	proto     string      // "HTTP/1.1", "HTTP/2.0"
	reason    string      // the status line's reason phrase as sent
	reqHeader http.Header // as sent, for WARC
	remoteIP  string
	archived  bool // in the WARC already: a render's answer, reused (renderer.go)

	ttfb time.Duration // from the request's start to the first byte of the answer
}

// errBodyDecode marks a body whose Content-Encoding could not be undone.
var errBodyDecode = errors.New("content-encoding does not match the body")

// get makes the request. An error means no usable response: the connection
// failed or timed out (a nil response), or the body could not be read to
// its end (the response holds what was read, for a caller that can use a
// part).
func (f *fetcher) get(ctx context.Context, r request) (*response, error) {
	timeout := f.timeout
	if r.timeout > 0 {
		timeout = r.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var remote string
	var firstByte time.Time
	trace := &httptrace.ClientTrace{
		GotConn: func(ci httptrace.GotConnInfo) {
			if ci.Conn != nil {
				remote = ci.Conn.RemoteAddr().String()
			}
		},
		WroteHeaders: func() {
			if r.sent != nil {
				r.sent(f.now())
			}
		},
		GotFirstResponseByte: func() {
			firstByte = f.now()
			if r.answered != nil {
				r.answered(firstByte)
			}
		},
	}
	req, err := f.newRequest(httptrace.WithClientTrace(ctx, trace), r)
	if err != nil {
		return nil, err
	}
	start := f.now()
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &response{
		status: resp.StatusCode, header: resp.Header, sent: start,
		proto: resp.Proto, reqHeader: withoutSecrets(req.Header),
		reason: strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode))),
	}
	if !firstByte.IsZero() {
		out.ttfb = firstByte.Sub(start)
	}
	if host, _, err := net.SplitHostPort(remote); err == nil {
		out.remoteIP = host
	}
	limit := f.maxBody
	if r.limit > 0 {
		limit = r.limit
	}
	if r.robots && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		limit = min(limit, 4<<10) // only a 2xx robots.txt is read; the rest keeps the connection
	}
	enc := resp.Header.Get("Content-Encoding")
	var raw *rawCopy
	if enc != "" && f.keepRaw {
		raw = &rawCopy{limit: limit}
	}
	out.body, out.truncated, err = readBody(resp.Body, enc, limit, resp.ContentLength, raw)
	if raw != nil {
		// A decoded body cut at the limit left the rest of the stream unread.
		out.raw, out.rawCut = raw.buf.Bytes(), raw.cut || out.truncated
	}
	out.decoded = err == nil && enc != ""
	out.duration = f.now().Sub(start)
	switch {
	case errors.Is(err, errBodyDecode):
		out.undecoded = strings.ToLower(strings.TrimSpace(enc))
	case err != nil:
		return out, fmt.Errorf("read body: %w", err) // out holds what was read
	}
	return out, nil
}

// newRequest builds the GET of r: the one place where the crawl's requests
// get their headers. Its body cannot be replayed, so that a request the
// gate counted is sent once.
func (f *fetcher) newRequest(ctx context.Context, r request) (*http.Request, error) {
	method := http.MethodGet
	if r.head {
		method = http.MethodHead
	}
	req, err := http.NewRequestWithContext(ctx, method, r.url, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Body = politeness.NoReplay()
	if f.userAgent != "" {
		req.Header.Set("User-Agent", f.userAgent)
	}
	switch {
	case r.robots:
		req.Header.Set("Accept", "text/plain, */*;q=0.5")
	case r.accept != "":
		req.Header.Set("Accept", r.accept)
	default:
		req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	}
	req.Header.Set("Accept-Encoding", "gzip")
	if r.etag != "" {
		req.Header.Set("If-None-Match", r.etag)
	}
	if r.lastModified != "" {
		req.Header.Set("If-Modified-Since", r.lastModified)
	}
	f.reach.Authorize(req)
	return req, nil
}

// withoutSecrets is h as an output may keep it (a WARC request record):
// without the credentials fetch.auth added, which no output holds.
func withoutSecrets(h http.Header) http.Header {
	if h.Get("Authorization") == "" {
		return h
	}
	h = h.Clone()
	h.Del("Authorization")
	return h
}

// readBody reads at most limit decoded bytes of body, undoing gzip or
// deflate Content-Encoding inside the limit, so a small compressed body that
// inflates without end costs no more than limit. A body that claims an
// encoding it does not have is kept as sent, with errBodyDecode. size is
// what the server said the body's length is (-1 when it did not): a hint
// for the buffer of an unencoded body, never trusted beyond a megabyte.
// keep, when not nil, keeps a copy of the encoded bytes read, at most its
// limit.
func readBody(body io.Reader, encoding string, limit, size int64, keep *rawCopy) ([]byte, bool, error) {
	if keep != nil {
		body = io.TeeReader(body, keep)
	}
	encoding = strings.ToLower(strings.TrimSpace(encoding))
	if encoding == "" || encoding == "identity" {
		var buf bytes.Buffer
		if size >= 0 {
			buf.Grow(int(min(size, limit, 1<<20)) + bytes.MinRead)
		}
		return readInto(&buf, body, limit)
	}
	// A compressed stream is read no further than twice the limit: enough
	// for any body whose decoded form fits, and a bound on one made of
	// blocks that decode to nothing.
	raw := io.LimitReader(body, 2*limit+1<<20)
	var dec io.Reader
	switch encoding {
	case "gzip", "x-gzip":
		// Peek, so that a body that is not gzip at all is kept as it is.
		var head [2]byte
		n, err := io.ReadFull(raw, head[:])
		prefix := io.MultiReader(bytes.NewReader(head[:n]), raw)
		if err != nil || head != [2]byte{0x1f, 0x8b} {
			b, cut, rerr := readLimited(prefix, limit)
			if rerr != nil {
				return b, cut, rerr
			}
			return b, cut, errBodyDecode
		}
		zr, err := gzip.NewReader(prefix)
		if err != nil {
			return nil, false, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		dec = zr
	case "deflate":
		// RFC 9110's deflate is zlib-wrapped; some servers send it raw.
		br := bufio.NewReader(raw)
		if head, err := br.Peek(2); err == nil && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, false, fmt.Errorf("deflate: %w", err)
			}
			defer zr.Close()
			dec = zr
		} else {
			dec = flate.NewReader(br)
		}
	default:
		b, cut, err := readLimited(raw, limit)
		if err != nil {
			return b, cut, err
		}
		return b, cut, errBodyDecode
	}
	b, cut, err := readLimited(dec, limit)
	if err != nil && len(b) > 0 && errors.Is(err, io.ErrUnexpectedEOF) {
		return b, cut, nil // a truncated stream: keep what was decoded
	}
	return b, cut, err
}

// readLimited reads r to its end or to limit bytes; cut reports that there
// was more.
func readLimited(r io.Reader, limit int64) ([]byte, bool, error) {
	var buf bytes.Buffer
	return readInto(&buf, r, limit)
}

// readInto is readLimited into buf.
func readInto(buf *bytes.Buffer, r io.Reader, limit int64) ([]byte, bool, error) {
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if n > limit {
		return buf.Bytes()[:limit], true, nil
	}
	return buf.Bytes(), false, err
}

// rawCopy keeps the first limit bytes written to it and notes whether more
// came: the body as sent, beside its decoded form.
type rawCopy struct {
	buf   bytes.Buffer
	limit int64
	cut   bool
}

func (c *rawCopy) Write(p []byte) (int, error) {
	room := c.limit - int64(c.buf.Len())
	if int64(len(p)) > room {
		c.buf.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}
