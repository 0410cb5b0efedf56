package storage

import (
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"
)

// chainsBucket holds the inventory records of redirects whose chain has
// not ended yet, under the key of the URL the chain waits for.
var chainsBucket = []byte("storage.chains")

// Chains keeps the inventory records of redirects until the end of their
// chain is known, since a record's final_url is the chain's end (README,
// "Outputs"). A redirect's URL is done when its answer is in; its record
// waits here, committed with that Done, for the URL its chain reached
// next, and is written out once that URL's own visit ends the chain. It is
// safe for concurrent use, as bbolt is.
type Chains struct {
	db *bbolt.DB
}

// All returns the records waiting, by the key of the URL they wait for.
func (cs *Chains) All() (map[string][]Record, error) {
	all := map[string][]Record{}
	err := cs.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(chainsBucket).ForEach(func(k, v []byte) error {
			var recs []Record
			if err := json.Unmarshal(v, &recs); err != nil {
				return fmt.Errorf("redirect chain waiting for %s: %w", k, err)
			}
			all[string(k)] = recs
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read redirect chains: %w", err)
	}
	return all, nil
}

// SetHook returns a Hook that, within a writable transaction of the
// State's database (frontier.Outcome.Hook), makes what current returns
// then the records waiting for key: no records deletes the entry.
func (cs *Chains) SetHook(key string, current func() []Record) Hook {
	return func(tx *bbolt.Tx) error {
		recs := current()
		b := tx.Bucket(chainsBucket)
		if len(recs) == 0 {
			return b.Delete([]byte(key))
		}
		v, err := json.Marshal(recs)
		if err != nil {
			return fmt.Errorf("save redirect chain waiting for %s: %w", key, err)
		}
		return b.Put([]byte(key), v)
	}
}

// Clear forgets every record waiting, in one transaction.
func (cs *Chains) Clear() error {
	return cs.db.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(chainsBucket); err != nil {
			return err
		}
		_, err := tx.CreateBucket(chainsBucket)
		return err
	})
}

// Hook is a function run within the writable transaction that commits a
// frontier change (frontier.Outcome.Hook), naming bbolt's transaction for
// the packages that must not import bbolt.
type Hook = func(*bbolt.Tx) error

// Hooks returns a Hook that runs each of hooks that is not nil, in order,
// stopping at the first error; nil when there is none.
func Hooks(hooks ...Hook) Hook {
	var hs []Hook
	for _, h := range hooks {
		if h != nil {
			hs = append(hs, h)
		}
	}
	switch len(hs) {
	case 0:
		return nil
	case 1:
		return hs[0]
	}
	return func(tx *bbolt.Tx) error {
		for _, h := range hs {
			if err := h(tx); err != nil {
				return err
			}
		}
		return nil
	}
}
