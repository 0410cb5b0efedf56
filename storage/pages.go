package storage

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/politecrawl/crawler/storage/warc"

	"go.etcd.io/bbolt"
)

// pagesBucket holds one Page per canonical URL key. Every bucket of this
// package is named "storage.*", so it can share a database with others.
var pagesBucket = []byte("storage.pages")

// pageVersion is the first byte of every stored Page; the rest is JSON.
const pageVersion = 1

// Page is what the crawl knows of one URL after its last visit: enough to
// make the next request conditional, to tell whether the content changed,
// and to find its copies in the mirror and the WARC files.
type Page struct {
	Key          string        `json:"-"`                 // canonical URL key (the frontier's identity)
	URL          string        `json:"url"`               // the URL requested
	FinalURL     string        `json:"final,omitempty"`   // after redirects; for a 3xx, the next hop
	Status       int           `json:"status,omitempty"`  // HTTP status; 0 when there was no response
	ContentType  string        `json:"type,omitempty"`    // as the server sent it
	Length       int64         `json:"len,omitempty"`     // body bytes read
	ETag         string        `json:"etag,omitempty"`    // for If-None-Match, verbatim
	LastModified string        `json:"lastmod,omitempty"` // for If-Modified-Since, verbatim
	Hash         string        `json:"hash,omitempty"`    // ContentHash of the body
	Depth        int           `json:"depth,omitempty"`
	Referrer     string        `json:"ref,omitempty"`
	FetchedAt    time.Time     `json:"at,omitzero"`
	Duration     time.Duration `json:"dur,omitempty"`
	Unchanged    int           `json:"same,omitempty"`   // consecutive visits that found no change
	MirrorPath   string        `json:"mirror,omitempty"` // as Mirror.Write returned it
	WARC         warc.Ref      `json:"warc,omitzero"`    // the record holding the payload
	// Canonical is the page's <link rel=canonical>, and Hreflang its
	// alternates by language (<link rel=alternate hreflang>).
	Canonical string            `json:"canonical,omitempty"`
	Hreflang  map[string]string `json:"hreflang,omitempty"`
	// Relinked is set once the mirrored file's links were rewritten to
	// mirror paths (mirror_links: relative); a new body clears it.
	Relinked bool `json:"relinked,omitempty"`
}

// ContentHash returns the form of Page.Hash for body: "xxh64:" and the 16
// hex digits of its XXH64. It says whether a URL's body changed between
// two visits, and whether a mirrored file is still the body fetched,
// which nothing relies on against a collision made on purpose (one would
// only make a page's revisits rarer); as SHA-256 it was 4% of a docs
// mirror's CPU.
func ContentHash(body []byte) string {
	return contentHashPrefix + hex.EncodeToString(binary.BigEndian.AppendUint64(nil, xxhash.Sum64(body)))
}

// contentHashPrefix starts every ContentHash. A stored Hash without it is
// the hex SHA-256 that versions before it wrote (see SameContent).
const contentHashPrefix = "xxh64:"

// SameContent reports whether hash, a stored Page.Hash, was made of body,
// whose ContentHash is sum: hash is sum, or, stored by a version that
// hashed with SHA-256, that of body.
func SameContent(hash, sum string, body []byte) bool {
	if len(hash) != 2*sha256.Size { // a ContentHash is shorter
		return hash == sum
	}
	old := sha256.Sum256(body)
	return hash == hex.EncodeToString(old[:])
}

// Pages stores Page records in a bbolt database that other packages may
// share. It is safe for concurrent use, as bbolt is.
type Pages struct {
	db *bbolt.DB
}

// NewPages returns the page store in db, creating its bucket if needed.
func NewPages(db *bbolt.DB) (*Pages, error) {
	err := db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(pagesBucket)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create pages bucket: %w", err)
	}
	return &Pages{db: db}, nil
}

// Put stores p under p.Key in a transaction of its own.
func (ps *Pages) Put(p Page) error {
	return ps.db.Update(func(tx *bbolt.Tx) error { return ps.PutTx(tx, p) })
}

