package cluster

import (
	"strings"
	"testing"
	"time"
)

func TestRanges(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{5}, "5"},
		{[]int{3, 0, 1, 2, 7, 9, 10}, "0-3,7,9-10"},
	} {
		if got := ranges(tt.in); got != tt.want {
			t.Errorf("ranges(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStatusWrite(t *testing.T) {
	seen := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	s := Overview{
		Name: "crawl", Partitions: 8, Pages: 42, Entries: 7,
		Workers: []WorkerStatus{
			{Worker: "a", Partitions: []int{0, 1, 2}, Load: Load{Queued: 10, InFlight: 1, Done: 30}, Seen: seen},
			{Worker: "b", Partitions: []int{4, 5, 7}, Load: Load{Queued: 5, Done: 12}, Seen: seen},
		},
		Unheld: []int{3, 6},
	}
	var b strings.Builder
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `crawl crawl: 8 partitions, 2 workers, 42 pages taken, 7 entries in the stream
WORKER  PARTS  QUEUED  IN FLIGHT  DONE  SEEN                  HOLDS
a       3      10      1          30    2026-11-26T03:00:00Z  0-2
b       3      5       0          12    2026-11-26T03:00:00Z  4-5,7
total   6      15                 42
not held: 3,6
`
	if b.String() != want {
		t.Errorf("Write:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestStatusNoCrawl(t *testing.T) {
	s := startServer(t, true)
	_, err := Status(testContext(t), testConfig(s.ClientURL(), "", 4))
	if err == nil || !strings.HasPrefix(err.Error(), `cluster.name: no crawl "t"`) {
		t.Fatalf("Status = %v, want an error naming cluster.name", err)
	}
}
