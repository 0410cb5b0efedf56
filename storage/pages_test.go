package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/storage/warc"
	"go.etcd.io/bbolt"
)

func openDB(t *testing.T, path string) *bbolt.DB {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newTestPages(t *testing.T) (*Pages, *bbolt.DB) {
	t.Helper()
	db := openDB(t, filepath.Join(t.TempDir(), "state.db"))
	t.Cleanup(func() { db.Close() })
	ps, err := NewPages(db)
	if err != nil {
		t.Fatal(err)
	}
	return ps, db
}

func fullPage() Page {
	return Page{
		Key: "https://example.com/a", URL: "https://EXAMPLE.com/a", FinalURL: "https://example.com/b",
		Status: 200, ContentType: "text/html", Length: 42, ETag: `W/"abc"`,
		LastModified: "Tue, 04 Mar 2025 05:06:07 GMT", Hash: ContentHash([]byte("body")),
		Depth: 3, Referrer: "https://example.com/", FetchedAt: fetchedAt,
		Duration: 1500 * time.Millisecond, Unchanged: 4, MirrorPath: "example.com/a.html",
		WARC: warc.Ref{
			RecordID: "<urn:uuid:0f0e0d0c-0b0a-4908-8706-050403020100>", TargetURI: "https://example.com/a",
			Date: fetchedAt.Truncate(time.Second), PayloadDigest: "sha1:AAAA",
		},
	}
}

func TestPagesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := openDB(t, path)
	ps, err := NewPages(db)
	if err != nil {
		t.Fatal(err)
	}
	want := []Page{fullPage(), {Key: "k2", URL: "u2"}}
	for _, p := range want {
		if err := ps.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	// Reopened, as after a restart.
	db = openDB(t, path)
	defer db.Close()
	ps, err = NewPages(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		got, ok, err := ps.Get(w.Key)
		if err != nil || !ok {
			t.Fatalf("Get(%q) = %v, %v", w.Key, ok, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("Get(%q) =\n%+v\nwant\n%+v", w.Key, got, w)
		}
	}
	if _, ok, err := ps.Get("missing"); ok || err != nil {
		t.Errorf("Get(missing) = %v, %v", ok, err)
	}
}

// TestPagesPutTx writes a page in the same transaction as another
// package's bucket, as the engine does with the frontier's Done.
func TestPagesPutTx(t *testing.T) {
	ps, db := newTestPages(t)
	errAbort := errors.New("abort")
	err := db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("frontier.done"))
		if err != nil {
			return err
		}
		if err := b.Put([]byte("k"), []byte("1")); err != nil {
			return err
		}
		if err := ps.PutTx(tx, Page{Key: "k", URL: "u"}); err != nil {
			return err
		}
		return errAbort
	})
	if !errors.Is(err, errAbort) {
		t.Fatal(err)
	}
	if _, ok, _ := ps.Get("k"); ok {
		t.Error("page stored by a rolled-back transaction")
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		if err := ps.PutTx(tx, Page{Key: "k", URL: "u"}); err != nil {
			return err
		}
		got, ok, err := ps.GetTx(tx, "k")
		if err != nil || !ok || got.URL != "u" {
			t.Errorf("GetTx in the same transaction = %+v, %v, %v", got, ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ps.Get("k"); !ok {
		t.Error("page not stored by a committed transaction")
	}
	var buckets []string
	db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
			buckets = append(buckets, string(name))
			return nil
		})
	})
	for _, name := range buckets {
		if name != "frontier.done" && !strings.HasPrefix(name, "storage.") {
			t.Errorf("storage made bucket %q", name)
		}
	}
}

// TestPagesPutHook: the hook stores the page as it was when the hook was
// made (it is encoded then), and one for a page with no key fails when
// run, storing nothing.
func TestPagesPutHook(t *testing.T) {
	ps, db := newTestPages(t)
	p := fullPage()
	hook := ps.PutHook(p)
	p.URL = "changed after the hook was made"
	if err := db.Update(hook); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := ps.Get(p.Key); err != nil || !ok || !reflect.DeepEqual(got, fullPage()) {
		t.Errorf("Get after the hook = %+v, %v, %v; want %+v", got, ok, err, fullPage())
	}
	if err := db.Update(ps.PutHook(Page{URL: "u"})); err == nil {
		t.Error("the hook of a page with no key succeeded")
	}
}

