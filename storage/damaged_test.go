package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/politecrawl/crawler/robots"
)

// writeState makes a state_dir with a crawl's worth of page records and
// robots.txt states, and returns the database file's bytes.
func writeState(t *testing.T, pages int) []byte {
	t.Helper()
	dir := t.TempDir()
	st, err := Open(dir, StateOptions{PageSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	// Transactions of 100 records, so the file has a freelist and pages
	// of several generations, as a crawl's has.
	for start := 0; start < pages; start += 100 {
		err := st.DB().Update(func(tx *bbolt.Tx) error {
			for i := start; i < min(start+100, pages); i++ {
				u := fmt.Sprintf("http://127.0.0.1:8001/p/%06d", i)
				p := Page{
					Key: u, URL: u, Status: 200, ContentType: "text/html", Length: int64(i), FetchedAt: at,
					Hash: ContentHash([]byte(u)), Referrer: strings.Repeat("r", i%200),
				}
				if err := st.Pages.PutTx(tx, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Robots.Put("http://127.0.0.1:8001", robots.State{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// openCopy writes data as a state_dir's crawl.db and opens it.
func openCopy(t *testing.T, data []byte) (*State, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StateFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return Open(dir, StateOptions{PageSize: 8 << 10})
}

func TestOpenDamaged(t *testing.T) {
	data := writeState(t, 3000)
	m, ok := readMeta(strings.NewReader(string(data)), 0)
	if !ok {
		t.Fatal("page 0 of a fresh database: not a valid meta")
	}
	t.Logf("file %d bytes, high-water mark %d pages of %d", len(data), m.hwm, m.pageSize)

	st, err := openCopy(t, data)
	if err != nil {
		t.Fatalf("intact copy: %v", err)
	}
	if _, found, err := st.Pages.Get("http://127.0.0.1:8001/p/002999"); err != nil || !found {
		t.Errorf("intact copy: Get = %v, %v", found, err)
	}
	st.Close()

	cases := map[string][]byte{
		"empty":               {},
		"zeroed":              make([]byte, len(data)),
		"page 0 and 1 zeroed": append(make([]byte, 2*int(m.pageSize)), data[2*m.pageSize:]...),
	}
	hwm := int(m.hwm) * int(m.pageSize)
	for pct := 10; pct <= 90; pct += 10 {
		n := len(data) * pct / 100
		if n >= hwm && n%int(m.pageSize) == 0 {
			t.Fatalf("a cut to %d%% keeps every page: TestOpenCutAboveHighWaterMark's case, not this one's", pct)
		}
		cases[fmt.Sprintf("cut to %d%%", pct)] = data[:n]
	}
	cases["cut one page above the high-water mark, one byte short"] = data[:hwm+int(m.pageSize)-1]
	cases["cut one byte below the high-water mark"] = data[:hwm-1]
	for name, d := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := openCopy(t, d)
			if err == nil {
				st.Close()
				t.Fatalf("Open of a %d-byte copy: no error", len(d))
			}
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("Open: %v, want an error wrapping ErrDamaged", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, StateFile+" is damaged: ") || !strings.HasSuffix(msg, "; move it away to start afresh") {
				t.Errorf("Open: %q, want \"…/crawl.db is damaged: …; move it away to start afresh\"", msg)
			}
		})
	}
}

// A cut that keeps every page below the high-water mark loses nothing
// (bbolt grows files ahead of use): such a file opens and keeps its data.
func TestOpenCutAboveHighWaterMark(t *testing.T) {
	data := writeState(t, 3000)
	m, _ := readMeta(strings.NewReader(string(data)), 0)
	hwm := int(m.hwm) * int(m.pageSize)
	if hwm == len(data) {
		t.Skip("file ends at its high-water mark")
	}
	st, err := openCopy(t, data[:hwm])
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer st.Close()
	if _, found, err := st.Pages.Get("http://127.0.0.1:8001/p/002999"); err != nil || !found {
		t.Errorf("Get = %v, %v", found, err)
	}
}

// A page in use that is overwritten with zeros (a lost disk block) is
// found when the file is opened, as long as the file is small enough to
// be read whole on open (walkLimit), not when a later read meets it.
func TestOpenZeroedPage(t *testing.T) {
	data := writeState(t, 3000)
	m, _ := readMeta(strings.NewReader(string(data)), 0)
	ps := int(m.pageSize)
	// Zero every other leaf page (flags 0x02 in the page header): pages
	// of the tree that opening a database does not read.
	d := append([]byte(nil), data...)
	zeroed := 0
	for p := 2; p < int(m.hwm); p++ {
		if binary.NativeEndian.Uint16(d[p*ps+8:]) == 0x02 {
			if zeroed++; zeroed%2 == 1 {
				clear(d[p*ps : (p+1)*ps])
			}
		}
	}
	t.Logf("zeroed %d of %d leaf pages", (zeroed+1)/2, zeroed)
	st, err := openCopy(t, d)
	if err == nil {
		st.Close()
		t.Fatal("Open: no error")
	}
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("Open: %v, want an error wrapping ErrDamaged", err)
	}
	t.Log(err)
}

// TestOpenScratch checks that only a scratch state skips syncing its
// commits, and that what it commits is there for the rest of the run.
func TestOpenScratch(t *testing.T) {
	for _, scratch := range []bool{false, true} {
		s, err := Open(t.TempDir(), StateOptions{Scratch: scratch})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.DB().NoSync; got != scratch {
			t.Errorf("Scratch %v: NoSync %v", scratch, got)
		}
		if err := s.Pages.Put(Page{Key: "k", URL: "u"}); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Pages.Get("k"); !ok || err != nil {
			t.Errorf("Scratch %v: Get = %v, %v", scratch, ok, err)
		}
		s.Close()
	}
}
