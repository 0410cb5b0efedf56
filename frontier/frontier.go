package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/bbolt"
)

// Errors a caller may branch on.
var (
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("frontier: closed")
	// ErrLease is returned for a lease that is not (or no longer) out:
	// given back already, or made by another Frontier.
	ErrLease = errors.New("frontier: lease not out")
)

var (
	errNoBuckets   = errors.New("frontier: buckets missing")
	errEmptyOrigin = errors.New("frontier: empty origin")
)

// DefaultMaxBatch is Options.MaxBatch when it is 0.
const DefaultMaxBatch = 2048

// Options tune a Frontier. The zero value is ready to use.
type Options struct {
	// MaxBatch caps the URLs one transaction writes: Add and Done split
	// larger batches (see Add), and group commit stops gathering
	// operations at it. It bounds the memory a transaction takes. 0 means
	// DefaultMaxBatch.
	MaxBatch int
}

// Frontier is the persistent URL frontier. Its methods are safe for
// concurrent use by any number of goroutines (a pool of workers calling
// Next, Done, Retry and SetReady is the intended use). Next and the
// in-memory calls (SetReady, Release without a time, Stats, Hosts, Wake)
// do not write to disk; the others wait for their transaction to be
// committed and synced, and concurrent ones share a transaction.
//
// Do not call a Frontier's writing methods from inside a transaction of
// its DB, a Hook included: they would wait for that transaction to end.
type Frontier struct {
	db    *bbolt.DB
	ownDB bool
	opts  Options

	ops        chan *op
	writerDone chan struct{}
	w          writer
	sending    sync.WaitGroup // submitters between the closed check and the send

	mu     sync.Mutex
	closed bool
	hosts  map[string]*host
	byID   map[uint32]*host
	lastID uint32
	ready  hostHeap // hosts with a URL that Next may hand out, now or later
	sum    counts   // over all hosts
	parked counts   // over parked hosts
	logN   int      // entries in the log bucket
	dirty  []*host  // hosts whose counts changed since their record was written
	markN  int      // marks, of all hosts
	oldest uint64   // no chunk before this one has live marks
	// chunks counts the live marks of each chunk; deadChunks lists those
	// with none that New found, for the first batch to delete.
	chunks     map[uint64]int64
	deadChunks []uint64
	// foldEvery, hostMarks, maxMarks and chunkAge are their defaults, but
	// for tests.
	foldEvery, hostMarks, maxMarks int
	chunkAge                       uint64
	inbox                          inbox
	leasedN                        int64
	// leasedSched counts the leases that are revisits.
	leasedSched int64
	wake        chan struct{}
	wakeTaken   bool
}

// PageSize is the page size of a new database, for Open and for callers of
// New. bbolt remembers, for every page a transaction allocated from its
// freelist, which transaction it was, until the page is freed again: a map
// that grows towards one entry per page of the file as a crawl rewrites its
// queues. Pages of 8 KiB, twice the usual, keep that map (and the
// freelist) half the size; larger pages would shrink it further, but every
// transaction copies and rewrites whole pages, so 16 KiB pages cost a fifth
// of the rate of adding and draining (BenchmarkFrontier at 1M URLs, with
// the queue in a bucket of its own and no inbox: 8 KiB 87,700 adds/s and
// 22,400 Next+Done/s; 16 KiB 70,900 and 18,900), while 8 KiB keeps the
// peak heap at 10M URLs under 64 MiB (56 MiB measured with the inbox).
const PageSize = 8 << 10

// Open opens (creating it if needed) the bbolt database at path for the
// frontier alone, as tests and benchmarks do; Close closes it. It waits at
// most 10 s for another process's lock on the file.
func Open(path string, opts Options) (*Frontier, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:         10 * time.Second,
		FreelistType:    bbolt.FreelistMapType,
		InitialMmapSize: 1 << 30,
		PageSize:        PageSize,
	})
	if err != nil {
		return nil, fmt.Errorf("frontier: open %s: %w", path, err)
	}
	f, err := New(db, opts)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	f.ownDB = true
	return f, nil
}