// PutAll stores each of ps, in one transaction.
func (ps *Pages) PutAll(pages []Page) error {
	if len(pages) == 0 {
		return nil
	}
	return ps.db.Update(func(tx *bbolt.Tx) error {
		for _, p := range pages {
			if err := ps.PutTx(tx, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutTx stores p under p.Key within tx, a writable transaction of the
// database given to NewPages, so that a page's record can be committed with
// the frontier's own changes.
func (ps *Pages) PutTx(tx *bbolt.Tx, p Page) error {
	v, err := encodePage(p)
	if err != nil {
		return err
	}
	return ps.put(tx, p.Key, v)
}

// PutHook returns a function that stores p within a writable transaction
// of the State's database, for frontier.Outcome.Hook: the page record
// commits with the frontier's own change. p is encoded now, by the
// caller, so that the frontier's one writer, which runs the hook, only
// stores it.
func (ps *Pages) PutHook(p Page) func(*bbolt.Tx) error {
	v, err := encodePage(p)
	return func(tx *bbolt.Tx) error {
		if err != nil {
			return err
		}
		return ps.put(tx, p.Key, v)
	}
}

// encodePage is p's stored form: pageVersion, then its JSON, as
// encoding/json writes it but for HTML characters in strings, which are
// not escaped (the same JSON). Written by hand because every URL settled
// stores one, and encoding/json's reflection was 8% of the retry farm's
// CPU; TestEncodePageIsJSON holds it to encoding/json's meaning.
func encodePage(p Page) ([]byte, error) {
	if p.Key == "" {
		return nil, errors.New("put page: empty key")
	}
	w := recordWriter{b: append(make([]byte, 0, 512), pageVersion, '{')}
	w.str("url", p.URL)
	w.strOmit("final", p.FinalURL)
	w.intOmit("status", int64(p.Status))
	w.strOmit("type", p.ContentType)
	w.intOmit("len", p.Length)
	w.strOmit("etag", p.ETag)
	w.strOmit("lastmod", p.LastModified)
	w.strOmit("hash", p.Hash)
	w.intOmit("depth", int64(p.Depth))
	w.strOmit("ref", p.Referrer)
	w.time("at", p.FetchedAt)
	w.intOmit("dur", int64(p.Duration))
	w.intOmit("same", int64(p.Unchanged))
	w.strOmit("mirror", p.MirrorPath)
	if p.WARC != (warc.Ref{}) {
		w.key("warc")
		ref := recordWriter{b: append(w.b, '{')}
		ref.strOmit("id", p.WARC.RecordID)
		ref.strOmit("uri", p.WARC.TargetURI)
		ref.time("date", p.WARC.Date)
		ref.strOmit("digest", p.WARC.PayloadDigest)
		w.b, w.err = append(ref.b, '}'), cmp.Or(w.err, ref.err)
	}
	w.strOmit("canonical", p.Canonical)
	if len(p.Hreflang) > 0 {
		w.value("hreflang", p.Hreflang)
	}
	w.boolOmit("relinked", p.Relinked)
	if w.err != nil {
		return nil, fmt.Errorf("put page %s: %w", p.Key, w.err)
	}
	return append(w.b, '}'), nil
}

// put stores the encoded page v under key within tx.
func (ps *Pages) put(tx *bbolt.Tx, key string, v []byte) error {
	b := tx.Bucket(pagesBucket)
	if b == nil {
		return errors.New("put page: no pages bucket in this database")
	}
	if err := b.Put([]byte(key), v); err != nil {
		return fmt.Errorf("put page %s: %w", key, err)
	}
	return nil
}

// Get returns the page stored under key, and whether there was one.
func (ps *Pages) Get(key string) (Page, bool, error) {
	var (
		p  Page
		ok bool
	)
	err := ps.db.View(func(tx *bbolt.Tx) error {
		var err error
		p, ok, err = ps.GetTx(tx, key)
		return err
	})
	return p, ok, err
}

// GetTx is Get within tx.
func (ps *Pages) GetTx(tx *bbolt.Tx, key string) (Page, bool, error) {
	b := tx.Bucket(pagesBucket)
	if b == nil {
		return Page{}, false, errors.New("get page: no pages bucket in this database")
	}
	v := b.Get([]byte(key))
	if v == nil {
		return Page{}, false, nil
	}
	p, err := decodePage(key, v)
	if err != nil {
		return Page{}, false, err
	}
	return p, true, nil
}

// ForEach calls fn for every stored page in key order, within one read
// transaction, and stops at the first error. fn must not write to the
// database: bbolt would deadlock.
func (ps *Pages) ForEach(fn func(Page) error) error {
	return ps.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(pagesBucket)
		if b == nil {
			return errors.New("list pages: no pages bucket in this database")
		}
		return b.ForEach(func(k, v []byte) error {
			p, err := decodePage(string(k), v)
			if err != nil {
				return err
			}
			return fn(p)
		})
	})
}

func decodePage(key string, v []byte) (Page, error) {
	if len(v) == 0 || v[0] != pageVersion {
		return Page{}, fmt.Errorf("page %s: unknown record version", key)
	}
	var p Page
	if err := json.Unmarshal(v[1:], &p); err != nil {
		return Page{}, fmt.Errorf("page %s: %w", key, err)
	}
	p.Key = key
	return p, nil
}
