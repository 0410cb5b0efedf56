package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var fetchedAt = time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC)

// goldenRecords cover every field, and the records with the least in them.
var goldenRecords = []Record{
	{
		URL: "https://example.com/a?x=1&y=<2>", Status: 200, FinalURL: "https://example.com/b",
		ContentType: "text/html; charset=utf-8", Bytes: 1234, DurationMS: 56,
		FetchedAt: fetchedAt, Depth: 2, FoundVia: FoundLink, Referrer: "https://example.com/",
		Robots: RobotsAllowed, InSitemap: true, Lastmod: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC),
	},
	{URL: "https://example.com/private", Status: 0, FetchedAt: fetchedAt, FoundVia: FoundSeed, Robots: RobotsDisallowed},
	{URL: "https://example.com/same", Status: 304, FetchedAt: fetchedAt, Depth: 1, FoundVia: FoundSitemap, NotModified: true},
	{URL: "https://example.com/old", Status: 410, FetchedAt: fetchedAt, FoundVia: FoundRedirect, Gone: true},
	{URL: "https://example.com/down", Error: "dial tcp: connection refused\n\"quoted\" é"},
}

func TestInventoryGolden(t *testing.T) {
	var buf bytes.Buffer
	inv := NewInventory(&buf)
	for _, r := range goldenRecords {
		if err := inv.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := inv.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "inventory.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("inventory:\n%s\nwant (testdata/inventory.jsonl):\n%s", buf.Bytes(), want)
	}

	var got []Record
	err = ReadInventory(bytes.NewReader(want), func(r Record) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, goldenRecords) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", got, goldenRecords)
	}
}

func TestInventoryUTC(t *testing.T) {
	var buf bytes.Buffer
	inv := NewInventory(&buf)
	at := time.Date(2025, 3, 4, 7, 6, 7, 0, time.FixedZone("CEST", 2*3600))
	if err := inv.Write(Record{URL: "u", FetchedAt: at}); err != nil {
		t.Fatal(err)
	}
	inv.Flush()
	if want := `"fetched_at":"2025-03-04T05:06:07Z"`; !strings.Contains(buf.String(), want) {
		t.Errorf("line %s lacks %s", buf.String(), want)
	}
}

func TestInventoryAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "urls.jsonl")
	for run := range 2 {
		inv, err := OpenInventory(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := inv.Write(Record{URL: fmt.Sprint("run", run)}); err != nil {
			t.Fatal(err)
		}
		if err := inv.Close(); err != nil {
			t.Fatal(err)
		}
		if err := inv.Write(Record{URL: "late"}); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Write after Close: %v", err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	if got := readURLs(t, path); got != "run0 run1" {
		t.Errorf("records %q after two runs", got)
	}
}

func TestInventoryRepairsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "urls.jsonl")
	if err := os.WriteFile(path, []byte(`{"url":"a","status":0,"depth":0}`+"\n"+`{"url":"b","sta`), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := OpenInventory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := inv.Write(Record{URL: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := inv.Close(); err != nil {
		t.Fatal(err)
	}
	// The torn line, whose record was never counted done, is cut off:
	// every line is whole and the file reads cleanly.
	b, _ := os.ReadFile(path)
	if want := `{"url":"a","status":0,"depth":0}` + "\n" + `{"url":"c","status":0,"depth":0}` + "\n"; string(b) != want {
		t.Errorf("file after repair:\n%s\nwant\n%s", b, want)
	}
	if err := ReadInventory(bytes.NewReader(b), func(Record) error { return nil }); err != nil {
		t.Errorf("ReadInventory after repair: %v", err)
	}
	// A file that is one torn line is emptied.
	if err := os.WriteFile(path, []byte(`{"url":"b","sta`), 0o644); err != nil {
		t.Fatal(err)
	}
	if inv, err = OpenInventory(path, nil); err != nil {
		t.Fatal(err)
	}
	inv.Close()
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("a lone torn line left %q", b)
	}
}

func TestInventoryStdout(t *testing.T) {
	var stdout bytes.Buffer
	inv, err := OpenInventory("-", &stdout)
	if err != nil {
		t.Fatal(err)
	}
	inv.Write(Record{URL: "u", Status: 200})
	if stdout.Len() != 0 {
		t.Errorf("unflushed record reached stdout: %q", stdout.String())
	}
	if err := inv.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != `{"url":"u","status":200,"depth":0,"bytes":0,"duration_ms":0}`+"\n" {
		t.Errorf("stdout %q", got)
	}
}

// failingWriter accepts limit bytes, then fails with ENOSPC until given
// more room.
type failingWriter struct {
	bytes.Buffer
	limit int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	room := w.limit - w.Len()
	if room >= len(p) {
		return w.Buffer.Write(p)
	}
	w.Buffer.Write(p[:max(room, 0)])
	return max(room, 0), syscall.ENOSPC
}

func TestInventoryFullDisk(t *testing.T) {
	w := &failingWriter{limit: 100}
	inv := NewInventory(w)
	long := strings.Repeat("x", 60)
	if err := inv.Write(Record{URL: long}); err != nil {
		t.Fatalf("buffered Write: %v", err)
	}
	if err := inv.Write(Record{URL: long}); err != nil {
		t.Fatalf("buffered Write: %v", err)
	}
	if err := inv.Flush(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Flush on a full disk: %v, want ENOSPC", err)
	}
	// Records arriving while the disk is full are refused once the buffer
	// is full, never silently lost.
	var refused int
	for range 2000 {
		if err := inv.Write(Record{URL: long}); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no Write failed on a full disk")
	}
	if len(inv.pending) > 2*inventoryBuffer {
		t.Errorf("buffer grew to %d bytes", len(inv.pending))
	}
	// Room again: the torn line is completed and everything accepted lands.
	w.limit = 1 << 30
	if err := inv.Close(); err != nil {
		t.Fatalf("Close after the disk recovered: %v", err)
	}
	var n int
	if err := ReadInventory(&w.Buffer, func(Record) error { n++; return nil }); err != nil {
		t.Fatalf("inventory after recovery: %v", err)
	}
	if want := 2 + 2000 - refused; n != want {
		t.Errorf("%d records on disk, want %d accepted", n, want)
	}
}

func TestInventoryDevFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	inv, err := OpenInventory("/dev/full", nil)
	if err != nil {
		t.Fatal(err)
	}
	inv.Write(Record{URL: "u"})
	if err := inv.Flush(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Flush to /dev/full: %v, want ENOSPC", err)
	}
	if err := inv.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close to /dev/full: %v, want ENOSPC", err)
	}
}

func TestInventoryConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "urls.jsonl")
	inv, err := OpenInventory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := Record{URL: fmt.Sprintf("https://h/%d/%d", w, i), Status: 200, Depth: i}
				if err := inv.Write(r); err != nil {
					t.Error(err)
					return
				}
				if i%100 == 0 {
					inv.Flush()
				}
			}
		})
	}
	wg.Wait()
	if err := inv.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = ReadInventory(f, func(r Record) error {
		if seen[r.URL] {
			return fmt.Errorf("%s twice", r.URL)
		}
		seen[r.URL] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != workers*each {
		t.Errorf("%d records, want %d", len(seen), workers*each)
	}
}

func TestReadInventoryErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", "{\"url\":\"a\"}\n\nnope\n", "line 3"},
		{"wrong type", `{"url":1}`, "line 1"},
		{"too long", `{"url":"` + strings.Repeat("a", MaxLine) + `"}`, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ReadInventory(strings.NewReader(tt.in), func(Record) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	stop := errors.New("stop")
	if err := ReadInventory(strings.NewReader("{}\n{}\n"), func(Record) error { return stop }); err != stop {
		t.Errorf("fn's error not returned: %v", err)
	}
}

func FuzzReadInventory(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "inventory.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add([]byte("{}\n\n{\"url\":\"\\u0000\"}"))
	f.Add([]byte(`{"fetched_at":"not a time"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var recs []Record
		if ReadInventory(bytes.NewReader(in), func(r Record) error { recs = append(recs, r); return nil }) != nil {
			return
		}
		// What parses writes back and parses to the same records.
		var buf bytes.Buffer
		inv := NewInventory(&buf)
		for _, r := range recs {
			r.FetchedAt = r.FetchedAt.UTC()
			if err := inv.Write(r); err != nil {
				return // e.g. a year outside RFC 3339's range
			}
		}
		inv.Close()
		var again []Record
		if err := ReadInventory(&buf, func(r Record) error { again = append(again, r); return nil }); err != nil {
			t.Fatalf("re-read: %v\n%s", err, buf.Bytes())
		}
		if len(again) != len(recs) {
			t.Fatalf("%d records, then %d", len(recs), len(again))
		}
	})
}

func readURLs(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var urls []string
	if err := ReadInventory(f, func(r Record) error { urls = append(urls, r.URL); return nil }); err != nil {
		t.Fatal(err)
	}
	return strings.Join(urls, " ")
}

// BenchmarkInventoryWrite measures one record's encoding and buffering,
// with the periodic flushes to a file included.
func BenchmarkInventoryWrite(b *testing.B) {
	inv, err := OpenInventory(filepath.Join(b.TempDir(), "urls.jsonl"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer inv.Close()
	r := goldenRecords[0]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := inv.Write(r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
