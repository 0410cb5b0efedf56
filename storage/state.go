package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
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

// ErrDamaged is wrapped by the error Open returns when crawl.db is not a
// whole bbolt database: empty, truncated, overwritten, or one that bbolt
// panics on when it reads it.
var ErrDamaged = errors.New("damaged")

// StateOptions tune Open.
type StateOptions struct {
	// PageSize is the page size of a new database (frontier.PageSize);
	// 0 means bbolt's default. An existing database keeps its own.
	PageSize int
	// Scratch opens a database that is thrown away when the run ends (an
	// audit's temporary state_dir): its commits are not synced to disk.
	// A killed process still loses nothing written (the kernel keeps it);
	// a crash of the machine may leave the file damaged, which a scratch
	// state never has to be read after.
	Scratch bool
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
	Chains *Chains
	// Digests is the WARC writer's index of archived payloads.
	Digests *Digests
}

// Open opens, or creates, the database in dir.
//
// An existing file is checked before bbolt maps it (see checkStateFile),
// and a panic of bbolt while it opens the file or runs the first
// transaction is recovered: a damaged file is an error wrapping ErrDamaged,
// "DIR/crawl.db is damaged: …; move it away to start afresh", never a
// crash. A file that is not there is created.
func Open(dir string, opts StateOptions) (s *State, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state_dir: %w", err)
	}
	path := filepath.Join(dir, StateFile)
	size, why := checkStateFile(path)
	if why != "" {
		return nil, damaged(path, why)
	}
	var db *bbolt.DB
	defer func() {
		if r := recover(); r != nil {
			if db != nil {
				closeQuietly(db)
			}
			s, err = nil, damaged(path, fmt.Sprint(r))
		}
	}()
	db, err = bbolt.Open(path, 0o644, &bbolt.Options{
		Timeout:      2 * time.Second,
		FreelistType: bbolt.FreelistMapType,
		PageSize:     opts.PageSize,
		NoSync:       opts.Scratch,
	})
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("state_dir %s: %w", dir, ErrInUse)
		}
		if errors.Is(err, bbolt.ErrInvalid) || errors.Is(err, bbolt.ErrChecksum) || errors.Is(err, bbolt.ErrVersionMismatch) {
			return nil, damaged(path, err.Error())
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if size > 0 && size <= walkLimit {
		// Read every page of the tree now, while a panic is recovered
		// here, rather than when the crawl meets a damaged one.
		if err := db.View(walkTree); err != nil {
			db.Close()
			return nil, damaged(path, err.Error())
		}
	}
	s = &State{db: db, path: path}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{pagesBucket, robotsBucket, chainsBucket, digestsBucket} {
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
	s.Pages, s.Robots, s.Chains = &Pages{db: db}, &RobotsStates{db: db}, &Chains{db: db}
	s.Digests = &Digests{db: db}
	return s, nil
}

// walkLimit is the largest file Open reads whole (walkTree) before use:
// some milliseconds for a file in the page cache. A larger one is only
// checked by checkStateFile, so that a multi-GB database opens in no time.
const walkLimit = 64 << 20

// walkTree visits every key of every bucket, nested ones too, so that bbolt
// reads every branch and leaf page of the tree (not the values' overflow
// pages); bbolt panics on a page that is not what its parent says.
func walkTree(tx *bbolt.Tx) error {
	return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error { return walkBucket(b) })
}

