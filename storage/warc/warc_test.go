package warc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

var warcDate = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func exchange(t testing.TB, raw string, status int, body string) Exchange {
	t.Helper()
	return Exchange{
		Date:          warcDate,
		URL:           mustParse(t, raw),
		RequestHeader: http.Header{"User-Agent": {"ExampleBot/1.0"}, "Accept-Encoding": {"gzip"}},
		RemoteAddr:    "127.0.0.1:8080",
		Status:        status,
		Header:        http.Header{"Content-Type": {"text/html"}, "Etag": {`"v1"`}},
		Body:          []byte(body),
	}
}

func newTestWARC(t testing.TB, dir string, maxSize int64) *Writer {
	t.Helper()
	w, err := NewWriter(Options{
		Dir: dir, MaxSize: maxSize, Software: "politecrawl/test",
		Info: map[string]string{"operator": "ops@example.com", "bad key": "skipped", "robots": "classic"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

type readRecord struct {
	file   string
	offset int64
	header textproto.MIMEHeader
	block  []byte
}

func (r readRecord) typ() string { return r.header.Get("WARC-Type") }

// readWARCDir reads back every file in dir in name order, verifying every
// digest.
func readWARCDir(t testing.TB, dir string) []readRecord {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	var out []readRecord
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		wr, err := NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := wr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			block, err := io.ReadAll(rec.Block)
			if err != nil {
				t.Fatalf("%s: record %s: %v", name, rec.Header.Get("WARC-Record-ID"), err)
			}
			if rec.Version != "WARC/1.1" {
				t.Errorf("version %q", rec.Version)
			}
			out = append(out, readRecord{filepath.Base(name), rec.Offset, rec.Header, block})
		}
		f.Close()
	}
	return out
}

// gzipMembers counts the gzip members of a file independently of the
// reader.
func gzipMembers(t testing.TB, name string) int {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatal(err)
		}
		n++
		if err := zr.Reset(br); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

func TestWARCRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := newTestWARC(t, dir, 0)

	first := exchange(t, "http://example.com/a?q=1", 200, "<p>hello</p>")
	ref, err := w.WriteExchange(first, Ref{})
	if err != nil {
		t.Fatal(err)
	}
	notModified := exchange(t, "http://example.com/a?q=1", 304, "")
	notModified.Date = warcDate.Add(time.Hour)
	notModified.RequestHeader.Set("If-None-Match", `"v1"`)
	ref304, err := w.WriteExchange(notModified, ref)
	if err != nil {
		t.Fatal(err)
	}
	same := exchange(t, "http://example.com/a?q=1", 200, "<p>hello</p>")
	same.Date = warcDate.Add(2 * time.Hour)
	refSame, err := w.WriteExchange(same, ref)
	if err != nil {
		t.Fatal(err)
	}
	truncated := exchange(t, "http://example.com/big", 200, "0123456789")
	truncated.Header.Set("Content-Encoding", "gzip")
	truncated.Header.Set("Content-Length", "50")
	truncated.Header.Set("Transfer-Encoding", "chunked")
	truncated.Truncated = true
	truncated.Proto = "HTTP/2.0"
	if _, err := w.WriteExchange(truncated, Ref{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if ref304 != ref || refSame != ref {
		t.Errorf("revisits returned %+v and %+v, want the first response %+v", ref304, refSame, ref)
	}
	if ref.Date != warcDate || ref.TargetURI != "http://example.com/a?q=1" || !strings.HasPrefix(ref.PayloadDigest, "sha1:") {
		t.Errorf("ref %+v", ref)
	}

	recs := readWARCDir(t, dir)
	var types []string
	for _, r := range recs {
		types = append(types, r.typ())
	}
	if got := strings.Join(types, " "); got != "warcinfo request response request revisit request revisit request response" {
		t.Fatalf("record types: %s", got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "crawl-20250304050607-00001") {
		t.Fatalf("files %v", files)
	}
	if n := gzipMembers(t, files[0]); n != len(recs) {
		t.Errorf("%d gzip members for %d records", n, len(recs))
	}

	ids := map[string]bool{}
	for i, r := range recs {
		id := r.header.Get("WARC-Record-ID")
		if ids[id] || !strings.HasPrefix(id, "<urn:uuid:") || !strings.HasSuffix(id, ">") || len(id) != len("<urn:uuid:>")+36 {
			t.Errorf("record %d: bad or repeated id %q", i, id)
		}
		ids[id] = true
		if i > 0 && r.offset <= recs[i-1].offset {
			t.Errorf("record %d shares a gzip member (offset %d)", i, r.offset)
		}
		if i > 0 && r.header.Get("WARC-Warcinfo-ID") != recs[0].header.Get("WARC-Record-ID") {
			t.Errorf("record %d: WARC-Warcinfo-ID %q", i, r.header.Get("WARC-Warcinfo-ID"))
		}
	}

	info := recs[0]
	if info.header.Get("WARC-Filename") != filepath.Base(files[0]) {
		t.Errorf("warcinfo names %q", info.header.Get("WARC-Filename"))
	}
	wantInfo := "software: politecrawl/test\r\nformat: WARC File Format 1.1\r\n" +
		"conformsTo: " + conformsTo + "\r\noperator: ops@example.com\r\nrobots: classic\r\n"
	if string(info.block) != wantInfo {
		t.Errorf("warcinfo block:\n%q\nwant\n%q", info.block, wantInfo)
	}

	req, resp := recs[1], recs[2]
	if req.header.Get("WARC-Concurrent-To") != resp.header.Get("WARC-Record-ID") ||
		resp.header.Get("WARC-Concurrent-To") != req.header.Get("WARC-Record-ID") {
		t.Error("request and response not linked by WARC-Concurrent-To")
	}
	for _, r := range []readRecord{req, resp} {
		for k, want := range map[string]string{
			"WARC-Target-URI": "http://example.com/a?q=1", "WARC-Date": "2025-03-04T05:06:07Z",
			"WARC-IP-Address": "127.0.0.1",
		} {
			if got := r.header.Get(k); got != want {
				t.Errorf("%s record: %s %q, want %q", r.typ(), k, got, want)
			}
		}
	}
	wantReq := "GET /a?q=1 HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: gzip\r\nUser-Agent: ExampleBot/1.0\r\n\r\n"
	if string(req.block) != wantReq || req.header.Get("Content-Type") != "application/http;msgtype=request" {
		t.Errorf("request block %q", req.block)
	}
	if resp.header.Get("WARC-Record-ID") != ref.RecordID || resp.header.Get("WARC-Payload-Digest") != ref.PayloadDigest {
		t.Errorf("response %v does not match ref %+v", resp.header, ref)
	}
	hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(resp.block)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hr.Body)
	if hr.StatusCode != 200 || string(body) != "<p>hello</p>" || hr.Header.Get("Etag") != `"v1"` || hr.ContentLength != 12 {
		t.Errorf("response parsed back as %d %v %q", hr.StatusCode, hr.Header, body)
	}

	rv304 := recs[4]
	for k, want := range map[string]string{
		"WARC-Profile": ProfileNotModified, "WARC-Refers-To": ref.RecordID,
		"WARC-Refers-To-Target-URI": ref.TargetURI, "WARC-Refers-To-Date": "2025-03-04T05:06:07Z",
		"WARC-Date": "2025-03-04T06:06:07Z", "WARC-Payload-Digest": ref.PayloadDigest,
	} {
		if got := rv304.header.Get(k); got != want {
			t.Errorf("304 revisit: %s %q, want %q", k, got, want)
		}
	}
	if len(rv304.block) != 0 || rv304.header.Get("Content-Type") != "" {
		t.Errorf("304 revisit block %q, Content-Type %q; want an empty block, whose headers replay tools take from the original",
			rv304.block, rv304.header.Get("Content-Type"))
	}
	if !strings.Contains(string(recs[3].block), "If-None-Match: \"v1\"\r\n") {
		t.Errorf("conditional request block %q", recs[3].block)
	}

	rvSame := recs[6]
	for k, want := range map[string]string{
		"WARC-Profile": ProfileIdenticalPayload, "WARC-Refers-To": ref.RecordID,
		"WARC-Payload-Digest": ref.PayloadDigest, "WARC-Truncated": "length",
	} {
		if got := rvSame.header.Get(k); got != want {
			t.Errorf("identical revisit: %s %q, want %q", k, got, want)
		}
	}
	if bytes.Contains(rvSame.block, []byte("hello")) || !bytes.HasSuffix(rvSame.block, []byte("\r\n\r\n")) {
		t.Errorf("identical revisit block holds more than the header: %q", rvSame.block)
	}

	big := recs[8]
	wantBig := "HTTP/2.0 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 50\r\nContent-Type: text/html\r\nEtag: \"v1\"\r\n\r\n0123456789"
	if string(big.block) != wantBig || big.header.Get("WARC-Truncated") != "length" {
		t.Errorf("truncated response block %q (truncated %q)", big.block, big.header.Get("WARC-Truncated"))
	}
}

func TestWARCRotation(t *testing.T) {
	dir := t.TempDir()
	w := newTestWARC(t, dir, 2000)
	const n = 30
	body := strings.Repeat("not very compressible? ", 5)
	for i := range n {
		ex := exchange(t, fmt.Sprintf("http://h/%d", i), 200, fmt.Sprint(body, i))
		ex.Date = warcDate.Add(time.Duration(i) * time.Second)
		if _, err := w.WriteExchange(ex, Ref{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	slices.Sort(files)
	if len(files) < 3 {
		t.Fatalf("%d files for %d exchanges with a 2000-byte cap", len(files), n)
	}
	for i, f := range files {
		if !strings.HasSuffix(f, fmt.Sprintf("-%05d.warc.gz", i+1)) {
			t.Errorf("file %d named %s", i, filepath.Base(f))
		}
	}
	recs := readWARCDir(t, dir)
	next := 0
	for i, r := range recs {
		switch r.typ() {
		case "warcinfo":
			if i > 0 && recs[i-1].file == r.file || r.header.Get("WARC-Filename") != r.file {
				t.Errorf("warcinfo %d not at the head of %s", i, r.file)
			}
		case "request":
			if want := fmt.Sprintf("http://h/%d", next); r.header.Get("WARC-Target-URI") != want {
				t.Errorf("request %d for %s, want %s", i, r.header.Get("WARC-Target-URI"), want)
			}
			if resp := recs[i+1]; resp.typ() != "response" || resp.file != r.file {
				t.Errorf("request %d not followed by its response in the same file", i)
			}
			next++
		}
	}
	if next != n {
		t.Errorf("%d exchanges read back, want %d", next, n)
	}

	// A new writer, as after a restart, adds files after the old ones.
	w2 := newTestWARC(t, dir, 2000)
	later := exchange(t, "http://h/again", 200, "x")
	later.Date = warcDate.Add(time.Hour)
	if _, err := w2.WriteExchange(later, Ref{}); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	again, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	slices.Sort(again)
	if len(again) != len(files)+1 || !strings.HasSuffix(again[len(again)-1], fmt.Sprintf("-%05d.warc.gz", len(files)+1)) {
		t.Errorf("after a restart: %v", again)
	}
}

func TestWARCConcurrent(t *testing.T) {
	dir := t.TempDir()
	w := newTestWARC(t, dir, 50_000)
	const workers, each = 4, 50
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				ex := exchange(t, fmt.Sprintf("http://h/%d/%d", g, i), 200, strings.Repeat("x", i*10))
				if _, err := w.WriteExchange(ex, Ref{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readWARCDir(t, dir)
	pairs := 0
	for i, r := range recs {
		if r.typ() == "request" {
			resp := recs[i+1]
			if resp.header.Get("WARC-Concurrent-To") != r.header.Get("WARC-Record-ID") {
				t.Errorf("request %d not followed by its response", i)
			}
			pairs++
		}
	}
	if pairs != workers*each {
		t.Errorf("%d exchanges, want %d", pairs, workers*each)
	}
}

func TestWARCWriterErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewWriter(Options{}); err == nil {
		t.Error("no directory accepted")
	}
	if _, err := NewWriter(Options{Dir: dir, Prefix: "../up"}); err == nil {
		t.Error("prefix with a slash accepted")
	}
	w := newTestWARC(t, dir, 0)
	bad := []Exchange{
		{Date: warcDate, Status: 200},
		{URL: mustParse(t, "http://h/"), Status: 200},
		{URL: mustParse(t, "http://h/"), Date: warcDate},
	}
	for _, ex := range bad {
		if _, err := w.WriteExchange(ex, Ref{}); err == nil {
			t.Errorf("WriteExchange(%+v) succeeded", ex)
		}
	}
	w.Close()
	if _, err := w.WriteExchange(exchange(t, "http://h/", 200, ""), Ref{}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("write after Close: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("files made without any exchange: %v", files)
	}
}

// TestWARCHeaderInjection feeds line breaks where header values go.
func TestWARCHeaderInjection(t *testing.T) {
	dir := t.TempDir()
	w := newTestWARC(t, dir, 0)
	ex := exchange(t, "http://h/x", 200, "body")
	ex.RequestHeader.Set("X-Evil", "a\r\nWARC-Type: response")
	ex.RequestHeader["Bad\r\nKey"] = []string{"v"}
	ex.Header["X-Evil"] = []string{"b\r\n\r\nHTTP/1.1 200 OK"}
	ex.Method = "GET\r\nX: y"
	ex.RemoteAddr = "not an ip\r\n"
	if _, err := w.WriteExchange(ex, Ref{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	recs := readWARCDir(t, dir)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	if strings.Contains(string(recs[1].block), "Bad") || recs[1].header.Get("WARC-IP-Address") != "" {
		t.Errorf("request record %v %q", recs[1].header, recs[1].block)
	}
	hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(recs[2].block)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := hr.Header.Get("X-Evil"); got != "b    HTTP/1.1 200 OK" {
		t.Errorf("X-Evil = %q", got)
	}
}

// plainWARC returns the uncompressed records of one exchange.
func plainWARC(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	w := newTestWARC(t, dir, 0)
	if _, err := w.WriteExchange(exchange(t, "http://h/x", 200, "the payload"), Ref{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWARCReaderDigests(t *testing.T) {
	plain := plainWARC(t)
	if got := len(readAllPlain(t, plain)); got != 3 {
		t.Fatalf("%d records in the uncompressed file", got)
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"payload byte", "the payload", "the paylaod", "block digest mismatch"},
		{"payload digest", "WARC-Payload-Digest: sha1:", "WARC-Payload-Digest: sha1:A", "payload digest mismatch"},
		{"header byte", "Content-Type: text/html\r\nEtag", "Content-Type: text/htmX\r\nEtag", "block digest mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := bytes.Replace(plain, []byte(tt.old), []byte(tt.new), 1)
			if bytes.Equal(bad, plain) {
				t.Fatal("nothing replaced")
			}
			wr, err := NewReader(bytes.NewReader(bad))
			if err != nil {
				t.Fatal(err)
			}
			var errs []error
			n := 0
			for {
				rec, err := wr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					errs = append(errs, err)
					continue
				}
				n++
				if _, err := io.Copy(io.Discard, rec.Block); err != nil {
					errs = append(errs, err)
				}
			}
			if len(errs) != 1 || !errors.Is(errs[0], ErrDigestMismatch) || !strings.Contains(errs[0].Error(), tt.want) {
				t.Errorf("errors %v, want one %q", errs, tt.want)
			}
			if n != 3 {
				t.Errorf("read %d records past the bad one, want all 3", n)
			}
		})
	}
	// Unread blocks are verified by Next.
	bad := bytes.Replace(plain, []byte("the payload"), []byte("the paylaod"), 1)
	wr, _ := NewReader(bytes.NewReader(bad))
	var err error
	for err == nil {
		_, err = wr.Next()
	}
	if !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("skipping a bad block: %v", err)
	}
}

func readAllPlain(t testing.TB, b []byte) []*Record {
	t.Helper()
	wr, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []*Record
	for {
		rec, err := wr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

func TestWARCReaderTorn(t *testing.T) {
	dir := t.TempDir()
	w := newTestWARC(t, dir, 0)
	w.WriteExchange(exchange(t, "http://h/x", 200, strings.Repeat("payload ", 1000)), Ref{})
	w.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	whole, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 10, len(whole) / 2, len(whole) - 1} {
		wr, err := NewReader(bytes.NewReader(whole[:cut]))
		if err != nil {
			continue // a cut gzip header
		}
		for err == nil {
			var rec *Record
			if rec, err = wr.Next(); err == nil {
				_, err = io.Copy(io.Discard, rec.Block)
			}
		}
		if err == io.EOF {
			t.Errorf("file cut at %d of %d read as complete", cut, len(whole))
		}
	}
}

func FuzzWARCReader(f *testing.F) {
	plain := plainWARC(f)
	f.Add(plain)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	f.Add(gz.Bytes())
	f.Add([]byte("WARC/1.1\r\nContent-Length: 99999999999\r\n\r\nx"))
	f.Add([]byte("WARC/1.0\r\n continued\r\nA: b\r\n c\r\nContent-Length: 0\r\n\r\n\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		wr, err := NewReader(bytes.NewReader(in))
		if err != nil {
			return
		}
		for range 100 {
			rec, err := wr.Next()
			if err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, rec.Block); err != nil && !errors.Is(err, ErrDigestMismatch) {
				return
			}
		}
	})
}

// benchPage returns an HTML-like body of about n bytes that compresses
// roughly as real pages do.
func benchPage(n int) []byte {
	words := strings.Fields("the crawler fetched page link robots sitemap politeness host delay " +
		"archive record digest header body mirror index html div class href span")
	var b bytes.Buffer
	b.WriteString("<!doctype html><html><head><title>Bench</title></head><body>\n")
	x := uint32(1)
	for b.Len() < n {
		x = x*1664525 + 1013904223
		fmt.Fprintf(&b, `<p class="c%d"><a href="/p/%d">%s %s</a></p>`+"\n",
			x%7, x%100000, words[x%uint32(len(words))], words[(x>>8)%uint32(len(words))])
	}
	return b.Bytes()
}

// BenchmarkWARCWrite measures archiving one exchange with a 32 KiB page:
// a request record and a response record, digested, gzipped and flushed to
// a file.
func BenchmarkWARCWrite(b *testing.B) {
	w := newTestWARC(b, b.TempDir(), 0)
	defer w.Close()
	ex := exchange(b, "https://example.com/docs/page?id=1", 200, "")
	ex.Body = benchPage(32 << 10)
	b.SetBytes(int64(len(ex.Body)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := w.WriteExchange(ex, Ref{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// failingWriter writes n bytes, then fails as a full disk does.
type failingWriter struct {
	w io.Writer
	n int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	k := min(len(p), f.n)
	k, _ = f.w.Write(p[:k])
	f.n -= k
	if k < len(p) {
		return k, syscall.ENOSPC
	}
	return k, nil
}

// TestWARCFullDisk fails a write halfway through an exchange: the file is
// cut back to the exchange before, and reads whole, index and all.
func TestWARCFullDisk(t *testing.T) {
	dir := t.TempDir()
	w := newTestWARC(t, dir, 0)
	if _, err := w.WriteExchange(exchange(t, "http://h/a", 200, "first"), Ref{}); err != nil {
		t.Fatal(err)
	}
	w.count.w = &failingWriter{w: w.f, n: 100}
	if _, err := w.WriteExchange(exchange(t, "http://h/b", 200, "second"), Ref{}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readWARCDir(t, dir) // fails on a torn record
	if len(recs) != 3 || recs[2].header.Get("WARC-Target-URI") != "http://h/a" {
		t.Fatalf("%d records after a full disk, want warcinfo, request, response of /a", len(recs))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	lines, err := IndexFile(files[0])
	if err != nil || len(lines) != 1 {
		t.Fatalf("index of the cut file: %d lines, %v", len(lines), err)
	}
}

// TestWARCIndexSpilled holds two index lines in memory at most: the rest
// go to sorted runs, merged at close into the index a file's records
// give, sorted, with no run left behind.
func TestWARCIndexSpilled(t *testing.T) {
	dir := t.TempDir()
	w := newTestWARC(t, dir, 0)
	w.spillAt = 2
	for _, p := range []string{"/e", "/b", "/d", "/a", "/c", "/f", "/b"} {
		if _, err := w.WriteExchange(exchange(t, "http://h"+p, 200, "body "+p), Ref{}); err != nil {
			t.Fatal(err)
		}
		if len(w.lines) >= 2 {
			t.Fatalf("%d index lines held in memory, want < 2", len(w.lines))
		}
	}
	if len(w.runs) != 3 {
		t.Fatalf("%d runs, want 3", len(w.runs))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	want, err := IndexFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	data, err := os.ReadFile(IndexPath(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); got != strings.Join(want, "\n")+"\n" || len(want) != 7 {
		t.Errorf("index merged from runs:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestWARCIndexRunsOfKilledRun: the runs a killed writer spilled are
// removed by the next writer, which indexes the file from its records.
func TestWARCIndexRunsOfKilledRun(t *testing.T) {
	dir := t.TempDir()
	w := newTestWARC(t, dir, 0)
	w.spillAt = 2
	for _, p := range []string{"/a", "/b", "/c"} {
		if _, err := w.WriteExchange(exchange(t, "http://h"+p, 200, "body"), Ref{}); err != nil {
			t.Fatal(err)
		}
	}
	Kill(w)
	if runs, _ := filepath.Glob(filepath.Join(dir, ".*.run*")); len(runs) != 1 {
		t.Fatalf("runs before the next writer: %v, want 1", runs)
	}
	newTestWARC(t, dir, 0).Close()
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cdxj"))
	if data, err := os.ReadFile(files[0]); err != nil || strings.Count(string(data), "\n") != 3 {
		t.Errorf("index of the killed run's file: %q, %v", data, err)
	}
}