// New returns the frontier kept in db, which other packages may share: the
// frontier uses only buckets named "frontier.*", creating them if needed.
// URLs that were leased when the process last stopped are queued again.
// Close does not close db. Open db with FreelistType bbolt.FreelistMapType
// and a large InitialMmapSize, as Open does, for speed; not with NoSync,
// which gives up the durability of what returned.
func New(db *bbolt.DB, opts Options) (*Frontier, error) {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	f := &Frontier{
		db: db, opts: opts,
		ops:        make(chan *op, 256),
		writerDone: make(chan struct{}),
		hosts:      map[string]*host{},
		byID:       map[uint32]*host{},
		chunks:     map[uint64]int64{},
		wake:       make(chan struct{}),
		w:          writer{arena: make([]byte, 0, 64<<10), peak: 1, lone: loneGroups},
		foldEvery:  defaultFoldEvery,
		hostMarks:  defaultHostMarks,
		maxMarks:   defaultMaxMarks,
		chunkAge:   defaultChunkAge,
		inbox: inbox{
			chunks: map[uint64]int64{}, hostStaged: defaultHostStaged,
			maxStaged: defaultMaxStaged, age: defaultStagedAge,
		},
	}
	if err := db.Update(initBuckets); err != nil {
		return nil, err
	}
	if err := db.View(f.load); err != nil {
		return nil, err
	}
	go f.writeLoop()
	return f, nil
}

func initBuckets(tx *bbolt.Tx) error {
	for _, name := range [][]byte{bucketURLs, bucketInbox, bucketHosts, bucketLog, bucketMarks, bucketMeta} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("frontier: create bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket(bucketMeta)
	v := meta.Get(keyVersion)
	if v == nil {
		return meta.Put(keyVersion, []byte{schemaVersion})
	}
	if len(v) != 1 || v[0] != schemaVersion {
		return fmt.Errorf("frontier: database has schema version %v, want %d", v, schemaVersion)
	}
	return nil
}

// load reads the hosts, replays the log of their counts, reads the marks
// and the inbox back, and finds each host's earliest delayed URL. It reads
// a record and a key per host, at most about defaultFoldEvery log entries,
// defaultMaxMarks marks and maxStaged inbox entries (each looked up in the
// urls bucket), and no other URL.
func (f *Frontier) load(tx *bbolt.Tx) error {
	byID := f.byID
	err := tx.Bucket(bucketHosts).ForEach(func(k, v []byte) error {
		if len(k) != 4 {
			return fmt.Errorf("frontier: host key %x: %w", k, errCorrupt)
		}
		rec, err := decodeHostRecord(v)
		if err != nil {
			return fmt.Errorf("frontier: host %x: %w", k, err)
		}
		h := newHost(binary.BigEndian.Uint32(k), rec)
		h.persisted = true
		f.lastID = max(f.lastID, h.id)
		f.hosts[rec.origin] = h
		byID[h.id] = h
		return nil
	})
	if err != nil {
		return err
	}
	err = tx.Bucket(bucketLog).ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("frontier: log key %x: %w", k, errCorrupt)
		}
		f.logN++
		seq := binary.BigEndian.Uint64(k)
		var bad error
		err := decodeLogEntry(v, func(id uint32, c counts, flushedTo uint64) {
			h := byID[id]
			switch {
			case h == nil:
				bad = fmt.Errorf("frontier: log entry %d: unknown host %d: %w", seq, id, errCorrupt)
			case seq > h.rec.logPos:
				h.rec.add(c, 1)
				h.rec.flushedTo = max(h.rec.flushedTo, flushedTo)
				if !h.dirty {
					h.dirty = true
					f.dirty = append(f.dirty, h)
				}
			}
		})
		if err == nil {
			err = bad
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := f.loadMarks(tx.Bucket(bucketMarks), tx.Bucket(bucketURLs)); err != nil {
		return err
	}
	if err := f.loadInbox(tx.Bucket(bucketInbox), tx.Bucket(bucketURLs)); err != nil {
		return err
	}
	c := tx.Bucket(bucketURLs).Cursor()
	for _, h := range byID {
		f.sum.add(h.rec.counts, 1)
		if h.rec.parked {
			f.parked.add(h.rec.counts, 1)
		}
		if h.rec.delayed > 0 {
			prefix := append(appendUint32(nil, h.id), classDelayed)
			if k, _ := c.Seek(prefix); len(k) == delayedKeyLen && strings.HasPrefix(string(k), string(prefix)) {
				h.hint = int64(binary.BigEndian.Uint64(k[5:13]))
			}
		}
		f.reheap(h)
	}
	return nil
}

// Close stops the frontier: it waits for the operations under way, then
// closes the database if Open opened it. Leases still out are void; their
// URLs are queued again at the next open.
func (f *Frontier) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.signal()
	f.mu.Unlock()
	f.sending.Wait()
	close(f.ops)
	<-f.writerDone
	if f.ownDB {
		if err := f.db.Close(); err != nil {
			return fmt.Errorf("frontier: close: %w", err)
		}
	}
	return nil
}