func walkBucket(b *bbolt.Bucket) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			continue
		}
		if nb := b.Bucket(k); nb != nil {
			if err := walkBucket(nb); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeQuietly closes a database that bbolt panicked on; closing it may
// panic too, and that is not news.
func closeQuietly(db *bbolt.DB) {
	defer func() { _ = recover() }()
	db.Close()
}

// Damaged is the error for damage found in the database after Open, by a
// package that keeps its buckets there (a panic of bbolt's while reading
// them, say): it wraps ErrDamaged and names the file.
func (s *State) Damaged(why string) error { return damaged(s.path, why) }

func damaged(path, why string) error {
	return fmt.Errorf("%s is %w: %s; move it away to start afresh", path, ErrDamaged, why)
}

// The on-disk layout of a bbolt meta page (go.etcd.io/bbolt/internal/common):
// a 16-byte page header, then the meta: magic, version, page size, flags
// (uint32 each), the root bucket (root pgid, sequence), the freelist pgid,
// the high-water mark pgid, the txid, and a checksum: FNV-64a of the meta
// up to the checksum. Integers are in the machine's byte order. Page 0 and
// page 1 each hold one; bbolt uses the valid one with the higher txid.
const (
	pageHeaderSize = 16
	metaSize       = 64
	metaSumOffset  = 56
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	noFreelist     = ^uint64(0)
)

type boltMeta struct {
	pageSize            uint32
	root, freelist, hwm uint64
	txid                uint64
}

// checkStateFile returns the size of the bbolt file at path and what is
// wrong with it, "" when nothing is or there is no file. bbolt maps the file into memory
// and trusts it: a page beyond a truncated end is a SIGBUS, and a page
// that is not what the meta says is a panic. So before bbolt sees it:
//
//   - the file is not empty (bbolt would silently make a new database,
//     and the crawl would start again from its seeds);
//   - at least one meta page is valid: magic, version, checksum, a page
//     size that is a power of two, root and freelist below the high-water
//     mark (one torn meta write is what bbolt's two metas are for);
//   - the file holds every page below the high-water mark of the meta
//     bbolt will use, the valid one with the higher txid, and ends at a
//     page boundary, as every file bbolt writes does (a cut above the
//     high-water mark at a page boundary loses nothing: bbolt grows its
//     files ahead of use, and such a file opens).
//
// This reads two pages whatever the file's size, so a multi-GB database
// opens as fast as before. Damage inside the tree is looked for by Open's
// walkTree in files up to walkLimit only, with bbolt's panics recovered;
// tx.Check is not used, since it reads every page of any size and panics
// on some damage in a goroutine of its own, where it cannot be recovered.
func checkStateFile(path string) (size int64, why string) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ""
	}
	if err != nil {
		return 0, "" // bbolt.Open reports it, with its cause
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, ""
	}
	size = fi.Size()
	if size == 0 {
		return 0, "the file is empty"
	}
	m0, ok0 := readMeta(f, 0)
	var m1 boltMeta
	var ok1 bool
	if ok0 {
		m1, ok1 = readMeta(f, int64(m0.pageSize))
	} else {
		// Page 0 does not say the page size: try each one bbolt can
		// make, as bbolt does.
		for ps := int64(1024); ps <= 16<<20 && ps < size && !ok1; ps <<= 1 {
			m1, ok1 = readMeta(f, ps)
			ok1 = ok1 && int64(m1.pageSize) == ps
		}
	}
	var m boltMeta
	switch {
	case !ok0 && !ok1:
		return size, fmt.Sprintf("no valid meta page (the file is %d bytes)", size)
	case ok0 && (!ok1 || m0.txid >= m1.txid):
		m = m0
	default:
		m = m1
	}
	if need := int64(m.hwm) * int64(m.pageSize); size < need {
		return size, fmt.Sprintf("the file is %d bytes, but its pages reach %d (truncated)", size, need)
	}
	if size%int64(m.pageSize) != 0 {
		// bbolt writes and grows the file in whole pages.
		return size, fmt.Sprintf("the file is %d bytes, not a whole number of %d-byte pages (truncated)", size, m.pageSize)
	}
	return size, ""
}

// readMeta reads the meta of the page at offset and says whether it is
// valid.
func readMeta(r io.ReaderAt, offset int64) (boltMeta, bool) {
	var buf [pageHeaderSize + metaSize]byte
	if _, err := r.ReadAt(buf[:], offset); err != nil {
		return boltMeta{}, false
	}
	b := buf[pageHeaderSize:]
	ne := binary.NativeEndian
	h := fnv.New64a()
	h.Write(b[:metaSumOffset])
	m := boltMeta{
		pageSize: ne.Uint32(b[8:]),
		root:     ne.Uint64(b[16:]),
		freelist: ne.Uint64(b[32:]),
		hwm:      ne.Uint64(b[40:]),
		txid:     ne.Uint64(b[48:]),
	}
	ok := ne.Uint32(b[0:]) == boltMagic && ne.Uint32(b[4:]) == boltVersion &&
		ne.Uint64(b[metaSumOffset:]) == h.Sum64() &&
		m.pageSize >= 512 && m.pageSize&(m.pageSize-1) == 0 &&
		m.root < m.hwm && (m.freelist < m.hwm || m.freelist == noFreelist)
	return m, ok
}

// DB is the database, for packages that keep buckets of their own in it
// (frontier.New).
func (s *State) DB() *bbolt.DB { return s.db }

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
