package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// IndexSuffix ends the name of the CDXJ index beside each WARC file:
// NAME.warc.gz is indexed in NAME.cdxj.
const IndexSuffix = ".cdxj"

// Entry is one line of a CDXJ index in the webrecorder form: the SURT key
// of the URL, the 14-digit timestamp of the record, and a JSON object
// locating the record in its WARC file.
type Entry struct {
	URL      string `json:"url"`
	Mime     string `json:"mime,omitempty"`   // "" when the response has no Content-Type
	Status   string `json:"status,omitempty"` // "" for a revisit without HTTP headers
	Digest   string `json:"digest,omitempty"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`

	date time.Time
}

// Line is e as a line of a CDXJ file, without its newline.
func (e Entry) Line() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(e) // cannot fail: strings only
	return SURT(e.URL) + " " + e.date.UTC().Format("20060102150405") + " " + strings.TrimSpace(b.String())
}

// indexEntry is the entry of a record, or false for a record a replay tool
// does not look up: only response and revisit records are indexed, as
// webrecorder's cdxj-indexer does for a crawl's WARCs (request records are
// only needed to replay POSTs, which the crawler never makes). A 304 kept
// as a response (one with no original to refer to) is not indexed either:
// replayed, it would answer with nothing.
func indexEntry(warcHeader func(string) string, httpHead []byte, offset, length int64, filename string) (Entry, bool) {
	typ := warcHeader("WARC-Type")
	if typ != "response" && typ != "revisit" {
		return Entry{}, false
	}
	date, err := time.Parse(warcDateFormat, warcHeader("WARC-Date"))
	if err != nil {
		return Entry{}, false
	}
	status, header := parseHTTPHead(httpHead)
	if typ == "response" && (status == "" || status == "304") {
		return Entry{}, false
	}
	e := Entry{
		URL: warcHeader("WARC-Target-URI"), Status: status,
		// As warcio and pywb write it: the base32 digits without "sha1:".
		Digest: strings.TrimPrefix(warcHeader("WARC-Payload-Digest"), "sha1:"),
		Length: strconv.FormatInt(length, 10), Offset: strconv.FormatInt(offset, 10),
		Filename: filename, date: date,
	}
	e.Mime = "warc/revisit"
	if typ == "response" {
		// As warcio.js writes it: the Content-Type before its first ';',
		// as sent, or none. (mime.ParseMediaType refuses many a type a
		// server sends, such as "text/html; charset".)
		mt, _, _ := strings.Cut(header.Get("Content-Type"), ";")
		e.Mime = strings.TrimSpace(mt)
	}
	return e, true
}

// parseHTTPHead reads the status code and header of an HTTP response head,
// leniently; the status is "" when the first line is not a status line.
func parseHTTPHead(head []byte) (string, http.Header) {
	line, rest, _ := bytes.Cut(head, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "HTTP/") || len(fields[1]) != 3 {
		return "", nil
	}
	h := http.Header{}
	for _, l := range strings.Split(string(rest), "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(l, "\r"), ":")
		if ok && validToken(k) {
			h.Add(k, strings.TrimSpace(v))
		}
	}
	return fields[1], h
}

// indexSpill is how many lines of the open file's index the writer holds
// in memory (some 300 bytes each): past it, they go sorted to a run file
// beside the index (spillIndex), and the runs are merged into the index
// when the file is closed, so that a file of small records (a recrawl's
// revisits) does not hold a line per record in memory up to its MaxSize.
const indexSpill = 1 << 16

