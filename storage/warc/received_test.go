package warc_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/politecrawl/crawler/storage/warc"
	"github.com/politecrawl/crawler/storage/warc/warctest"
)

// memIndex is a warc.Index in memory.
type memIndex struct {
	mu     sync.Mutex
	digest map[string]warc.Ref
	url    map[string]warc.Ref
}

func newMemIndex() *memIndex {
	return &memIndex{digest: map[string]warc.Ref{}, url: map[string]warc.Ref{}}
}

func (m *memIndex) ByDigest(d string) (warc.Ref, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.digest[d]
	return r, ok, nil
}

func (m *memIndex) ByURL(u string) (warc.Ref, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.url[u]
	return r, ok, nil
}

// add learns what WriteExchange returned, as the crawler does.
func (m *memIndex) add(u string, ref warc.Ref) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ref.TargetURI == "" {
		return
	}
	if _, ok := m.digest[ref.PayloadDigest]; !ok {
		m.digest[ref.PayloadDigest] = ref
	}
	m.url[u] = ref
}

// write is WriteExchange, the index learning its Ref.
func (m *memIndex) write(w *warc.Writer, e warc.Exchange, prev warc.Ref) (warc.Ref, error) {
	ref, err := w.WriteExchange(e, prev)
	if err == nil {
		m.add(e.URL.String(), ref)
	}
	return ref, err
}

var start = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

func ex(rawURL string, at time.Duration, status int, header http.Header, body []byte) warc.Exchange {
	u, _ := url.Parse(rawURL)
	return warc.Exchange{
		Date: start.Add(at), URL: u, RemoteAddr: "127.0.0.1:80", Status: status, Reason: "Fine",
		RequestHeader: http.Header{"User-Agent": {"ExampleBot/1.0"}, "Accept-Encoding": {"gzip"}},
		Header:        header, Body: body,
	}
}

// TestArchiveAsReceived writes a gzip page, identical bodies at two URLs,
// 304s with and without a known original, and checks the files with
// gowarc: digests, joins, revisits that resolve, and the CDXJ index.
func TestArchiveAsReceived(t *testing.T) {
	dir := t.TempDir()
	idx := newMemIndex()
	w, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test", Index: idx})
	if err != nil {
		t.Fatal(err)
	}
	page := gzipped(t, "<html><title>gz</title></html>")
	home, err := idx.write(w, ex("http://example.com/", 0, 200, http.Header{
		"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}, "Transfer-Encoding": {"chunked"}, "Etag": {`"v1"`},
	}, page), warc.Ref{})
	if err != nil {
		t.Fatal(err)
	}
	same := []byte("the same bytes")
	first, err := idx.write(w, ex("http://example.com/a", time.Second, 200, http.Header{"Content-Type": {"text/plain"}}, same), warc.Ref{})
	if err != nil {
		t.Fatal(err)
	}
	dup, err := idx.write(w, ex("http://example.com/b", 2*time.Second, 200, http.Header{"Content-Type": {"text/plain"}}, same), warc.Ref{})
	if err != nil {
		t.Fatal(err)
	}
	if dup != first {
		t.Errorf("identical body at /b: ref %+v, want /a's %+v", dup, first)
	}
	// A 304 whose page record names no record: the index knows the URL's.
	if ref, err := idx.write(w, ex("http://example.com/", time.Hour, 304, http.Header{"Etag": {`"v1"`}}, nil), warc.Ref{}); err != nil || ref != home {
		t.Errorf("304 of /: ref %+v, %v; want the first response's %+v", ref, err, home)
	}
	// A 304 of a URL never archived: kept as a response, not indexed.
	if _, err := idx.write(w, ex("http://example.com/new", time.Hour, 304, nil, nil), warc.Ref{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	recs := warctest.Check(t, dir)
	var types []string
	for _, r := range recs {
		types = append(types, r.Type)
		switch u := r.Get("WARC-Target-URI"); {
		case u == "http://example.com/" && r.Type == "response":
			if !bytes.Equal(r.Payload, page) || r.HTTPHeader.Get("Content-Encoding") != "gzip" {
				t.Errorf("gzip page stored as %q with Content-Encoding %q", r.Payload, r.HTTPHeader.Get("Content-Encoding"))
			}
			if r.HTTPHeader.Get("Transfer-Encoding") != "" || r.HTTPHeader.Get("Content-Length") != strconv.Itoa(len(page)) {
				t.Errorf("headers not made to agree with the stored body: %v", r.HTTPHeader)
			}
		case u == "http://example.com/b" && r.Type == "revisit":
			if r.Get("WARC-Profile") != warc.ProfileIdenticalPayload || r.Get("WARC-Refers-To-Target-URI") != "http://example.com/a" {
				t.Errorf("identical revisit of /b: %v", r.Header)
			}
		case u == "http://example.com/" && r.Type == "revisit":
			if r.Get("WARC-Profile") != warc.ProfileNotModified || r.Get("WARC-Refers-To-Date") != "2026-11-27T10:00:00Z" {
				t.Errorf("304 revisit of /: %v", r.Header)
			}
		case u == "http://example.com/new" && r.Type == "response":
			if r.HTTPStatus != 304 {
				t.Errorf("304 with no original kept as %d", r.HTTPStatus)
			}
		}
	}
	want := "warcinfo request response request response request revisit request revisit request response"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("records: %s\nwant     %s", got, want)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cdxj"))
	data, _ := os.ReadFile(files[0])
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Errorf("index has %d lines, want 4 (the 304 with no original left out):\n%s", n, data)
	}
	for _, want := range []string{
		`com,example)/ 20261127100000 {"url":"http://example.com/","mime":"text/html","status":"200","digest":"`,
		`com,example)/b 20261127100002 {"url":"http://example.com/b","mime":"warc/revisit","status":"200",`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("index lacks %s:\n%s", want, data)
		}
	}
}

