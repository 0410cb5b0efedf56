// Package warctest checks, for tests, a directory of WARC files and their
// CDXJ indexes with a WARC library other than the one that wrote them
// (github.com/nlnwa/gowarc, the one package that imports it): every record
// parses under strict validation with its block and payload digests
// verified, requests and responses are joined both ways by
// WARC-Concurrent-To, every revisit names a record of the directory by
// WARC-Refers-To with the same target URI and date, and every CDXJ line
// leads, by its offset and length, to a gzip member holding a response or
// revisit record of its URL.
package warctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc"
)

// Record is one record read back.
type Record struct {
	File       string
	Type       string // "response", "revisit", ...
	Header     map[string]string
	HTTPStatus int
	HTTPHeader http.Header
	Payload    []byte // the HTTP payload as stored (responses only)
}

// Get is the WARC header field name.
func (r Record) Get(name string) string { return r.Header[strings.ToLower(name)] }

// Check reads and checks every WARC file of dir, as the package doc says,
// failing t on any fault, and returns the records in file order.
func Check(t testing.TB, dir string) []Record {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WARC files in %s (%v)", dir, err)
	}
	slices.Sort(files)
	var recs []Record
	for _, f := range files {
		recs = append(recs, readFile(t, f)...)
	}
	byID := map[string]Record{}
	for _, r := range recs {
		byID[r.Get("WARC-Record-ID")] = r
	}
	for _, r := range recs {
		switch r.Type {
		case "request", "response", "revisit":
			other, ok := byID[r.Get("WARC-Concurrent-To")]
			if !ok || other.Get("WARC-Concurrent-To") != r.Get("WARC-Record-ID") {
				t.Errorf("%s record of %s is not joined to its pair by WARC-Concurrent-To", r.Type, r.Get("WARC-Target-URI"))
			}
		}
		if r.Type != "revisit" {
			continue
		}
		uri, date := r.Get("WARC-Refers-To-Target-URI"), r.Get("WARC-Refers-To-Date")
		if uri == "" || date == "" {
			t.Errorf("revisit of %s lacks WARC-Refers-To-Target-URI or -Date", r.Get("WARC-Target-URI"))
			continue
		}
		orig, ok := byID[r.Get("WARC-Refers-To")]
		if !ok || orig.Type != "response" || orig.Get("WARC-Target-URI") != uri || orig.Get("WARC-Date") != date ||
			orig.Get("WARC-Payload-Digest") != r.Get("WARC-Payload-Digest") {
			t.Errorf("revisit of %s refers to %s %s %s, which is no response record with its payload", r.Get("WARC-Target-URI"),
				r.Get("WARC-Refers-To"), uri, date)
		}
	}
	for _, f := range files {
		checkIndex(t, f)
	}
	return recs
}

func readFile(t testing.TB, name string) []Record {
	t.Helper()
	wf, err := gowarc.NewWarcFileReader(name, 0, gowarc.WithStrictValidation())
	if err != nil {
		t.Fatal(err)
	}
	defer wf.Close()
	var out []Record
	for {
		rec, _, _, err := wf.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(name), err)
		}
		r, err := record(rec)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(name), err)
		}
		r.File = filepath.Base(name)
		out = append(out, r)
	}
}

// record converts rec, verifying its digests.
func record(rec gowarc.WarcRecord) (Record, error) {
	r := Record{Type: rec.Type().String(), Header: map[string]string{}}
	for _, f := range *rec.WarcHeader() {
		r.Header[strings.ToLower(f.Name)] = f.Value
	}
	if hb, ok := rec.Block().(gowarc.HttpResponseBlock); ok {
		r.HTTPStatus, r.HTTPHeader = hb.HttpStatusCode(), hb.HttpHeader().Clone()
		if rec.Type() == gowarc.Response {
			p, err := hb.PayloadBytes()
			if err != nil {
				return r, err
			}
			if r.Payload, err = io.ReadAll(p); err != nil {
				return r, err
			}
		}
	}
	if pb, ok := rec.Block().(gowarc.ProtocolHeaderBlock); ok && rec.Type() == gowarc.Revisit && len(pb.ProtocolHeaderBytes()) > 0 {
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(pb.ProtocolHeaderBytes())), nil)
		if err != nil {
			return r, fmt.Errorf("revisit %s: %w", rec.RecordId(), err)
		}
		r.HTTPStatus, r.HTTPHeader = resp.StatusCode, resp.Header
	}
	v := &gowarc.Validation{}
	if err := rec.ValidateDigest(v); err != nil {
		return r, fmt.Errorf("record %s: %w", rec.RecordId(), err)
	}
	if !v.Valid() {
		return r, fmt.Errorf("record %s: %v", rec.RecordId(), v)
	}
	return r, nil
}

// checkIndex checks the CDXJ file beside the WARC file name: sorted, and
// each line leads to its record.
func checkIndex(t testing.TB, name string) {
	t.Helper()
	idx := strings.TrimSuffix(name, ".warc.gz") + ".cdxj"
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if !slices.IsSorted(lines) {
		t.Errorf("%s is not sorted", filepath.Base(idx))
	}
	warcFile, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer warcFile.Close()
	for _, l := range lines {
		if l == "" {
			continue
		}
		if err := resolve(warcFile, filepath.Base(name), l); err != nil {
			t.Errorf("%s: %q: %v", filepath.Base(idx), l, err)
		}
	}
}

// resolve reads the gzip member the line points at and checks it holds
// the record of its URL.
func resolve(f *os.File, base, line string) error {
	parts := strings.SplitN(line, " ", 3)
	if len(parts) != 3 || len(parts[1]) != 14 {
		return fmt.Errorf("not SURT TIMESTAMP JSON")
	}
	var e struct{ URL, Mime, Status, Digest, Length, Offset, Filename string }
	if err := json.Unmarshal([]byte(parts[2]), &e); err != nil {
		return err
	}
	if e.Filename != base {
		return fmt.Errorf("filename %q", e.Filename)
	}
	off, err1 := strconv.ParseInt(e.Offset, 10, 64)
	n, err2 := strconv.ParseInt(e.Length, 10, 64)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("offset %q length %q", e.Offset, e.Length)
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(buf))
	if err != nil {
		return err
	}
	zr.Multistream(false)
	plain, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	rec, _, _, err := gowarc.NewUnmarshaler(gowarc.WithStrictValidation()).Unmarshal(bufio.NewReader(bytes.NewReader(plain)))
	if err != nil {
		return err
	}
	r, err := record(rec)
	if err != nil {
		return err
	}
	ts := strings.NewReplacer("-", "", ":", "", "T", "", "Z", "").Replace(r.Get("WARC-Date"))
	if (r.Type != "response" && r.Type != "revisit") || r.Get("WARC-Target-URI") != e.URL ||
		(r.HTTPStatus != 0 || e.Status != "") && strconv.Itoa(r.HTTPStatus) != e.Status || strings.TrimPrefix(r.Get("WARC-Payload-Digest"), "sha1:") != e.Digest || ts != parts[1] {
		return fmt.Errorf("leads to a %s record of %s, status %d", r.Type, r.Get("WARC-Target-URI"), r.HTTPStatus)
	}
	return nil
}
