package frontier

import (
	"cmp"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

var propertySteps = flag.Int("frontier.steps", 1000, "steps of each run of TestLeaseStateMachine")

// mURL is the model of one URL.
type mURL struct {
	id       string // Kind and Key
	key      string
	kind     Kind
	origin   string
	state    state
	delayed  bool
	due      int64
	prio     uint16
	order    int // the order the frontier's seq follows
	attempts int
	lastmod  string
	lease    *Lease
}

// mHost is the model of one host.
type mHost struct {
	busyBy  *Lease // the lease that made it busy, until SetReady or its end
	readyAt int64
	wait    int64
	parked  bool
}

// model is what the frontier should hold, kept the simple way.
type model struct {
	urls   map[string]*mURL
	hosts  map[string]*mHost
	order  int
	leases []*Lease
}

func (m *model) host(origin string) *mHost {
	h := m.hosts[origin]
	if h == nil {
		h = &mHost{}
		m.hosts[origin] = h
	}
	return h
}

func (m *model) add(items []Item) int {
	added := 0
	for _, it := range items {
		id := it.Kind.String() + " " + it.Key
		m.host(it.Origin)
		if u := m.urls[id]; u != nil {
			if it.Lastmod != "" && it.Lastmod != u.lastmod && (u.lastmod == "" || lastmodLater(it.Lastmod, u.lastmod)) {
				if u.lastmod != "" {
					m.reschedule(u, timeNanos(it.NotBefore))
				}
				u.lastmod = it.Lastmod
			}
			continue
		}
		m.order++
		m.urls[id] = &mURL{
			id: id, key: it.Key, kind: it.Kind, origin: it.Origin, state: stateQueued,
			delayed: !it.NotBefore.IsZero(), due: timeNanos(it.NotBefore),
			prio: quantPriority(it.Priority), order: m.order, lastmod: it.Lastmod,
		}
		added++
	}
	return added
}

func (m *model) reschedule(u *mURL, at int64) {
	switch {
	case u.state == stateDone:
		u.state, u.delayed, u.due = stateScheduled, true, at
	case u.delayed && u.due > at:
		u.due = at
	}
}

// candidate is the URL the frontier must hand out for host origin at now,
// or nil.
func (m *model) candidate(origin string, now int64) *mURL {
	var best *mURL
	for _, u := range m.urls {
		if u.origin != origin || u.lease != nil || u.state == stateDone || (u.delayed && u.due > now) {
			continue
		}
		if best == nil || m.before(u, best) {
			best = u
		}
	}
	return best
}

// before is the order within a host: due delayed URLs by due time, then
// the others by priority, then FIFO.
func (m *model) before(a, b *mURL) bool {
	if a.delayed != b.delayed {
		return a.delayed
	}
	if a.delayed {
		return cmp.Or(cmp.Compare(a.due, b.due), cmp.Compare(a.order, b.order)) < 0
	}
	return cmp.Or(cmp.Compare(b.prio, a.prio), cmp.Compare(a.order, b.order)) < 0
}

// eligible returns when host origin may next be handed out, if ever.
func (m *model) eligible(origin string) (int64, bool) {
	h := m.hosts[origin]
	if h.busyBy != nil || h.parked {
		return 0, false
	}
	first, ready, any := int64(hintNone), false, false
	for _, u := range m.urls {
		if u.origin != origin || u.lease != nil || u.state == stateDone {
			continue
		}
		any = true
		if !u.delayed {
			ready = true
		} else {
			first = min(first, u.due)
		}
	}
	t := max(h.readyAt, h.wait)
	switch {
	case ready:
		return t, true
	case any:
		return max(t, first), true
	}
	return 0, false
}

func (m *model) stats() Stats {
	var s Stats
	for _, u := range m.urls {
		switch {
		case u.lease != nil:
			s.Leased++
		case u.state == stateQueued:
			s.Queued++
		default:
			s.Done++
			if u.state == stateScheduled {
				s.Scheduled++
			}
		}
	}
	return s
}

func (m *model) drained() bool {
	for _, u := range m.urls {
		if u.lease != nil || (u.state != stateDone && !m.hosts[u.origin].parked) {
			return false
		}
	}
	return true
}

// TestLeaseStateMachine runs random sequences of every operation, with
// closes and reopens, against a model, and checks after each step that the
// frontier hands out exactly what the model says it must: nothing lost,
// nothing twice, nothing done again unless scheduled, in the right order.
func TestLeaseStateMachine(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runStateMachine(t, seed, *propertySteps)
		})
	}
}

