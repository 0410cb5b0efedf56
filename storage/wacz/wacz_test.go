package wacz_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/wacz"
	"github.com/politecrawl/crawler/storage/warc"
)

var start = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func write(t *testing.T, w *warc.Writer, rawURL string, at time.Duration, ctype, body string) {
	t.Helper()
	u, _ := url.Parse(rawURL)
	_, err := w.WriteExchange(warc.Exchange{
		Date: start.Add(at), URL: u, Status: 200,
		RequestHeader: http.Header{"User-Agent": {"ExampleBot/1.0"}},
		Header:        http.Header{"Content-Type": {ctype}}, Body: []byte(body),
	}, warc.Ref{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteWACZ packages a closed WARC file and one still being written
// (no index yet, a torn record at its end) and checks the package
// structurally: WARCs stored, every hash and size in datapackage.json
// right, the digest of datapackage.json right, the merged index sorted and
// each of its lines leading to its record inside the zip, and the pages of
// the inventory listed.
func TestWriteWACZ(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, w, "http://example.com/", 0, "text/html", "<title>Home</title>")
	write(t, w, "http://example.com/style.css", time.Second, "text/css", "body{}")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, w2, "http://example.com/later", time.Hour, "text/html", "<title>Later</title>")
	// w2 is not closed: its file has no index, and a torn record follows.
	files, _ := filepath.Glob(filepath.Join(dir, "*-00002.warc.gz"))
	f, _ := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0x1f, 0x8b, 8, 0, 0})
	f.Close()

	var inv bytes.Buffer
	for _, r := range []storage.Record{
		{URL: "http://example.com/", Status: 200, ContentType: "text/html", Title: "Home", FetchedAt: start},
		{URL: "http://example.com/style.css", Status: 200, ContentType: "text/css", FetchedAt: start},
		{URL: "http://example.com/later", Status: 200, ContentType: "text/html; charset=utf-8", Title: "Later", FetchedAt: start.Add(time.Hour)},
		{URL: "http://example.com/", Status: 304, FetchedAt: start.Add(2 * time.Hour)},
		{URL: "http://example.com/never-archived", Status: 200, ContentType: "text/html", FetchedAt: start},
	} {
		b, _ := json.Marshal(r)
		inv.Write(append(b, '\n'))
	}
	pages, err := wacz.PagesOf(&inv)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := wacz.Write(&out, dir, pages, wacz.Options{Software: "politecrawl test", Created: start}); err != nil {
		t.Fatal(err)
	}

	zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	content := map[string][]byte{}
	for _, zf := range zr.File {
		if strings.HasPrefix(zf.Name, "archive/") && zf.Method != zip.Store {
			t.Errorf("%s compressed (method %d); WARCs must be stored", zf.Name, zf.Method)
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		content[zf.Name], err = io.ReadAll(rc) // checks the CRC
		if err != nil {
			t.Fatalf("%s: %v", zf.Name, err)
		}
	}
	var names []string
	for n := range content {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"archive/crawl-20261127100000-00001.warc.gz", "archive/crawl-20261127110000-00002.warc.gz",
		"datapackage-digest.json", "datapackage.json", "indexes/index.cdxj", "pages/pages.jsonl"}
	if !slices.Equal(names, want) {
		t.Fatalf("entries %v\nwant %v", names, want)
	}

	var pkg struct {
		Profile, WACZVersion, Created, Software string
		Resources                               []struct {
			Name, Path, Hash string
			Bytes            int64
		}
	}
	if err := json.Unmarshal(content["datapackage.json"], &pkg); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	json.Unmarshal(content["datapackage.json"], &raw)
	if pkg.Profile != "data-package" || raw["wacz_version"] != "1.1.1" || pkg.Created != "2026-11-27T10:00:00Z" || pkg.Software == "" {
		t.Errorf("datapackage.json: %s", content["datapackage.json"])
	}
	if len(pkg.Resources) != 4 {
		t.Errorf("%d resources, want the 4 files besides the two datapackage files", len(pkg.Resources))
	}
	for _, r := range pkg.Resources {
		data, ok := content[r.Path]
		if !ok || sha(data) != r.Hash || int64(len(data)) != r.Bytes || r.Name != filepath.Base(r.Path) {
			t.Errorf("resource %+v does not match its file (%d bytes, %s)", r, len(data), sha(data))
		}
	}
	var digest struct{ Path, Hash string }
	if err := json.Unmarshal(content["datapackage-digest.json"], &digest); err != nil || digest.Path != "datapackage.json" ||
		digest.Hash != sha(content["datapackage.json"]) {
		t.Errorf("datapackage-digest.json: %s", content["datapackage-digest.json"])
	}

	index := strings.Split(strings.TrimSpace(string(content["indexes/index.cdxj"])), "\n")
	if len(index) != 3 || !slices.IsSorted(index) {
		t.Fatalf("index:\n%s", content["indexes/index.cdxj"])
	}
	for _, l := range index {
		parts := strings.SplitN(l, " ", 3)
		var e struct{ URL, Offset, Length, Filename string }
		json.Unmarshal([]byte(parts[2]), &e)
		file := content["archive/"+e.Filename]
		off, _ := strconv.Atoi(e.Offset)
		n, _ := strconv.Atoi(e.Length)
		if off+n > len(file) {
			t.Errorf("%s: past the end of %s", l, e.Filename)
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(file[off : off+n]))
		if err != nil {
			t.Errorf("%s: %v", l, err)
			continue
		}
		rec, _ := io.ReadAll(zr)
		if !bytes.Contains(rec, []byte("WARC-Type: response\r\n")) || !bytes.Contains(rec, []byte("WARC-Target-URI: "+e.URL+"\r\n")) {
			t.Errorf("%s leads to\n%s", l, rec)
		}
	}
	if data := content["archive/crawl-20261127110000-00002.warc.gz"]; bytes.HasSuffix(data, []byte{0x1f, 0x8b, 8, 0, 0}) {
		t.Error("the torn record of the file being written was packaged")
	}

	wantPages := `{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
{"url":"http://example.com/","ts":"2026-11-27T10:00:00Z","title":"Home"}
{"url":"http://example.com/later","ts":"2026-11-27T11:00:00Z","title":"Later"}
`
	if got := string(content["pages/pages.jsonl"]); got != wantPages {
		t.Errorf("pages.jsonl:\n%s\nwant\n%s", got, wantPages)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "wacz")
	defer os.RemoveAll(dir)
	w, _ := warc.NewWriter(warc.Options{Dir: dir})
	u, _ := url.Parse("https://example.com/")
	w.WriteExchange(warc.Exchange{Date: start, URL: u, Status: 200,
		Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<h1>Hi</h1>")}, warc.Ref{})
	w.Close()
	var out bytes.Buffer
	if err := wacz.Write(&out, dir, nil, wacz.Options{Software: "example"}); err != nil {
		fmt.Println(err)
		return
	}
	zr, _ := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	for _, f := range zr.File {
		fmt.Println(f.Name)
	}
	// Output:
	// archive/crawl-20261127100000-00001.warc.gz
	// indexes/index.cdxj
	// pages/pages.jsonl
	// datapackage.json
	// datapackage-digest.json
}
