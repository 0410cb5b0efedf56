package frontier

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newTest(t *testing.T, db *bbolt.DB, opts Options) *Frontier {
	t.Helper()
	f, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func mustCheck(t *testing.T, f *Frontier) {
	t.Helper()
	if err := check(f); err != nil {
		t.Fatal(err)
	}
}

// next takes a lease and makes its host ready again at once.
func next(t *testing.T, f *Frontier, now time.Time) *Lease {
	t.Helper()
	l, idle, err := f.Next(now)
	if err != nil {
		t.Fatal(err)
	}
	if l == nil {
		t.Fatalf("Next(%v): nothing, %+v", now, idle)
	}
	f.SetReady(l.Origin, now)
	return l
}

func keys(t *testing.T, f *Frontier, now time.Time, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l := next(t, f, now)
		out = append(out, l.Key)
		if _, err := f.Done(l, Outcome{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestAddDedupesAcrossRestarts(t *testing.T) {
	db := testDB(t, false)
	f := newTest(t, db, Options{})
	items := []Item{item(t, "http://a.test/1"), item(t, "HTTP://A.test:80/1#x"), item(t, "http://a.test/2"), item(t, "http://b.test/1")}
	if n, err := f.Add(items); err != nil || n != 3 {
		t.Fatalf("Add = %d, %v; want 3", n, err)
	}
	sm := item(t, "http://a.test/1")
	sm.Kind = KindSitemap
	if n, err := f.Add([]Item{sm}); err != nil || n != 1 {
		t.Fatalf("Add(a sitemap at a page's address) = %d, %v; want 1", n, err)
	}
	mustCheck(t, f)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = newTest(t, db, Options{})
	if n, err := f.Add(append(items, sm)); err != nil || n != 0 {
		t.Fatalf("Add after reopen = %d, %v; want 0", n, err)
	}
	if s := f.Stats(); s != (Stats{Queued: 4}) {
		t.Errorf("Stats = %+v", s)
	}
	mustCheck(t, f)
}

// TestRequisiteKept checks that a requisite is handed out as one, after
// a restart too, and that a link found to it later leaves it one.
func TestRequisiteKept(t *testing.T) {
	db := testDB(t, false)
	f := newTest(t, db, Options{})
	req := item(t, "http://cdn.test/a.css")
	req.Requisite = true
	if _, err := f.Add([]Item{req, item(t, "http://a.test/")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add([]Item{item(t, "http://cdn.test/a.css")}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = newTest(t, db, Options{})
	got := map[string]bool{}
	for range 2 {
		l := next(t, f, t0)
		got[l.Key] = l.Requisite
	}
	if !got["http://cdn.test/a.css"] || got["http://a.test/"] {
		t.Errorf("requisite flags = %v; want only http://cdn.test/a.css", got)
	}
	mustCheck(t, f)
}

func TestNextOrder(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	var items []Item
	for i, p := range []float64{0.5, 0.9, 0, 0.9, -1, 1} {
		it := item(t, fmt.Sprintf("http://a.test/%d", i))
		it.Priority = p
		items = append(items, it)
	}
	late := item(t, "http://a.test/late")
	late.NotBefore = t0.Add(time.Hour)
	early := item(t, "http://a.test/early")
	early.NotBefore = t0.Add(-time.Hour)
	items = append(items, late, early)
	if _, err := f.Add(items); err != nil {
		t.Fatal(err)
	}
	got := keys(t, f, t0, 7)
	want := []string{"http://a.test/early", "http://a.test/5", "http://a.test/1", "http://a.test/3", "http://a.test/0", "http://a.test/2", "http://a.test/4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order\n got %v\nwant %v", got, want)
	}
	l, idle, err := f.Next(t0)
	if l != nil || err != nil || !idle.Until.Equal(t0.Add(time.Hour)) || idle.Drained {
		t.Fatalf("Next = %v, %+v, %v; want idle until the late URL", l, idle, err)
	}
	if got := keys(t, f, t0.Add(time.Hour), 1); got[0] != "http://a.test/late" {
		t.Errorf("last = %v", got)
	}
	if _, idle, _ := f.Next(t0.Add(2 * time.Hour)); !idle.Drained || !idle.Until.IsZero() {
		t.Errorf("idle = %+v, want drained", idle)
	}
	mustCheck(t, f)
}

// TestHostsTakeTurns checks that hosts are handed out by the time they
// became ready, and that a busy host waits for SetReady.
func TestHostsTakeTurns(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	var items []Item
	for i := range 3 {
		for _, h := range []string{"a", "b", "c"} {
			items = append(items, item(t, fmt.Sprintf("http://%s.test/%d", h, i)))
		}
	}
	if _, err := f.Add(items); err != nil {
		t.Fatal(err)
	}
	var got []string
	now := t0
	for range 9 {
		l, _, err := f.Next(now)
		if err != nil || l == nil {
			t.Fatalf("Next: %v, %v", l, err)
		}
		got = append(got, l.Origin[7:8])
		// Each host's delay is one second from its request.
		f.SetReady(l.Origin, now.Add(time.Second))
		if _, err := f.Done(l, Outcome{}, nil); err != nil {
			t.Fatal(err)
		}
		now = now.Add(400 * time.Millisecond)
	}
	// a, b, c are ready at 0; a at 1.0, b at 1.4, c at 1.8, ...
	if s := fmt.Sprint(got); s != "[a b c a b c a b c]" {
		t.Errorf("turns %s", s)
	}

	// A busy host is not handed out again before SetReady.
	if _, err := f.Add([]Item{item(t, "http://d.test/1"), item(t, "http://d.test/2")}); err != nil {
		t.Fatal(err)
	}
	l, _, _ := f.Next(now)
	if l == nil {
		t.Fatal("no lease")
	}
	if l2, idle, _ := f.Next(now.Add(time.Hour)); l2 != nil || !idle.Until.IsZero() || idle.Drained {
		t.Fatalf("Next while busy = %v, %+v", l2, idle)
	}
	if h, _ := f.Host("http://d.test"); !h.Busy || h.Queued != 1 || h.Leased != 1 {
		t.Errorf("host %+v", h)
	}
	f.SetReady(l.Origin, now) // max_per_host > 1: ready again at once
	l2, _, _ := f.Next(now)
	if l2 == nil || l2.Key == l.Key {
		t.Fatalf("second lease %v", l2)
	}
	// A lease given back before SetReady ends the busy state it began;
	// one that did not begin it (l) leaves the host busy.
	if err := f.Release(l, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if h, _ := f.Host("http://d.test"); !h.Busy {
		t.Errorf("host not busy after another lease's end: %+v", h)
	}
	if err := f.Release(l2, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if h, _ := f.Host("http://d.test"); h.Busy {
		t.Errorf("host busy after its lease was given back without SetReady: %+v", h)
	}
	if l3, _, _ := f.Next(now); l3 == nil {
		t.Fatal("host not handed out again after its lease was given back")
	}
	mustCheck(t, f)
}

func TestLeaseLifecycle(t *testing.T) {
	db := testDB(t, false)
	f := newTest(t, db, Options{})
	if _, err := f.Add([]Item{item(t, "http://a.test/1")}); err != nil {
		t.Fatal(err)
	}
	// Retry: due later, one more attempt.
	l := next(t, f, t0)
	if err := f.Retry(l, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := f.Retry(l, t0); !errors.Is(err, ErrLease) {
		t.Errorf("second Retry: %v, want ErrLease", err)
	}
	if l2, idle, _ := f.Next(t0); l2 != nil || !idle.Until.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Next before the retry is due = %v, %+v", l2, idle)
	}
	l = next(t, f, t0.Add(time.Minute))
	if l.Attempts != 1 || !l.NotBefore.Equal(t0.Add(time.Minute)) {
		t.Errorf("after Retry: attempts %d, not before %v", l.Attempts, l.NotBefore)
	}
	// Release without a time: back in place, no attempt counted.
	if err := f.Release(l, time.Time{}); err != nil {
		t.Fatal(err)
	}
	l = next(t, f, t0.Add(time.Minute))
	if l.Attempts != 1 {
		t.Errorf("after Release: attempts %d", l.Attempts)
	}
	// A crash with the lease out: queued again.
	mustCheck(t, f)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Done(l, Outcome{}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Done after Close: %v", err)
	}
	f = newTest(t, db, Options{})
	if s := f.Stats(); s != (Stats{Queued: 1}) {
		t.Errorf("after reopen %+v", s)
	}
	l2 := next(t, f, t0.Add(time.Minute))
	if _, err := f.Done(l, Outcome{}, nil); !errors.Is(err, ErrLease) {
		t.Errorf("Done of a lease of the closed frontier: %v", err)
	}
	// Done with a revisit: scheduled, then handed out again as a revisit.
	if _, err := f.Done(l2, Outcome{RevisitAt: t0.Add(time.Hour)}, nil); err != nil {
		t.Fatal(err)
	}
	if s := f.Stats(); s != (Stats{Done: 1, Scheduled: 1}) {
		t.Errorf("after a revisit is scheduled %+v", s)
	}
	if _, idle, _ := f.Next(t0.Add(time.Minute)); idle.Drained || idle.Scheduled != 1 || !idle.Until.Equal(t0.Add(time.Hour)) {
		t.Errorf("idle %+v", idle)
	}
	l3 := next(t, f, t0.Add(time.Hour))
	if !l3.Revisit || l3.Attempts != 0 || l3.Key != "http://a.test/1" {
		t.Errorf("revisit lease %+v", l3)
	}
	if s := f.Stats(); s != (Stats{Leased: 1}) {
		t.Errorf("during the revisit %+v", s)
	}
	if _, err := f.Done(l3, Outcome{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, idle, _ := f.Next(t0.Add(2 * time.Hour)); !idle.Drained {
		t.Errorf("idle %+v, want drained", idle)
	}
	mustCheck(t, f)
}

func TestDoneIsAtomicWithHookAndLinks(t *testing.T) {
	db := testDB(t, false)
	f := newTest(t, db, Options{MaxBatch: 4})
	if _, err := f.Add([]Item{item(t, "http://a.test/")}); err != nil {
		t.Fatal(err)
	}
	l := next(t, f, t0)
	links := []Item{item(t, "http://a.test/x"), item(t, "http://b.test/y")}
	hookErr := errors.New("disk full")
	_, err := f.Done(l, Outcome{Hook: func(*bbolt.Tx) error { return hookErr }}, links)
	if !errors.Is(err, hookErr) {
		t.Fatalf("Done with a failing hook: %v", err)
	}
	if s := f.Stats(); s != (Stats{Leased: 1}) {
		t.Errorf("after a failed Done %+v", s)
	}
	mustCheck(t, f)
	_, err = f.Done(l, Outcome{Hook: func(*bbolt.Tx) error { panic("boom") }}, links)
	if err == nil {
		t.Fatal("Done with a panicking hook succeeded")
	}
	// The hook writes in the same transaction.
	hook := func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("storage.pages"))
		if err != nil {
			return err
		}
		return b.Put([]byte(l.Key), []byte("200"))
	}
	// More links than MaxBatch: added in several transactions.
	for i := range 9 {
		links = append(links, item(t, fmt.Sprintf("http://c.test/%d", i)))
	}
	if n, err := f.Done(l, Outcome{Hook: hook}, links); err != nil || n != 11 {
		t.Fatalf("Done = %d, %v", n, err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket([]byte("storage.pages")).Get([]byte(l.Key)); string(v) != "200" {
			return fmt.Errorf("hook's record = %q", v)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if s := f.Stats(); s != (Stats{Queued: 11, Done: 1}) {
		t.Errorf("after Done %+v", s)
	}
	mustCheck(t, f)
}

func TestHostState(t *testing.T) {
	db := testDB(t, false)
	f := newTest(t, db, Options{})
	if _, err := f.Add([]Item{item(t, "http://a.test/1"), item(t, "http://b.test/1")}); err != nil {
		t.Fatal(err)
	}
	if err := f.SetHostWait("http://a.test", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := f.Park("http://b.test", "robots.txt 500"); err != nil {
		t.Fatal(err)
	}
	if err := f.SetHostWait("http://new.test", t0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = newTest(t, db, Options{})
	if l, idle, _ := f.Next(t0); l != nil || !idle.Until.Equal(t0.Add(time.Hour)) || idle.Drained {
		t.Fatalf("Next = %v, %+v; want a wait until the Retry-After", l, idle)
	}
	hosts := f.Hosts()
	if len(hosts) != 3 || !hosts[0].Wait.Equal(t0.Add(time.Hour)) || !hosts[1].Parked || hosts[1].ParkReason != "robots.txt 500" || hosts[1].Queued != 1 {
		t.Errorf("Hosts = %+v", hosts)
	}
	l := next(t, f, t0.Add(time.Hour))
	if _, err := f.Done(l, Outcome{}, nil); err != nil {
		t.Fatal(err)
	}
	// Only the parked host has URLs: drained.
	if _, idle, _ := f.Next(t0.Add(time.Hour)); !idle.Drained {
		t.Errorf("idle %+v, want drained", idle)
	}
	if err := f.Unpark("http://b.test"); err != nil {
		t.Fatal(err)
	}
	if l := next(t, f, t0.Add(time.Hour)); l.Key != "http://b.test/1" {
		t.Errorf("after Unpark: %v", l.Key)
	}
	mustCheck(t, f)
}

func TestLastmodReschedules(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	sm := func(lastmod string) Item {
		it := item(t, "http://a.test/page")
		it.Via, it.InSitemap, it.Lastmod = ViaSitemap, true, lastmod
		return it
	}
	if _, err := f.Add([]Item{sm("2024-01-01")}); err != nil {
		t.Fatal(err)
	}
	keys(t, f, t0, 1)
	for _, tt := range []struct {
		lastmod string
		due     bool
	}{
		{"2024-01-01", false},
		{"2023-12-31T23:00:00Z", false}, // older
		{"2024-01-01T00:00:00+00:00", false},
		{"2024-01-02T10:00:00+02:00", true},
		{"2024-01-02T10:00:00+02:00", false},
		{"next week", true}, // not a date: a change is a change
	} {
		if n, err := f.Add([]Item{sm(tt.lastmod)}); err != nil || n != 0 {
			t.Fatalf("Add = %d, %v", n, err)
		}
		l, _, _ := f.Next(t0)
		if (l != nil) != tt.due {
			t.Fatalf("lastmod %s: lease %v, want due %v", tt.lastmod, l, tt.due)
		}
		if l != nil {
			if !l.Revisit || l.Lastmod != tt.lastmod {
				t.Errorf("lease %+v", l)
			}
			f.SetReady(l.Origin, t0)
			if _, err := f.Done(l, Outcome{}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Reschedule by key.
	if ok, err := f.Reschedule("http://a.test/page", KindPage, t0.Add(time.Minute)); !ok || err != nil {
		t.Fatalf("Reschedule = %v, %v", ok, err)
	}
	if ok, err := f.Reschedule("http://a.test/page", KindPage, t0.Add(time.Hour)); !ok || err != nil {
		t.Fatalf("Reschedule later = %v, %v", ok, err)
	}
	if ok, _ := f.Reschedule("http://a.test/other", KindPage, t0); ok {
		t.Error("Reschedule of an unknown URL reported it known")
	}
	if _, idle, _ := f.Next(t0); !idle.Until.Equal(t0.Add(time.Minute)) || idle.Scheduled != 1 {
		t.Errorf("idle %+v; want due at the earlier time", idle)
	}
	mustCheck(t, f)
}

func TestOpenClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	f, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add([]Item{item(t, "http://a.test/")}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := f.Add([]Item{item(t, "http://a.test/")}); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v", err)
	}
	if _, _, err := f.Next(t0); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	f, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s := f.Stats(); s.Queued != 1 {
		t.Errorf("Stats %+v", s)
	}
	if _, err := f.Add([]Item{{URL: URL{Key: "http://a.test/x", Origin: "http://b.test"}}}); err == nil {
		t.Error("Add of an item not from Canonicalize succeeded")
	}
}

// TestNew checks that the frontier shares a database with other buckets
// and does not close it.
func TestNew(t *testing.T) {
	db := testDB(t, true)
	if err := db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucket([]byte("storage.pages"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
			if n := string(name); n != "storage.pages" && n[:9] != "frontier." {
				return fmt.Errorf("bucket %q", n)
			}
			return nil
		})
	}); err != nil {
		t.Error(err)
	}
}

func TestWake(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	w := f.Wake()
	select {
	case <-w:
		t.Fatal("woken before any change")
	default:
	}
	if _, err := f.Add([]Item{item(t, "http://a.test/")}); err != nil {
		t.Fatal(err)
	}
	// The change is applied before Add returns, and the channel closed
	// with it: no wait, which a busy machine could outlast.
	select {
	case <-w:
	default:
		t.Fatal("Add returned without a wake")
	}
}

// TestSitemapLowersDepth checks that a URL queued by a link and then listed
// in a sitemap takes the sitemap entry's depth, via and referrer, and that a
// later link does not raise it again.
func TestSitemapLowersDepth(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	link := func(u string, depth int) Item {
		it := item(t, u)
		it.Via, it.Depth, it.Referrer = ViaLink, depth, "http://a.test/"
		return it
	}
	if _, err := f.Add([]Item{link("http://a.test/1", 1), link("http://a.test/2", 2)}); err != nil {
		t.Fatal(err)
	}
	var sm []Item
	for _, u := range []string{"http://a.test/1", "http://a.test/2"} {
		it := item(t, u)
		it.Via, it.InSitemap, it.Referrer = ViaSitemap, true, "http://a.test/sitemap.xml"
		sm = append(sm, it)
	}
	if n, err := f.Add(sm); err != nil || n != 0 {
		t.Fatalf("Add(sitemap entries) = %d, %v; want 0 new", n, err)
	}
	if n, err := f.Add([]Item{link("http://a.test/1", 3)}); err != nil || n != 0 {
		t.Fatalf("Add(link again) = %d, %v", n, err)
	}
	for range 2 {
		l := next(t, f, t0)
		if l.Depth != 0 || l.Via != ViaSitemap || l.Referrer != "http://a.test/sitemap.xml" || !l.InSitemap {
			t.Errorf("%s: depth %d, via %v, referrer %q, in sitemap %v; want 0, sitemap, the sitemap, true",
				l.Key, l.Depth, l.Via, l.Referrer, l.InSitemap)
		}
		if _, err := f.Done(l, Outcome{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, f)
}

// TestPending checks that Pending lists the URLs queued and never visited,
// with what they were queued with, and leaves out those leased, done, or
// scheduled for a revisit.
func TestPending(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	var items []Item
	for _, u := range []string{"http://a.test/done", "http://a.test/leased", "http://a.test/q1", "http://b.test/revisit", "http://b.test/q2"} {
		it := item(t, u)
		it.Via, it.Depth, it.Referrer = ViaLink, 2, "http://a.test/"
		items = append(items, it)
	}
	sm := item(t, "http://b.test/sitemap.xml")
	sm.Kind, sm.Via = KindSitemap, ViaSitemap
	late := item(t, "http://a.test/late")
	late.NotBefore = t0.Add(time.Hour)
	if _, err := f.Add(append(items, sm, late)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l := next(t, f, t0)
		switch l.Key {
		case "http://a.test/done":
			if _, err := f.Done(l, Outcome{}, nil); err != nil {
				t.Fatal(err)
			}
		case "http://b.test/revisit":
			if _, err := f.Done(l, Outcome{RevisitAt: t0.Add(time.Hour)}, nil); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("lease %s", l.Key)
		}
	}
	leased := next(t, f, t0)
	if leased.Key != "http://a.test/leased" {
		t.Fatalf("lease %s", leased.Key)
	}
	var got []string
	err := f.Pending(func(it Item) error {
		got = append(got, fmt.Sprintf("%s %s %s %d", it.Key, it.Kind, it.Via, it.Depth))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"http://a.test/q1 page link 2",
		"http://a.test/late page link 0",
		"http://b.test/q2 page link 2",
		"http://b.test/sitemap.xml sitemap sitemap 0",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Pending\n got %q\nwant %q", got, want)
	}
	stop := errors.New("stop")
	n := 0
	if err := f.Pending(func(Item) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Pending with an error: %v after %d calls", err, n)
	}
	mustCheck(t, f)
}

// TestStagedBounded stages many thin chunks (a few links to new hosts per
// batch), then batches of links to new hosts, one each: the inbox must
// flush older URLs as fast as new ones come, never holding more than
// maxStaged beyond what one transaction stages, however thin the chunks.
func TestStagedBounded(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	f.mu.Lock()
	f.inbox.maxStaged = 2000
	f.mu.Unlock()
	host := 0
	add := func(n int) {
		items := make([]Item, 0, n)
		for range n {
			host++
			items = append(items, item(t, fmt.Sprintf("http://h%d.test/x", host)))
		}
		if _, err := f.Add(items); err != nil {
			t.Fatal(err)
		}
		mustCheck(t, f)
	}
	for range 125 {
		add(16)
	}
	for range 6 {
		add(DefaultMaxBatch)
	}
	if s := f.Stats(); s.Queued != int64(host) {
		t.Fatalf("queued %d, want %d", s.Queued, host)
	}
}

// TestStagedInOrder checks that URLs staged in the inbox (fewer than
// stageBelow of a host in a batch) take their place in their host's queue,
// for Next and Pending alike, before and after a reopen, and are
// deduplicated.
func TestStagedInOrder(t *testing.T) {
	db := testDB(t, false)
	f := newTest(t, db, Options{})
	add := func(items ...Item) {
		t.Helper()
		if _, err := f.Add(items); err != nil {
			t.Fatal(err)
		}
	}
	var written []Item
	for i := range stageBelow {
		written = append(written, item(t, fmt.Sprintf("http://a.test/w%d", i)))
	}
	add(written...)
	hi, lo, mid := item(t, "http://a.test/hi"), item(t, "http://a.test/lo"), item(t, "http://a.test/mid")
	hi.Priority, lo.Priority = 0.9, 0.1
	add(hi)
	add(lo, mid)
	if n, err := f.Add([]Item{mid}); n != 0 || err != nil {
		t.Fatalf("Add of a staged URL again = %d, %v", n, err)
	}
	want := []string{"http://a.test/hi", "http://a.test/w0", "http://a.test/w1", "http://a.test/w2", "http://a.test/w3", "http://a.test/mid", "http://a.test/lo"}
	pending := func() {
		t.Helper()
		var got []string
		if err := f.Pending(func(it Item) error { got = append(got, it.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Pending\n got %v\nwant %v", got, want)
		}
	}
	pending()
	if f.inbox.n != 3 {
		t.Fatalf("%d URLs staged, want 3", f.inbox.n)
	}
	mustCheck(t, f)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = newTest(t, db, Options{})
	if f.inbox.n != 3 {
		t.Fatalf("%d URLs staged after reopening, want 3", f.inbox.n)
	}
	mustCheck(t, f)
	pending()
	if got := keys(t, f, t0, len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order\n got %v\nwant %v", got, want)
	}
	if f.inbox.n != 0 || len(f.inbox.chunks) != 0 {
		t.Errorf("%d URLs staged in %d chunks once all are done", f.inbox.n, len(f.inbox.chunks))
	}
	mustCheck(t, f)
}

// TestLinksLowerLinkDepth checks that a link brings a URL not yet done the
// least link depth found, and its place among the links by it, and that
// one only a sitemap listed, queued low, goes up among the links when a
// link reaches it, staged or not; a URL done keeps its own, and a lease
// out ends well.
func TestLinksLowerLinkDepth(t *testing.T) {
	for _, staged := range []bool{false, true} {
		f := newTest(t, testDB(t, false), Options{})
		add := func(items ...Item) {
			t.Helper()
			if staged {
				for _, it := range items {
					if _, err := f.Add([]Item{it}); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			// With stageBelow items of a host, none is staged.
			for len(items) < stageBelow {
				items = append(items, items[0])
			}
			if _, err := f.Add(items); err != nil {
				t.Fatal(err)
			}
		}
		link := func(u string, ld int) Item {
			it := item(t, u)
			it.Via, it.Depth, it.LinkDepth = ViaLink, ld, ld
			return it
		}
		listed := func(u string) Item {
			it := item(t, u)
			it.Via, it.InSitemap, it.LinkDepth, it.Priority = ViaSitemap, true, NoLinkDepth, 0.25
			return it
		}
		add(listed("http://a.test/s1"), listed("http://a.test/s2"), link("http://a.test/l", 3))
		add(link("http://a.test/s2", 4), link("http://a.test/l", 2))
		add(link("http://a.test/s2", 5), link("http://a.test/l", 9))
		want := []struct {
			key string
			ld  int
		}{{"http://a.test/l", 2}, {"http://a.test/s2", 4}, {"http://a.test/s1", NoLinkDepth}}
		for i, w := range want {
			l := next(t, f, t0)
			if l.Key != w.key || l.LinkDepth != w.ld {
				t.Errorf("staged %v: lease %d is %s at link depth %d; want %s at %d", staged, i, l.Key, l.LinkDepth, w.key, w.ld)
			}
			if i == 0 {
				add(link("http://a.test/l", 1)) // leased: the lease keeps its own
			}
			if _, err := f.Done(l, Outcome{}, nil); err != nil {
				t.Fatal(err)
			}
		}
		before := f.Stats()
		add(link("http://a.test/l", 0)) // done: nothing changes
		if after := f.Stats(); after != before || after.Queued != 0 || after.Done != 3 {
			t.Errorf("staged %v: a link to a URL done changed the counts %+v to %+v; want 3 done, none queued", staged, before, after)
		}
		if l, _, err := f.Next(t0); l != nil || err != nil {
			t.Errorf("staged %v: a link to a URL done queued it again: %v, %v", staged, l, err)
		}
		mustCheck(t, f)
	}
}

// TestRescheduleDone checks that every URL done, across hosts and in more
// than one transaction, is due again as a revisit, and that those queued,
// leased or scheduled already are left as they are.
func TestRescheduleDone(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{MaxBatch: 3})
	var items []Item
	for i := range 7 {
		items = append(items, item(t, fmt.Sprintf("http://a.test/%d", i)), item(t, fmt.Sprintf("http://b.test/%d", i)))
	}
	if _, err := f.Add(items); err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	for range 10 {
		l := next(t, f, t0)
		if _, err := f.Done(l, Outcome{}, nil); err != nil {
			t.Fatal(err)
		}
		done[l.Key] = true
	}
	leased := next(t, f, t0)
	n, err := f.RescheduleDone(t0.Add(time.Hour))
	if err != nil || n != 10 {
		t.Fatalf("RescheduleDone = %d, %v; want 10", n, err)
	}
	if n, err := f.RescheduleDone(t0.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("RescheduleDone again = %d, %v; want 0: all are scheduled", n, err)
	}
	if err := f.Release(leased, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Queued != 4 || st.Done != 10 || st.Scheduled != 10 {
		t.Errorf("stats %+v; want 4 queued, 10 done, all scheduled", st)
	}
	revisits := 0
	for range 14 {
		l := next(t, f, t0.Add(2*time.Hour))
		if l.Revisit != done[l.Key] {
			t.Errorf("%s: revisit %v; want %v", l.Key, l.Revisit, done[l.Key])
		}
		if l.Revisit {
			revisits++
		}
		if _, err := f.Done(l, Outcome{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if revisits != 10 {
		t.Errorf("%d revisits; want 10", revisits)
	}
	mustCheck(t, f)
}

// TestMarkDone checks that URLs finished elsewhere become done or
// scheduled whatever their state here — never seen, queued (staged or
// not), scheduled, done — that a lease out is left alone until it is given
// back, and then done, and that the counts stay right.
func TestMarkDone(t *testing.T) {
	f := newTest(t, testDB(t, false), Options{})
	add := func(urls ...string) {
		t.Helper()
		var items []Item
		for _, u := range urls {
			items = append(items, item(t, u))
		}
		if _, err := f.Add(items); err != nil {
			t.Fatal(err)
		}
	}
	add("http://a.test/queued", "http://a.test/revisit", "http://a.test/done", "http://a.test/sched",
		"http://a.test/plain", "http://a.test/2", "http://a.test/3", "http://a.test/4")
	// Done here: /done for good, /sched with a revisit.
	for range 2 {
		l := next(t, f, t0)
		o := Outcome{}
		if l.Key == "http://a.test/revisit" {
			o.RevisitAt = t0.Add(time.Hour)
		}
		if _, err := f.Done(l, o, nil); err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, f)
	leased := next(t, f, t0) // /done
	if leased.Key != "http://a.test/done" {
		t.Fatalf("leased %s", leased.Key)
	}
	add("http://b.test/staged") // alone in its batch: staged
	later := t0.Add(2 * time.Hour)
	n, err := f.MarkDone([]Finished{
		{Key: "http://a.test/new"},                         // never seen: done
		{Key: "http://a.test/new-sched", RevisitAt: later}, // never seen: scheduled
		{Key: "http://a.test/queued"},                      // was done here already (first lease)
		{Key: "http://a.test/revisit"},                     // scheduled here: done for good
		{Key: "http://a.test/sched", RevisitAt: later},     // queued: scheduled
		{Key: "http://a.test/done"},                        // leased: done once given back
		{Key: "http://b.test/staged"},                      // staged: done
		{Key: "http://a.test/2", Kind: KindSitemap},        // another kind: a URL of its own
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("MarkDone changed %d URLs; want 6", n)
	}
	if err := f.Release(leased, time.Time{}); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, f)
	if added, err := f.Add([]Item{item(t, "http://a.test/new"), item(t, "http://b.test/staged")}); err != nil || added != 0 {
		t.Errorf("Add of URLs finished elsewhere = %d, %v; want 0 new", added, err)
	}
	var got []string
	for {
		l, _, err := f.Next(t0.Add(3 * time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			break
		}
		f.SetReady(l.Origin, t0)
		got = append(got, fmt.Sprintf("%s revisit=%v", l.Key, l.Revisit))
		if _, err := f.Done(l, Outcome{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got)
	want := []string{
		"http://a.test/2 revisit=false", // the page, not the sitemap of the same URL
		"http://a.test/3 revisit=false", "http://a.test/4 revisit=false",
		"http://a.test/plain revisit=false", "http://a.test/new-sched revisit=true", "http://a.test/sched revisit=true",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("handed out after MarkDone:\n%v\nwant\n%v", got, want)
	}
	mustCheck(t, f)
}

// TestMarkDoneWhileLeased: a URL another worker finished while it was
// leased here is not handed out again once the lease is given back,
// whichever way (a shared crawl's replay meets the leases its dispatcher
// hands out and puts back); a lease done here stays done.
func TestMarkDoneWhileLeased(t *testing.T) {
	giveBack := map[string]func(f *Frontier, l *Lease) error{
		"release":         func(f *Frontier, l *Lease) error { return f.Release(l, time.Time{}) },
		"release at":      func(f *Frontier, l *Lease) error { return f.Release(l, t0.Add(time.Minute)) },
		"retry":           func(f *Frontier, l *Lease) error { return f.Retry(l, t0.Add(time.Minute)) },
		"done here first": func(f *Frontier, l *Lease) error { _, err := f.Done(l, Outcome{}, nil); return err },
	}
	for name, back := range giveBack {
		t.Run(name, func(t *testing.T) {
			f := newTest(t, testDB(t, false), Options{})
			if _, err := f.Add([]Item{item(t, "http://a.test/x"), item(t, "http://a.test/y")}); err != nil {
				t.Fatal(err)
			}
			l := next(t, f, t0)
			if n, err := f.MarkDone([]Finished{{Key: l.Key}}); err != nil || n != 0 {
				t.Fatalf("MarkDone of a leased URL = %d, %v; want 0, left to its lease", n, err)
			}
			if err := back(f, l); err != nil {
				t.Fatal(err)
			}
			mustCheck(t, f)
			f.SetReady(l.Origin, t0)
			var got []string
			for {
				m, _, err := f.Next(t0.Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				if m == nil {
					break
				}
				f.SetReady(m.Origin, t0)
				got = append(got, m.Key)
				if _, err := f.Done(m, Outcome{}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if want := []string{"http://a.test/y"}; !slices.Equal(got, want) {
				t.Errorf("handed out after the lease was given back: %v; want %v", got, want)
			}
			if st := f.Stats(); st.Done != 2 || st.Queued != 0 || st.Leased != 0 {
				t.Errorf("stats %+v; want 2 done", st)
			}
		})
	}
}
