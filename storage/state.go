package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/politecrawl/crawler/robots"
)

// StateFile is the name of the crawl's database inside state_dir.
const StateFile = "crawl.db"

// ErrInUse is returned by Open when another process holds the database.
var ErrInUse = errors.New("in use by another crawl")

// StateOptions tune Open.
type StateOptions struct {
	// PageSize is the page size of a new database (frontier.PageSize);
	// 0 means bbolt's default. An existing database keeps its own.
	PageSize int
}

// State is the crawl's one database, state_dir/crawl.db: the page records
// and hosts' robots.txt states of this package, and whatever the frontier
// keeps beside them (DB hands it the database). It is safe for concurrent
// use, as bbolt is.
type State struct {
	db     *bbolt.DB
	path   string
	Pages  *Pages
	Robots *RobotsStates
}

// Open opens, or creates, the database in dir.
func Open(dir string, opts StateOptions) (*State, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state_dir: %w", err)
	}
	path := filepath.Join(dir, StateFile)
	db, err := bbolt.Open(path, 0o644, &bbolt.Options{
		Timeout:      2 * time.Second,
		FreelistType: bbolt.FreelistMapType,
		PageSize:     opts.PageSize,
	})
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("state_dir %s: %w", dir, ErrInUse)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &State{db: db, path: path}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{pagesBucket, robotsBucket} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s.Pages, s.Robots = &Pages{db: db}, &RobotsStates{db: db}
	return s, nil
}

// DB is the database, for packages that keep buckets of their own in it
// (frontier.New).
func (s *State) DB() *bbolt.DB { return s.db }

// Path is the database file's path.
func (s *State) Path() string { return s.path }

// Close closes the database.
func (s *State) Close() error { return s.db.Close() }

// robotsBucket keeps each host's robots.txt state (robots.State, as JSON),
// so that a restarted crawl neither fetches robots.txt again before it is
// due nor forgets a Crawl-delay for its first requests. Its name predates
// this package's "storage.*" rule and is kept so that a state_dir written
// by an earlier build keeps its hosts' robots.txt.
var robotsBucket = []byte("crawler.robots")

// RobotsStates keeps the robots.txt state of each host (origin).
type RobotsStates struct {
	db *bbolt.DB
}

// Put saves origin's state, replacing the one before.
func (rs *RobotsStates) Put(origin string, st robots.State) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("save robots.txt state of %s: %w", origin, err)
	}
	return rs.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(robotsBucket).Put([]byte(origin), data)
	})
}

// ForEach calls fn with each saved state, in origin order. A state that
// cannot be read is skipped: its host fetches robots.txt again.
func (rs *RobotsStates) ForEach(fn func(origin string, st robots.State) error) error {
	return rs.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(robotsBucket).ForEach(func(k, v []byte) error {
			var st robots.State
			if json.Unmarshal(v, &st) != nil {
				return nil
			}
			return fn(string(k), st)
		})
	})
}
