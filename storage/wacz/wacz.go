package wacz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/warc"
)

// Version is the WACZ version written.
const Version = "1.1.1"

// Page is an entry point of the package: pages/pages.jsonl.
type Page struct {
	URL   string    `json:"url"`
	TS    time.Time `json:"ts"`
	Title string    `json:"title,omitempty"`
}

// Options describe the package.
type Options struct {
	Software string    // datapackage.json "software"
	Created  time.Time // datapackage.json "created"; zero means now
}

// Write writes to w a WACZ package of the WARC files (NAME.warc.gz) in
// warcDir, with pages as its entry points (those of no indexed URL left
// out; nil means the index's 200 HTML records, without titles). It reads
// each WARC file twice (its digest and CRC first, so that the zip's local
// headers carry its size), and holds the merged index's lines in memory
// once, to sort them.
func Write(w io.Writer, warcDir string, pages []Page, opts Options) error {
	names, err := filepath.Glob(filepath.Join(warcDir, "*.warc.gz"))
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("no WARC files (*.warc.gz) in %s", warcDir)
	}
	slices.Sort(names)
	if opts.Created.IsZero() {
		opts.Created = time.Now()
	}
	zw := zip.NewWriter(w)
	var resources []resource
	var lines []string
	for _, name := range names {
		res, ls, err := addWARC(zw, name)
		if err != nil {
			return err
		}
		resources = append(resources, res)
		lines = append(lines, ls...)
	}
	slices.Sort(lines) // bytewise, as LC_ALL=C sort
	indexed := map[string]bool{}
	// Streamed into the zip: the index is not held twice.
	res, err := addFile(zw, "indexes/index.cdxj", func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for _, l := range lines {
			bw.WriteString(l)
			bw.WriteByte('\n')
			if u, ok := entryURL(l); ok {
				indexed[u] = true
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return err
	}
	resources = append(resources, res)
	if pages == nil {
		pages = pagesOfIndex(lines)
	}
	res, err = addBytes(zw, "pages/pages.jsonl", pagesJSONL(pages, indexed))
	if err != nil {
		return err
	}
	resources = append(resources, res)

	pkg, err := json.MarshalIndent(struct {
		Profile   string     `json:"profile"`
		Version   string     `json:"wacz_version"`
		Created   string     `json:"created"`
		Software  string     `json:"software,omitempty"`
		Resources []resource `json:"resources"`
	}{"data-package", Version, opts.Created.UTC().Format(time.RFC3339), opts.Software, resources}, "", "  ")
	if err != nil {
		return err
	}
	res, err = addBytes(zw, "datapackage.json", pkg)
	if err != nil {
		return err
	}
	digest, err := json.MarshalIndent(struct {
		Path string `json:"path"`
		Hash string `json:"hash"`
	}{res.Path, res.Hash}, "", "  ")
	if err != nil {
		return err
	}
	if _, err := addBytes(zw, "datapackage-digest.json", digest); err != nil {
		return err
	}
	return zw.Close()
}

// resource is one file of datapackage.json.
type resource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

// addWARC stores the WARC file name under archive/ and returns its index
// lines: those of its NAME.cdxj, or, when it has none, those of its
// records, the file then copied up to the end of its last whole record.
func addWARC(zw *zip.Writer, name string) (resource, []string, error) {
	f, err := os.Open(name)
	if err != nil {
		return resource{}, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return resource{}, nil, err
	}
	base := filepath.Base(name)
	size := fi.Size()
	lines, err := readIndex(warc.IndexPath(name))
	if errors.Is(err, os.ErrNotExist) {
		// Still being written: index what is whole, and copy that.
		lines, size, _ = warc.IndexRecords(io.NewSectionReader(f, 0, size), base)
	} else if err != nil {
		return resource{}, nil, err
	}
	sum, crc := sha256.New(), crc32.NewIEEE()
	if _, err := io.Copy(io.MultiWriter(sum, crc), io.NewSectionReader(f, 0, size)); err != nil {
		return resource{}, nil, fmt.Errorf("%s: %w", base, err)
	}
	path := "archive/" + base
	out, err := zw.CreateRaw(&zip.FileHeader{
		Name: path, Method: zip.Store, Modified: fi.ModTime(),
		CRC32: crc.Sum32(), CompressedSize64: uint64(size), UncompressedSize64: uint64(size),
	})
	if err != nil {
		return resource{}, nil, err
	}
	if _, err := io.Copy(out, io.NewSectionReader(f, 0, size)); err != nil {
		return resource{}, nil, fmt.Errorf("%s: %w", base, err)
	}
	return resource{Name: base, Path: path, Hash: label(sum), Bytes: size}, lines, nil
}

// addBytes deflates data into the zip at path.
func addBytes(zw *zip.Writer, path string, data []byte) (resource, error) {
	return addFile(zw, path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// addFile deflates what write writes into the zip at path.
func addFile(zw *zip.Writer, path string, write func(io.Writer) error) (resource, error) {
	out, err := zw.CreateHeader(&zip.FileHeader{Name: path, Method: zip.Deflate, Modified: time.Now()})
	if err != nil {
		return resource{}, err
	}
	sum := sha256.New()
	n := &countWriter{w: io.MultiWriter(out, sum)}
	if err := write(n); err != nil {
		return resource{}, err
	}
	return resource{Name: filepath.Base(path), Path: path, Hash: label(sum), Bytes: n.n}, nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func label(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

// readIndex reads the lines of a CDXJ file.
func readIndex(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	for l := range strings.SplitSeq(string(data), "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// entryURL is the url of a CDXJ line.
func entryURL(line string) (string, bool) {
	parts := strings.SplitN(line, " ", 3)
	if len(parts) != 3 {
		return "", false
	}
	var e struct{ URL string }
	if json.Unmarshal([]byte(parts[2]), &e) != nil || e.URL == "" {
		return "", false
	}
	return e.URL, true
}

// pagesJSONL is pages/pages.jsonl: the header line, then each page whose
// URL the index holds.
func pagesJSONL(pages []Page, indexed map[string]bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}` + "\n")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, p := range pages {
		if indexed[p.URL] {
			p.TS = p.TS.UTC().Truncate(time.Second)
			enc.Encode(p) // cannot fail: strings and a time
		}
	}
	return b.Bytes()
}

// PagesOf reads an inventory (output.urls) and returns its 200 HTML pages,
// each as its last 200 record has it (a later 304 changed nothing), in the
// order first seen.
func PagesOf(r io.Reader) ([]Page, error) {
	var order []string
	last := map[string]storage.Record{}
	err := storage.ReadInventory(bufio.NewReader(r), func(rec storage.Record) error {
		if rec.Status != 200 || rec.FetchedAt.IsZero() || !isHTML(rec.ContentType) {
			return nil
		}
		if _, ok := last[rec.URL]; !ok {
			order = append(order, rec.URL)
		}
		last[rec.URL] = rec
		return nil
	})
	if err != nil {
		return nil, err
	}
	pages := make([]Page, 0, len(order))
	for _, u := range order {
		rec := last[u]
		pages = append(pages, Page{URL: u, TS: rec.FetchedAt, Title: rec.Title})
	}
	return pages, nil
}

// pagesOfIndex is the pages of an index when no inventory is given: the
// first 200 text/html record of each URL, without a title.
func pagesOfIndex(lines []string) []Page {
	var pages []Page
	seen := map[string]bool{}
	for _, l := range lines {
		parts := strings.SplitN(l, " ", 3)
		if len(parts) != 3 {
			continue
		}
		var e struct{ URL, Mime, Status string }
		ts, err := time.Parse("20060102150405", parts[1])
		if err != nil || json.Unmarshal([]byte(parts[2]), &e) != nil || seen[e.URL] ||
			e.Status != "200" || !isHTML(e.Mime) {
			continue
		}
		seen[e.URL] = true
		pages = append(pages, Page{URL: e.URL, TS: ts})
	}
	return pages
}

func isHTML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}
