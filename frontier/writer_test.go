package frontier

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// TestWritersTakeTurns gives leases back from many goroutines at once, so
// that some operations are committed by their callers alone and others by
// the writer in groups, some with a failing hook, and checks that every URL
// is done once, with its hook's record, and that the state adds up.
func TestWritersTakeTurns(t *testing.T) {
	db := testDB(t, false)
	f := newTest(t, db, Options{MaxBatch: 8})
	const hosts, pages = 5, 40
	var seeds []Item
	for h := range hosts {
		seeds = append(seeds, item(t, fmt.Sprintf("http://h%d.test/0", h)))
	}
	if _, err := f.Add(seeds); err != nil {
		t.Fatal(err)
	}
	bucket := []byte("test.done")
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := map[string]int{}
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				l, idle, err := f.Next(t0)
				if err != nil {
					t.Error(err)
					return
				}
				if l == nil {
					if idle.Drained {
						return
					}
					select {
					case <-f.Wake():
					case <-time.After(10 * time.Millisecond):
					}
					continue
				}
				f.SetReady(l.Origin, t0)
				var links []Item
				for k := range 3 {
					links = append(links, item(t, fmt.Sprintf("http://h%d.test/%d", (w+k+i)%hosts, (i*7+k)%pages)))
				}
				if i%5 == 0 {
					failing := func(*bbolt.Tx) error { return errors.New("no room") }
					if _, err := f.Done(l, Outcome{Hook: failing}, links); err == nil {
						t.Error("Done with a failing hook succeeded")
						return
					}
				}
				hook := func(tx *bbolt.Tx) error {
					b, err := tx.CreateBucketIfNotExists(bucket)
					if err != nil {
						return err
					}
					return b.Put([]byte(l.Key), []byte("done"))
				}
				if _, err := f.Done(l, Outcome{Hook: hook}, links); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				done[l.Key]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	mustCheck(t, f)
	s := f.Stats()
	for k, n := range done {
		if n != 1 {
			t.Errorf("%s done %d times", k, n)
		}
	}
	if s.Done != int64(len(done)) || s.Queued != 0 || s.Leased != 0 {
		t.Errorf("stats %+v, %d URLs done", s, len(done))
	}
	err := db.View(func(tx *bbolt.Tx) error {
		if n := tx.Bucket(bucket).Stats().KeyN; n != len(done) {
			return fmt.Errorf("%d hooks' records, %d URLs done", n, len(done))
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = newTest(t, db, Options{})
	mustCheck(t, f)
	if s2 := f.Stats(); s2 != s {
		t.Errorf("reopened: %+v, was %+v", s2, s)
	}
}

// TestLoneRecordAfterLog has a host's counts logged with another's, then
// changed alone (its record written, not a log entry), and checks that
// reopening, which replays the log, does not count the logged change
// twice in that host.
func TestLoneRecordAfterLog(t *testing.T) {
	db := testDB(t, false)
	f := newTest(t, db, Options{})
	if _, err := f.Add([]Item{item(t, "http://a.test/0"), item(t, "http://b.test/0")}); err != nil {
		t.Fatal(err)
	}
	// Both hosts persisted: one transaction changes both counts (a log entry).
	if _, err := f.Add([]Item{item(t, "http://a.test/1"), item(t, "http://b.test/1")}); err != nil {
		t.Fatal(err)
	}
	logged := f.logN
	l := next(t, f, t0)
	if _, err := f.Done(l, Outcome{}, nil); err != nil {
		t.Fatal(err)
	}
	if logged == 0 || f.logN != logged {
		t.Fatalf("log entries %d, then %d after a lone Done: want one or more, then no more", logged, f.logN)
	}
	mustCheck(t, f)
	s := f.Stats()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = newTest(t, db, Options{})
	mustCheck(t, f)
	if s2 := f.Stats(); s2 != s {
		t.Errorf("reopened: %+v, was %+v", s2, s)
	}
}
