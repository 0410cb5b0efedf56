package storage

import (
	"encoding/json"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/politecrawl/crawler/storage/warc"
)

// digestsBucket holds the WARC digest index: "d" + payload digest → the
// first record that stored that payload, and "u" + URL → the record that
// holds the URL's last payload.
var digestsBucket = []byte("storage.digests")

// Digests is the WARC writer's index (warc.Index) in the state database:
// which record holds a payload, so that an identical body at any URL
// becomes a revisit, and which holds a URL's last payload, so that a 304
// finds its original when the page record names none. The crawler adds
// each page's Ref with its page record (AddHook). It is safe for
// concurrent use, as bbolt is.
type Digests struct {
	db *bbolt.DB
}

var _ warc.Index = (*Digests)(nil)

// ByDigest returns the record that first stored a payload of digest.
func (d *Digests) ByDigest(digest string) (warc.Ref, bool, error) {
	return d.get("d" + digest)
}

// ByURL returns the record holding the last payload archived for uri.
func (d *Digests) ByURL(uri string) (warc.Ref, bool, error) {
	return d.get("u" + uri)
}

// Add records ref as the holder of its payload digest, unless an earlier
// record is, and as uri's last payload, in a transaction of its own.
func (d *Digests) Add(uri string, ref warc.Ref) error {
	return d.db.Update(d.AddHook(uri, ref))
}

// AddHook returns a function that does what Add does within a writable
// transaction of the State's database, for frontier.Outcome.Hook: the
// Ref commits with the page record that holds it. A zero Ref adds nothing.
func (d *Digests) AddHook(uri string, ref warc.Ref) Hook {
	return func(tx *bbolt.Tx) error {
		if ref.TargetURI == "" {
			return nil
		}
		v, err := json.Marshal(ref)
		if err != nil {
			return err
		}
		b := tx.Bucket(digestsBucket)
		if b == nil {
			return errors.New("no digests bucket in this database")
		}
		if k := []byte("d" + ref.PayloadDigest); ref.PayloadDigest != "" && b.Get(k) == nil {
			if err := b.Put(k, v); err != nil {
				return err
			}
		}
		return b.Put([]byte("u"+uri), v)
	}
}

// ForgetHook returns a function that, within a writable transaction of
// the State's database, forgets the record of uri's last payload: the URL
// got a body that no WARC file holds (a run without output.warc), so
// that a 304 to its new validators has no original in the WARC files.
// What the digests point to stays: those records still hold their payloads.
func (d *Digests) ForgetHook(uri string) Hook {
	return func(tx *bbolt.Tx) error {
		b := tx.Bucket(digestsBucket)
		if b == nil {
			return errors.New("no digests bucket in this database")
		}
		if k := []byte("u" + uri); b.Get(k) != nil {
			return b.Delete(k)
		}
		return nil
	}
}

func (d *Digests) get(key string) (warc.Ref, bool, error) {
	var ref warc.Ref
	var ok bool
	err := d.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(digestsBucket)
		if b == nil {
			return errors.New("no digests bucket in this database")
		}
		v := b.Get([]byte(key))
		if v == nil {
			return nil
		}
		ok = true
		if err := json.Unmarshal(v, &ref); err != nil {
			return fmt.Errorf("digest index %q: %w", key, err)
		}
		return nil
	})
	return ref, ok, err
}