// spillIndex writes the lines, sorted, to a new run file of the index at
// path and returns its name.
func spillIndex(path string, lines []string) (string, error) {
	slices.Sort(lines)
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".run*")
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriter(f)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	err = bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// writeIndex writes the lines and those of the run files (spillIndex),
// sorted bytewise as `LC_ALL=C sort` sorts them, to path through a
// temporary file renamed into place, so that path is either absent or
// complete.
func writeIndex(path string, lines, runs []string) error {
	slices.Sort(lines)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(tmp)
	err = tmp.Chmod(0o644) // as the WARC files: CreateTemp makes it 0600
	if err == nil {
		err = mergeLines(bw, lines, runs)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// mergeLines writes to w, one a line and in order, the sorted lines merged
// with the lines of the sorted run files.
func mergeLines(w *bufio.Writer, lines, runs []string) error {
	type source struct {
		line string
		next func() (string, bool, error)
	}
	var srcs []*source
	add := func(next func() (string, bool, error)) error {
		l, ok, err := next()
		if ok {
			srcs = append(srcs, &source{l, next})
		}
		return err
	}
	add(func() (string, bool, error) {
		if len(lines) == 0 {
			return "", false, nil
		}
		l := lines[0]
		lines = lines[1:]
		return l, true, nil
	})
	for _, name := range runs {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		br := bufio.NewReader(f)
		err = add(func() (string, bool, error) {
			l, err := br.ReadString('\n')
			switch {
			case errors.Is(err, io.EOF) && l == "":
				return "", false, nil
			case err != nil: // a run ends with a newline
				return "", false, fmt.Errorf("%s: %w", filepath.Base(name), noEOF(err))
			}
			return l[:len(l)-1], true, nil
		})
		if err != nil {
			return err
		}
	}
	for len(srcs) > 0 {
		m := 0
		for i, s := range srcs { // a run per 64Ki records: few enough to scan
			if s.line < srcs[m].line {
				m = i
			}
		}
		w.WriteString(srcs[m].line)
		w.WriteByte('\n')
		l, ok, err := srcs[m].next()
		if err != nil {
			return err
		}
		if ok {
			srcs[m].line = l
		} else {
			srcs = slices.Delete(srcs, m, m+1)
		}
	}
	return nil
}

// IndexPath is the path of the CDXJ index of the WARC file at path.
func IndexPath(path string) string {
	return strings.TrimSuffix(path, warcSuffix) + IndexSuffix
}

// IndexFile reads the WARC file at path, written one record to a gzip
// member as Writer writes them, and returns its CDXJ lines, unsorted. A
// torn or unreadable member ends the index: the records before it are
// indexed, and the error says where it stopped.
func IndexFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, _, err := IndexRecords(f, filepath.Base(path))
	return lines, err
}

// IndexRecords reads a WARC file written one record to a gzip member, as
// Writer writes them, from r, and returns its CDXJ lines (unsorted, each
// naming filename) and where its last whole record ends. A torn or
// unreadable member ends the index, with an error saying where: the
// records before it are indexed, and end is where they end, so that a
// file still being written can be copied up to end and indexed by lines.
func IndexRecords(r io.Reader, filename string) (lines []string, end int64, err error) {
	count := &countingReader{r: r}
	br := bufio.NewReaderSize(count, 64<<10)
	var zr gzip.Reader
	for {
		offset := count.n - int64(br.Buffered())
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			return lines, offset, nil
		}
		if err := zr.Reset(br); err != nil {
			return lines, offset, fmt.Errorf("%s at %d: %w", filename, offset, noEOF(err))
		}
		zr.Multistream(false)
		header, head, err := recordHead(&zr)
		if err == nil {
			_, err = io.Copy(io.Discard, &zr)
		}
		if err != nil {
			return lines, offset, fmt.Errorf("%s at %d: %w", filename, offset, noEOF(err))
		}
		next := count.n - int64(br.Buffered())
		if e, ok := indexEntry(header.Get, head, offset, next-offset, filename); ok {
			lines = append(lines, e.Line())
		}
	}
}

// recordHead reads a record's WARC header and the HTTP head at the start
// of its block (at most 64 KiB of it).
func recordHead(r io.Reader) (http.Header, []byte, error) {
	br := bufio.NewReaderSize(r, maxWARCLine)
	var header http.Header
	total := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil, nil, noEOF(err)
		}
		if total += len(line); total > maxWARCHeader {
			return nil, nil, errors.New("warc header too long")
		}
		s := strings.TrimRight(string(line), "\r\n")
		if header == nil {
			if !strings.HasPrefix(s, "WARC/") {
				return nil, nil, errors.New("no WARC version line")
			}
			header = http.Header{}
			continue
		}
		if s == "" {
			break
		}
		k, v, ok := strings.Cut(s, ":")
		if ok {
			header.Add(k, strings.TrimSpace(v))
		}
	}
	length, _ := strconv.ParseInt(header.Get("Content-Length"), 10, 64)
	peek, _ := br.Peek(int(min(length, maxWARCLine)))
	head := peek
	if i := bytes.Index(peek, []byte("\r\n\r\n")); i >= 0 {
		head = peek[:i+2]
	}
	head = bytes.Clone(head)
	_, err := io.Copy(io.Discard, br)
	return header, head, err
}

// SURT is the Sort-friendly URI Reordering Transform of raw, as pywb and
// the Internet Archive key their indexes: scheme dropped, host labels
// reversed and comma-separated (an IP address's too) with a leading "www"
// dropped, the port kept unless it is the default, then ")", the path and
// the query with its parameters sorted, all in lower case and without
// fragment. It is the key webrecorder's warcio.js makes, which
// replayweb.page looks URLs up by (a trailing slash is kept, where
// Python's surt drops it).
func SURT(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return strings.ToLower(raw)
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	labels := strings.Split(host, ".")
	if net.ParseIP(host) == nil || strings.Contains(host, ":") {
		if len(labels) > 2 && isWWW(labels[0]) {
			labels = labels[1:]
		}
	}
	if strings.Contains(host, ":") { // IPv6: not reversed
		labels = []string{"[" + host + "]"}
	}
	slices.Reverse(labels)
	var b strings.Builder
	b.WriteString(strings.Join(labels, ","))
	if port != "" {
		b.WriteString(":" + port)
	}
	b.WriteString(")")
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(strings.ToLower(path))
	if u.RawQuery != "" {
		args := strings.Split(strings.ToLower(u.RawQuery), "&")
		slices.Sort(args)
		b.WriteString("?" + strings.Join(args, "&"))
	}
	return b.String()
}

// isWWW reports whether label is "www" or "www" and digits.
func isWWW(label string) bool {
	rest, ok := strings.CutPrefix(label, "www")
	if !ok {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
