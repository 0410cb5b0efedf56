package frontier

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// The crash test runs this test binary again as a child (TestCrashChild,
// switched on by crashEnv) that works on a real database file with several
// workers and reports on stdout each operation once it returned. The parent
// kills it with SIGKILL at a random moment, reopens the file, and checks
// that nothing acknowledged was lost, then starts the next child.
const (
	crashEnv     = "FRONTIER_CRASH_DB"
	crashRound   = "FRONTIER_CRASH_ROUND"
	crashWorkers = 4
	crashRounds  = 6
)

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	added := map[string]bool{}  // acknowledged Add
	done := map[string]bool{}   // acknowledged Done
	leased := map[string]int{}  // round of the last lease not given back
	handed := map[string]bool{} // ever handed out
	totalLines := 0
	for round := range crashRounds {
		// The first kills come early, during open and recovery.
		delay := time.Duration(rng.IntN(600)) * time.Millisecond
		if round == 0 {
			delay += 300 * time.Millisecond
		}
		lines, stderr := runChild(t, path, round, delay)
		totalLines += len(lines)
		// The URLs handed out again, by the round at whose kill they were
		// out: a URL out at a kill may come back only in a later round.
		refetched := map[int]int{}
		for _, line := range lines {
			verb, key, ok := strings.Cut(line, " ")
			if !ok {
				t.Fatalf("round %d: child said %q; stderr:\n%s", round, line, stderr)
			}
			switch verb {
			case "add":
				added[key] = true
			case "lease":
				if done[key] {
					t.Fatalf("round %d: %s handed out after it was done", round, key)
				}
				if r, out := leased[key]; out && r < round {
					refetched[r]++ // out when a child was killed, handed out again
				}
				leased[key] = round
				handed[key] = true
			case "done":
				done[key] = true
				delete(leased, key)
			case "retry", "release":
				delete(leased, key)
			default:
				t.Fatalf("round %d: child said %q", round, line)
			}
		}
		for r, n := range refetched {
			if n > crashWorkers {
				t.Errorf("round %d: %d URLs out at the kill of round %d handed out again, more than the %d workers held", round, n, r, crashWorkers)
			}
		}
		// Reopen and check.
		f, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("round %d: reopen: %v; child stderr:\n%s", round, err, stderr)
		}
		if err := check(f); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		states := recordStates(t, f)
		for key := range added {
			if _, ok := states[key]; !ok {
				t.Fatalf("round %d: acknowledged %s lost", round, key)
			}
		}
		for key := range done {
			if states[key] != stateDone {
				t.Fatalf("round %d: acknowledged Done of %s lost (state %d)", round, key, states[key])
			}
		}
		if s := f.Stats(); s.Leased != 0 || s.Queued+s.Done != int64(len(states)) {
			t.Fatalf("round %d: stats %+v for %d URLs", round, s, len(states))
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if totalLines == 0 || len(done) == 0 {
		t.Fatalf("the children did nothing (%d lines, %d done)", totalLines, len(done))
	}
	// Finally drain: every URL not done is handed out once, no done one is.
	// (Without fsync: this is no longer about crashes.)
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{NoSync: true, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	states := recordStates(t, f)
	far := time.Now().Add(time.Hour)
	for {
		l, idle, err := f.Next(far)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			if !idle.Drained {
				t.Fatalf("drain stuck: %+v %+v", idle, f.Stats())
			}
			break
		}
		if st, ok := states[l.Key]; !ok || st == stateDone {
			t.Fatalf("drain: %s handed out, state %d (known %v)", l.Key, st, ok)
		}
		states[l.Key] = stateDone
		f.SetReady(l.Origin, far)
		if _, err := f.Done(l, Outcome{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for key, st := range states {
		if st != stateDone {
			t.Errorf("drain: %s never handed out", key)
		}
	}
	t.Logf("%d rounds: %d URLs, %d acknowledged done, %d handed out", crashRounds, len(states), len(done), len(handed))
}

// runChild runs one child against path and kills it after delay. It
// returns the lines the child wrote before it died, and its stderr.
func runChild(t *testing.T, path string, round int, delay time.Duration) ([]string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), crashEnv+"="+path, crashRound+"="+strconv.Itoa(round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	}()
	time.Sleep(delay)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-read
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("round %d: child ended by itself (%v) before the kill; stderr:\n%s", round, err, stderr.String())
	}
	return lines, stderr.String()
}

// recordStates returns the state of every URL in the database.
func recordStates(t *testing.T, f *Frontier) map[string]state {
	t.Helper()
	out := map[string]state{}
	for _, h := range f.Hosts() {
		f.mu.Lock()
		id := f.hosts[h.Origin].id
		f.mu.Unlock()
		tx, err := f.db.Begin(false)
		if err != nil {
			t.Fatal(err)
		}
		c := tx.Bucket(bucketURLs).Cursor()
		prefix := appendUint32(nil, id)
		for k, v := c.Seek(prefix); len(k) >= 4 && string(k[:4]) == string(prefix); k, v = c.Next() {
			if isQueueKey(k) {
				continue
			}
			r, err := decodeRecord(v, h.Origin)
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			out[h.Origin+string(k[4:])] = stateOf(tx.Bucket(bucketURLs), f.hosts[h.Origin], &r)
			f.mu.Unlock()
		}
		f.mu.Lock()
		for _, s := range f.hosts[h.Origin].staged {
			out[h.Origin+s.pq()] = stateQueued
		}
		f.mu.Unlock()
		_ = tx.Rollback()
	}
	return out
}

// TestCrashChild is the child of TestCrash; it does nothing unless started
// by it. It works until it is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("only run by TestCrash")
	}
	round, _ := strconv.Atoi(os.Getenv(crashRound))
	var outMu sync.Mutex
	say := func(verb, key string) {
		outMu.Lock()
		defer outMu.Unlock()
		_, _ = os.Stdout.WriteString(verb + " " + key + "\n")
	}
	f, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var counter atomic.Int64
	newItems := func(n int) []Item {
		items := make([]Item, n)
		for i := range items {
			c := counter.Add(1)
			items[i] = item(t, fmt.Sprintf("http://h%d.test/r%d/u%d", c%7, round, c))
		}
		return items
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	deadline := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the adder: seeds and sitemaps
		defer wg.Done()
		for time.Now().Before(deadline) {
			items := newItems(10)
			if _, err := f.Add(items); err != nil {
				fail(err)
			}
			for _, it := range items {
				say("add", it.Key)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	for w := range crashWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
			for time.Now().Before(deadline) {
				l, _, err := f.Next(time.Now())
				if err != nil {
					fail(err)
				}
				if l == nil {
					select {
					case <-f.Wake():
					case <-time.After(5 * time.Millisecond):
					}
					continue
				}
				say("lease", l.Key)
				f.SetReady(l.Origin, time.Now())
				switch rng.IntN(10) {
				case 0:
					if err := f.Retry(l, time.Now().Add(20*time.Millisecond)); err != nil {
						fail(err)
					}
					say("retry", l.Key)
				case 1:
					if err := f.Release(l, time.Time{}); err != nil {
						fail(err)
					}
					say("release", l.Key)
				default:
					links := newItems(rng.IntN(8))
					if _, err := f.Done(l, Outcome{}, links); err != nil {
						fail(err)
					}
					for _, it := range links {
						say("add", it.Key)
					}
					say("done", l.Key)
				}
			}
		}()
	}
	wg.Wait()
	fail(fmt.Errorf("not killed within 30 s"))
}