func runStateMachine(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 42))
	db := testDB(t, false)
	opts := Options{MaxBatch: 1 + rng.IntN(8)}
	fold, hostMarks, maxMarks, chunkAge := 1+rng.IntN(30), 1+rng.IntN(8), 1+rng.IntN(20), uint64(rng.IntN(10))
	in := inbox{hostStaged: 1 + rng.IntN(8), maxStaged: 1 + rng.IntN(20), age: uint64(rng.IntN(10))}
	setKnobs := func(f *Frontier) {
		f.foldEvery, f.hostMarks, f.maxMarks, f.chunkAge = fold, hostMarks, maxMarks, chunkAge
		f.inbox.hostStaged, f.inbox.maxStaged, f.inbox.age = in.hostStaged, in.maxStaged, in.age
	}
	f, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	setKnobs(f)
	defer func() { _ = f.Close() }()
	m := &model{urls: map[string]*mURL{}, hosts: map[string]*mHost{}}
	now := t0.UnixNano()
	at := func() time.Time { return time.Unix(0, now+int64(rng.IntN(8000)-2000)*int64(time.Millisecond)) }
	origins := []string{"http://a.test", "http://b.test", "https://b.test", "http://c.test:8080", "http://d.test"}
	randItem := func() Item {
		origin := origins[rng.IntN(len(origins))]
		it := item(t, fmt.Sprintf("%s/p%d", origin, rng.IntN(40)))
		if rng.IntN(10) == 0 {
			it.Kind = KindSitemap
		}
		if rng.IntN(4) == 0 {
			it.Via, it.InSitemap = ViaSitemap, true
			it.Lastmod = fmt.Sprintf("2024-01-0%d", 1+rng.IntN(6))
		}
		it.Priority = []float64{0, 0.1, 0.5, 0.9, 1}[rng.IntN(5)]
		if rng.IntN(5) == 0 {
			it.NotBefore = at()
		}
		return it
	}
	randItems := func(n int) []Item {
		items := make([]Item, rng.IntN(n+1))
		for i := range items {
			items[i] = randItem()
		}
		return items
	}
	takeLease := func() *Lease {
		if len(m.leases) == 0 {
			return nil
		}
		i := rng.IntN(len(m.leases))
		l := m.leases[i]
		m.leases = append(m.leases[:i], m.leases[i+1:]...)
		return l
	}
	endLease := func(l *Lease) *mURL {
		u := m.urls[l.Kind.String()+" "+l.Key]
		if u.lease != l {
			t.Fatalf("lease %s is not the model's", l.Key)
		}
		u.lease = nil
		if h := m.hosts[l.Origin]; h.busyBy == l {
			h.busyBy = nil // given back before SetReady: ready as it was
		}
		return u
	}

	for step := range steps {
		if rng.IntN(3) == 0 {
			now += int64(rng.IntN(1500)) * int64(time.Millisecond)
		}
		var what string
		switch r := rng.IntN(100); {
		case r < 15:
			what = "add"
			items := randItems(6)
			n, err := f.Add(items)
			if err != nil {
				t.Fatal(err)
			}
			if want := m.add(items); n != want {
				t.Fatalf("step %d: Add = %d, model %d", step, n, want)
			}
		case r < 50:
			what = "next"
			nowT := time.Unix(0, now)
			l, idle, err := f.Next(nowT)
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				earliest, some := int64(hintNone), false
				for origin := range m.hosts {
					if e, ok := m.eligible(origin); ok {
						if e <= now {
							t.Fatalf("step %d: Next handed out nothing, but %s is eligible at %d ≤ %d", step, origin, e, now)
						}
						earliest, some = min(earliest, e), true
					}
				}
				until := timeNanos(idle.Until)
				if some != !idle.Until.IsZero() || (some && (until <= now || until > earliest)) {
					t.Fatalf("step %d: Idle.Until %v (%d), model %v at %d, now %d", step, idle.Until, until, some, earliest, now)
				}
				if idle.Drained != m.drained() {
					t.Fatalf("step %d: Drained %v, model %v", step, idle.Drained, m.drained())
				}
				break
			}
			e, ok := m.eligible(l.Origin)
			if !ok || e > now {
				t.Fatalf("step %d: Next handed out %s of a host not eligible (%v at %d, now %d)", step, l.Key, ok, e, now)
			}
			want := m.candidate(l.Origin, now)
			id := l.Kind.String() + " " + l.Key
			if want == nil || want.id != id {
				t.Fatalf("step %d: Next = %s, model wants %+v", step, id, want)
			}
			if l.Attempts != want.attempts || l.Revisit != (want.state == stateScheduled) ||
				quantPriority(l.Priority) != want.prio || (want.delayed && timeNanos(l.NotBefore) != want.due) {
				t.Fatalf("step %d: lease %+v, model %+v", step, l.Item, want)
			}
			want.lease = l
			m.leases = append(m.leases, l)
			m.hosts[l.Origin].busyBy = l
			if rng.IntN(4) > 0 {
				ready := at()
				f.SetReady(l.Origin, ready)
				m.hosts[l.Origin].busyBy, m.hosts[l.Origin].readyAt = nil, timeNanos(ready)
			}
		case r < 55:
			what = "setready"
			origin := origins[rng.IntN(len(origins))]
			if h := m.hosts[origin]; h != nil {
				ready := at()
				f.SetReady(origin, ready)
				h.busyBy, h.readyAt = nil, timeNanos(ready)
			}
		case r < 72:
			what = "done"
			l := takeLease()
			if l == nil {
				break
			}
			o := Outcome{}
			if rng.IntN(4) == 0 {
				o.RevisitAt = at()
			}
			links := randItems(5)
			n, err := f.Done(l, o, links)
			if err != nil {
				t.Fatal(err)
			}
			// Links beyond MaxBatch go first, in transactions of their own.
			want := 0
			for len(links) > opts.MaxBatch {
				want += m.add(links[:opts.MaxBatch])
				links = links[opts.MaxBatch:]
			}
			u := endLease(l)
			u.attempts = 0
			if o.RevisitAt.IsZero() {
				u.state, u.delayed, u.due = stateDone, false, 0
			} else {
				u.state, u.delayed, u.due = stateScheduled, true, timeNanos(o.RevisitAt)
			}
			if want += m.add(links); n != want {
				t.Fatalf("step %d: Done added %d, model %d", step, n, want)
			}
		case r < 79:
			what = "retry"
			l := takeLease()
			if l == nil {
				break
			}
			retryAt := at()
			if err := f.Retry(l, retryAt); err != nil {
				t.Fatal(err)
			}
			u := endLease(l)
			u.attempts++
			u.delayed, u.due = true, timeNanos(retryAt)
		case r < 85:
			what = "release"
			l := takeLease()
			if l == nil {
				break
			}
			var relAt time.Time
			if rng.IntN(2) == 0 {
				relAt = at()
			}
			if err := f.Release(l, relAt); err != nil {
				t.Fatal(err)
			}
			u := endLease(l)
			if !relAt.IsZero() {
				u.delayed, u.due = true, timeNanos(relAt)
			}
		case r < 88:
			what = "reschedule"
			it := randItem()
			schedAt := at()
			ok, err := f.Reschedule(it.Key, it.Kind, schedAt)
			if err != nil {
				t.Fatal(err)
			}
			u := m.urls[it.Kind.String()+" "+it.Key]
			if ok != (u != nil) {
				t.Fatalf("step %d: Reschedule(%s) = %v", step, it.Key, ok)
			}
			if u != nil {
				m.reschedule(u, timeNanos(schedAt))
			}
		case r < 92:
			what = "hoststate"
			origin := origins[rng.IntN(len(origins))]
			h := m.host(origin)
			switch rng.IntN(3) {
			case 0:
				wait := at()
				if rng.IntN(3) == 0 {
					wait = time.Time{}
				}
				err = f.SetHostWait(origin, wait)
				h.wait = timeNanos(wait)
			case 1:
				err = f.Park(origin, "test")
				h.parked = true
			default:
				err = f.Unpark(origin)
				h.parked = false
			}
			if err != nil {
				t.Fatal(err)
			}
		case r < 95:
			what = "double"
			// Giving a lease back twice fails and changes nothing.
			if len(m.leases) > 0 {
				l := m.leases[rng.IntN(len(m.leases))]
				if err := f.Release(l, time.Time{}); err != nil {
					t.Fatal(err)
				}
				if err := f.Release(l, time.Time{}); err != ErrLease {
					t.Fatalf("step %d: second Release = %v", step, err)
				}
				endLease(l)
				m.leases = deleteLease(m.leases, l)
			}
		default:
			what = "reopen"
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if f, err = New(db, opts); err != nil {
				t.Fatal(err)
			}
			setKnobs(f)
			for _, u := range m.urls {
				u.lease = nil
			}
			m.leases = nil
			for _, h := range m.hosts {
				h.busyBy, h.readyAt = nil, 0
			}
		}
		if err := check(f); err != nil {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		if err := m.compare(f); err != nil {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		if s, want := f.Stats(), m.stats(); s != want {
			t.Fatalf("step %d (%s): Stats %+v, model %+v", step, what, s, want)
		}
	}
	drainAll(t, f, m, now)
}