// Add queues the items that were never seen before, in one transaction,
// and returns how many were new. An item seen before (the same Key and
// Kind, in any state, across restarts) is not queued again, but what it
// brings is recorded: InSitemap; from a sitemap entry (InSitemap), a Depth
// smaller than the one recorded, with its Via and Referrer; and a Lastmod
// later than the one recorded (W3C datetimes are compared as times, other
// strings whenever they differ). When such a Lastmod replaces one recorded
// before, the URL is due again at the item's NotBefore (at once if zero),
// as Reschedule makes it: a done URL becomes a revisit ("a sitemap entry
// whose lastmod moved is due at once"). A first Lastmod is only recorded.
//
// Items must come from Canonicalize or Resolve. More than Options.MaxBatch
// items are added in several transactions, each all or nothing.
func (f *Frontier) Add(items []Item) (int, error) {
	if err := checkItems(items); err != nil {
		return 0, err
	}
	total := 0
	for len(items) > 0 {
		chunk := items[:min(len(items), f.opts.MaxBatch)]
		items = items[len(chunk):]
		n, err := f.submit(len(chunk), func(b *batch) (int, error) { return b.addItems(chunk) })
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// checkItems checks that items have the shape Canonicalize gives them.
func checkItems(items []Item) error {
	for i := range items {
		it := &items[i]
		if len(it.Key) <= len(it.Origin) || !strings.HasPrefix(it.Key, it.Origin) ||
			(it.Key[len(it.Origin)] != '/' && it.Key[len(it.Origin)] != '?') ||
			!strings.Contains(it.Origin, "://") || strings.IndexByte(it.Key, 0) >= 0 {
			return fmt.Errorf("frontier: item %d: key %q and origin %q do not come from Canonicalize", i, it.Key, it.Origin)
		}
	}
	return nil
}

// Reschedule makes the URL of key (a canonical Key) and kind due at the
// given time if that is earlier than when it is due now: a done URL becomes
// a scheduled revisit, a scheduled or delayed one moves earlier; a queued,
// undelayed one is due already. It reports whether the URL is known.
func (f *Frontier) Reschedule(key string, kind Kind, at time.Time) (bool, error) {
	u, err := Canonicalize(key, max(3*len(key), DefaultMaxURLLength))
	if err != nil {
		return false, fmt.Errorf("frontier: reschedule: %w", err)
	}
	n, err := f.submit(1, func(b *batch) (int, error) {
		f.mu.Lock()
		h := f.hosts[u.Origin]
		f.mu.Unlock()
		if h == nil {
			return 0, nil
		}
		if b.touch(h).stagedN() > 0 {
			if err := b.flushStaged(h); err != nil {
				return 0, err
			}
		}
		k := b.keep(func(a []byte) []byte { return urlKey(a, h.id, u.Key[len(u.Origin):], kind) })
		v := b.get(k)
		if v == nil {
			return 0, nil
		}
		r, err := decodeRecord(v, h.rec.origin)
		if err != nil {
			return 0, fmt.Errorf("frontier: reschedule %s: %w", key, err)
		}
		inQueue, err := b.queued(h, &r)
		if err != nil {
			return 0, err
		}
		return 1, b.reschedule(h, k, &r, inQueue, timeNanos(at))
	})
	return n == 1, err
}

// RescheduleDone makes every URL done, and not scheduled already, due
// again at `at`, as Reschedule makes one: a new pass over what was
// crawled. It works host by host, in transactions of at most
// Options.MaxBatch URLs each, and returns how many URLs it rescheduled.
func (f *Frontier) RescheduleDone(at time.Time) (int, error) {
	f.mu.Lock()
	hosts := make([]*host, 0, len(f.hosts))
	for _, h := range f.hosts {
		hosts = append(hosts, h)
	}
	f.mu.Unlock()
	total, most := 0, f.opts.MaxBatch
	for _, h := range hosts {
		for {
			n, err := f.submit(most, func(b *batch) (int, error) { return b.rescheduleDone(h, timeNanos(at), most) })
			total += n
			if err != nil {
				return total, fmt.Errorf("frontier: reschedule done URLs: %w", err)
			}
			if n < most {
				break
			}
		}
	}
	return total, nil
}

// Finished is a URL finished by another worker of a crawl shared by
// several (frontier/cluster), for MarkDone: its canonical key and kind,
// and when it is due again for a revisit (zero: never).
type Finished struct {
	Key       string
	Kind      Kind
	RevisitAt time.Time
}

// MarkDone records URLs finished elsewhere, as a worker learns them from
// the changelog of a part of the crawl it takes over: each becomes done,
// or scheduled for a revisit at RevisitAt, whether it was queued here,
// done or scheduled already, or never seen (it is added done, so that a
// link found later does not queue it again). A URL leased here is left as
// it is: the caller holds the hosts back while it applies what it learns.
// It returns how many URLs changed.
func (f *Frontier) MarkDone(urls []Finished) (int, error) {
	total := 0
	for len(urls) > 0 {
		chunk := urls[:min(len(urls), f.opts.MaxBatch)]
		urls = urls[len(chunk):]
		n, err := f.submit(len(chunk), func(b *batch) (int, error) {
			changed := 0
			for i := range chunk {
				ok, err := b.finishedElsewhere(&chunk[i])
				if err != nil {
					return 0, err
				}
				if ok {
					changed++
				}
			}
			return changed, nil
		})
		total += n
		if err != nil {
			return total, fmt.Errorf("frontier: mark done: %w", err)
		}
	}
	return total, nil
}

// Stats counts the URLs of all hosts.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.sum
	return Stats{
		Queued:    max(0, s.ready+s.delayed-s.scheduled-(f.leasedN-f.leasedSched)),
		Leased:    f.leasedN,
		Done:      max(0, s.done-f.leasedSched),
		Scheduled: max(0, s.scheduled-f.leasedSched),
	}
}

// Wake returns a channel that is closed at the next change that may let
// Next hand out a URL sooner than it said (Add, Done, Retry, Release,
// SetReady, SetHostWait, Unpark, Reschedule) and at Close. Take a new
// channel after each wake-up.
func (f *Frontier) Wake() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wakeTaken = true
	return f.wake
}

// signal wakes whoever waits on Wake. f.mu must be held.
func (f *Frontier) signal() {
	if f.wakeTaken {
		close(f.wake)
		f.wake = make(chan struct{})
		f.wakeTaken = false
	}
}

func appendUint32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