// TestArchiveIndexRebuilt kills a writer (its file left open, a torn
// record at its end): the next writer indexes the file from its records.
func TestArchiveIndexRebuilt(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"/x", "/y?b=2&a=1", "/z"} {
		if _, err := w.WriteExchange(ex("http://www.example.com"+p, time.Duration(i)*time.Second, 200,
			http.Header{"Content-Type": {"text/html; charset=utf-8"}}, []byte("body "+p)), warc.Ref{}); err != nil {
			t.Fatal(err)
		}
	}
	warc.Kill(w) // no Close: the process was killed. A torn record follows.
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(gzipped(t, "WARC/1.1\r\nWARC-Type: response\r\n")[:20])
	f.Close()
	if _, err := os.Stat(warc.IndexPath(files[0])); !os.IsNotExist(err) {
		t.Fatalf("an index before the file was closed: %v", err)
	}
	w2, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
	data, err := os.ReadFile(warc.IndexPath(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "com,example)/y?a=1&b=2 20261127100001 ") {
		t.Fatalf("rebuilt index:\n%s", data)
	}
	// The torn tail was cut (TestArchiveTornTailCut): the file reads
	// whole, and the rebuilt index resolves.
	warctest.Check(t, dir)
}

func TestSURT(t *testing.T) {
	for in, want := range map[string]string{
		"http://www.Example.com/Path/?b=2&a=1#frag": "com,example)/path/?a=1&b=2",
		"https://example.com:443/":                  "com,example)/",
		"http://127.0.0.1:8080/a":                   "1,0,0,127:8080)/a",
		"http://sub.example.org":                    "org,example,sub)/",
	} {
		if got := warc.SURT(in); got != want {
			t.Errorf("SURT(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestIndexMimeAsWarcio checks the index's mime against what warcio.js's
// cdx-index writes for the same records (warcio 2.4.11, measured): the
// Content-Type before its first ';', trimmed, as sent, and no mime at all
// when there is none. A Content-Type that Go's mime package refuses
// ("text/html; charset", a missing value) was "unk", which also left the
// page out of a WACZ's pages.jsonl.
func TestIndexMimeAsWarcio(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, c := range []struct{ contentType, mime string }{
		{"-", ""}, // no header
		{"", ""},
		{"Text/HTML; Charset=UTF-8", `"mime":"Text/HTML",`},
		{"text/html; charset", `"mime":"text/html",`},
		{"text/html;;", `"mime":"text/html",`},
		{" text/plain ;x", `"mime":"text/plain",`},
		{"application/x-foo bar", `"mime":"application/x-foo bar",`},
	} {
		h := http.Header{}
		if c.contentType != "-" {
			h.Set("Content-Type", c.contentType)
		}
		u := "http://example.com/" + string(rune('a'+i))
		want[u] = `{"url":"` + u + `",` + c.mime + `"status":"200",`
		if _, err := w.WriteExchange(ex(u, time.Duration(i)*time.Second, 200, h, []byte(u)), warc.Ref{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cdxj"))
	data, _ := os.ReadFile(files[0])
	for u, prefix := range want {
		if !strings.Contains(string(data), prefix) {
			t.Errorf("the index line of %s does not hold %s:\n%s", u, prefix, data)
		}
	}
}

// TestArchiveTornTailCut kills a writer in the middle of a record: the
// next writer cuts the torn tail off the file it indexes, as the
// inventory's is cut, so that the file reads whole (gowarc, warcio) and
// a WACZ made of it holds no broken member at its end.
func TestArchiveTornTailCut(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteExchange(ex("http://example.com/x", 0, 200,
		http.Header{"Content-Type": {"text/html"}}, []byte("body")), warc.Ref{}); err != nil {
		t.Fatal(err)
	}
	warc.Kill(w) // no Close: the process was killed while writing the next record.
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	whole, _ := os.Stat(files[0])
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(gzipped(t, "WARC/1.1\r\nWARC-Type: response\r\n")[:20])
	f.Close()
	w2, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
	if fi, _ := os.Stat(files[0]); fi.Size() != whole.Size() {
		t.Errorf("%s is %d bytes after the next writer began; want %d, its whole records", filepath.Base(files[0]), fi.Size(), whole.Size())
	}
	warctest.Check(t, dir)
}

// TestArchiveOpenFileLeftAlone starts a writer beside one still writing
// in the same directory: the file the first holds open is not indexed
// (nor cut) by the second, and the first indexes it whole when it closes.
func TestArchiveOpenFileLeftAlone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no file locks: see lock_other.go")
	}
	dir := t.TempDir()
	a, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	write := func(w *warc.Writer, p string) {
		t.Helper()
		if _, err := w.WriteExchange(ex("http://example.com"+p, 0, 200,
			http.Header{"Content-Type": {"text/html"}}, []byte("body "+p)), warc.Ref{}); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "/a1")
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	b, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(warc.IndexPath(files[0])); !os.IsNotExist(err) {
		t.Fatalf("a second writer indexed the file the first is writing: %v", err)
	}
	write(a, "/a2")
	write(b, "/b1")
	if err := errors.Join(a.Close(), b.Close()); err != nil {
		t.Fatal(err)
	}
	lines, err := warc.IndexFile(files[0])
	if err != nil || len(lines) != 2 {
		t.Fatalf("the first writer's file: %d records indexed, %v", len(lines), err)
	}
	warctest.Check(t, dir)
}