// compare checks every URL's record against the model.
func (m *model) compare(f *Frontier) error {
	return f.db.View(func(tx *bbolt.Tx) error {
		n := 0
		err := tx.Bucket(bucketURLs).ForEach(func(k, _ []byte) error {
			if !isQueueKey(k) {
				n++
			}
			return nil
		})
		if err != nil {
			return err
		}
		f.mu.Lock()
		n += f.inbox.n
		f.mu.Unlock()
		if n != len(m.urls) {
			return fmt.Errorf("%d records and staged URLs, model %d", n, len(m.urls))
		}
		for _, u := range m.urls {
			f.mu.Lock()
			h := f.hosts[u.origin]
			f.mu.Unlock()
			r, err := recordOf(tx, h, urlKey(nil, h.id, u.key[len(u.origin):], u.kind))
			if err != nil {
				return fmt.Errorf("%s: %v", u.id, err)
			}
			st := stateOf(tx.Bucket(bucketURLs), h, &r)
			queued := u.state != stateDone // a done record keeps its last place
			if st != u.state || r.lastmod != u.lastmod || r.prio != u.prio ||
				(queued && (r.delayed != u.delayed || (u.delayed && r.due != u.due) || int(r.attempts) != u.attempts)) {
				return fmt.Errorf("%s: record %+v, model %+v", u.id, r, *u)
			}
		}
		return nil
	})
}