func TestPagesForEach(t *testing.T) {
	ps, _ := newTestPages(t)
	for _, k := range []string{"c", "a", "b"} {
		if err := ps.Put(Page{Key: k, URL: "u" + k}); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	err := ps.ForEach(func(p Page) error {
		if p.URL != "u"+p.Key {
			t.Errorf("page %q has URL %q", p.Key, p.URL)
		}
		keys = append(keys, p.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keys, ""); got != "abc" {
		t.Errorf("ForEach order %q", got)
	}
	stop := errors.New("stop")
	if err := ps.ForEach(func(Page) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("ForEach error %v", err)
	}
}

func TestPagesErrors(t *testing.T) {
	ps, db := newTestPages(t)
	if err := ps.Put(Page{URL: "u"}); err == nil {
		t.Error("Put with an empty key succeeded")
	}
	for _, v := range [][]byte{{}, {9, '{', '}'}, {pageVersion, 'x'}} {
		db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(pagesBucket).Put([]byte("bad"), v) })
		if _, _, err := ps.Get("bad"); err == nil {
			t.Errorf("Get of stored %q succeeded", v)
		}
		if err := ps.ForEach(func(Page) error { return nil }); err == nil {
			t.Errorf("ForEach over stored %q succeeded", v)
		}
	}
	// A database without the bucket (NewPages not called on it).
	other := openDB(t, filepath.Join(t.TempDir(), "other.db"))
	defer other.Close()
	err := other.Update(func(tx *bbolt.Tx) error { return ps.PutTx(tx, Page{Key: "k"}) })
	if err == nil {
		t.Error("PutTx into a database without the bucket succeeded")
	}
}

func TestContentHash(t *testing.T) {
	// XXH64's published values for these inputs.
	for body, want := range map[string]string{"": "xxh64:ef46db3751d8e999", "a": "xxh64:d24ec4f1a98c6e5b"} {
		if got := ContentHash([]byte(body)); got != want {
			t.Errorf("ContentHash(%q) = %s; want %s", body, got, want)
		}
	}
}

// TestSameContent: a hash ContentHash made, and the SHA-256 of a page
// stored by an earlier version, each match their body and no other.
func TestSameContent(t *testing.T) {
	body, other := []byte("<h1>Hi</h1>"), []byte("<h1>Ho</h1>")
	legacy := "6e6b3d3fcf1e7b7ac5a4b3e6b1d2c9c4d0a0c9b1e0f0c7a3b2e1d4c5b6a79880" // not body's
	sum := sha256.Sum256(body)
	stored := hex.EncodeToString(sum[:])
	for _, tc := range []struct {
		hash string
		body []byte
		want bool
	}{
		{ContentHash(body), body, true},
		{ContentHash(body), other, false},
		{stored, body, true},
		{stored, other, false},
		{legacy, body, false},
		{"", body, false},
	} {
		if got := SameContent(tc.hash, ContentHash(tc.body), tc.body); got != tc.want {
			t.Errorf("SameContent(%s, %q) = %v; want %v", tc.hash, tc.body, got, tc.want)
		}
	}
}

// TestPagesPutAll stores several records in one call, and none for an
// empty list.
func TestPagesPutAll(t *testing.T) {
	ps, _ := newTestPages(t)
	if err := ps.PutAll(nil); err != nil {
		t.Fatalf("PutAll(nil) = %v", err)
	}
	want := []Page{fullPage(), {Key: "k2", URL: "u2", Relinked: true}}
	if err := ps.PutAll(want); err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		got, ok, err := ps.Get(w.Key)
		if err != nil || !ok || !reflect.DeepEqual(got, w) {
			t.Errorf("Get(%q) = %+v, %v, %v; want %+v", w.Key, got, ok, err, w)
		}
	}
	if err := ps.PutAll([]Page{{Key: "k3"}, {}}); err == nil {
		t.Error("PutAll with an empty key: no error")
	}
	if _, ok, _ := ps.Get("k3"); ok {
		t.Error("PutAll that failed kept a record of its transaction")
	}
}

// BenchmarkContentHash hashes a body of a docs page's average size.
func BenchmarkContentHash(b *testing.B) {
	body := bytes.Repeat([]byte("<p>Return a list of the entries in the directory given by path.</p>\n"), 600)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		ContentHash(body)
	}
}

// TestEncodePageIsJSON holds the hand-written page encoder to
// encoding/json: for pages with every field set or not, and strings of
// every kind, both decode to the same page.
func TestEncodePageIsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	str := func() string {
		if rng.IntN(3) == 0 {
			return ""
		}
		return jsonHazards[rng.IntN(len(jsonHazards))]
	}
	when := func() time.Time {
		if rng.IntN(3) == 0 {
			return time.Time{}
		}
		return time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).In(time.FixedZone("", 3600*(rng.IntN(25)-12)))
	}
	for i := range 5000 {
		p := Page{Key: "k", URL: str(), FinalURL: str(), Status: rng.IntN(3) * 200, ContentType: str(),
			Length: rng.Int64N(3) * rng.Int64(), ETag: str(), LastModified: str(), Hash: str(), Depth: rng.IntN(3),
			Referrer: str(), FetchedAt: when(), Duration: time.Duration(rng.Int64N(3) * rng.Int64N(1e12)),
			Unchanged: rng.IntN(3), MirrorPath: str(), Canonical: str(), Relinked: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			p.WARC = warc.Ref{RecordID: str(), TargetURI: str(), Date: when(), PayloadDigest: str()}
		}
		for range rng.IntN(3) {
			if p.Hreflang == nil {
				p.Hreflang = map[string]string{}
			}
			p.Hreflang[str()] = str()
		}
		got, err := encodePage(p)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		std, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		a, err := decodePage("k", got)
		if err != nil {
			t.Fatalf("page %d: %s does not decode: %v", i, got, err)
		}
		b, _ := decodePage("k", append([]byte{pageVersion}, std...))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("page %d:\n ours %s\n json %s", i, got[1:], std)
		}
	}
	// A date encoding/json refuses is refused.
	if _, err := encodePage(Page{Key: "k", WARC: warc.Ref{Date: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}); err == nil {
		t.Error("a WARC date in year 10000 was stored")
	}
}

// BenchmarkEncodePage encodes a page with every field set, as settling a
// URL does.
func BenchmarkEncodePage(b *testing.B) {
	p := fullPage()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodePage(p); err != nil {
			b.Fatal(err)
		}
	}
}