func deleteLease(ls []*Lease, l *Lease) []*Lease {
	for i := range ls {
		if ls[i] == l {
			return append(ls[:i], ls[i+1:]...)
		}
	}
	return ls
}

// drainAll gives back every lease, unparks every host and does every URL
// once, far in the future: each URL not done must be handed out exactly
// once more.
func drainAll(t *testing.T, f *Frontier, m *model, now int64) {
	for _, l := range m.leases {
		if err := f.Release(l, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	for origin := range m.hosts {
		if err := f.Unpark(origin); err != nil {
			t.Fatal(err)
		}
		f.SetReady(origin, time.Time{})
	}
	end := time.Unix(0, max(now, timeNanos(t0))).Add(24 * time.Hour * 365)
	want := map[string]bool{}
	for id, u := range m.urls {
		if u.state != stateDone {
			want[id] = true
		}
	}
	for {
		l, idle, err := f.Next(end)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			if !idle.Drained {
				t.Fatalf("not drained at the end: %+v, %+v", idle, f.Stats())
			}
			break
		}
		id := l.Kind.String() + " " + l.Key
		if !want[id] {
			t.Fatalf("drain: %s handed out but not due (done, or twice)", id)
		}
		delete(want, id)
		f.SetReady(l.Origin, time.Time{})
		if _, err := f.Done(l, Outcome{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(want) > 0 {
		t.Fatalf("drain: %d URLs never handed out: %v", len(want), want)
	}
	if err := check(f); err != nil {
		t.Fatal(err)
	}
	if s := f.Stats(); s.Queued != 0 || s.Leased != 0 || s.Scheduled != 0 || s.Done != int64(len(m.urls)) {
		t.Fatalf("final stats %+v, %d URLs", s, len(m.urls))
	}
}
