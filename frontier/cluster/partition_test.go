package cluster

import (
	"fmt"
	"testing"
)

// TestPartitionStable pins Partition's values: they place every host's
// state, so a change would strand running crawls.
func TestPartitionStable(t *testing.T) {
	for _, tt := range []struct {
		origin string
		p      int
		want   int
	}{
		{"https://example.com", 256, 32},
		{"http://127.0.0.2:8001", 256, 29},
		{"http://127.0.0.3:8001", 256, 15},
		{"https://example.com", 1, 0},
	} {
		if got := Partition(tt.origin, tt.p); got != tt.want {
			t.Errorf("Partition(%q, %d) = %d, want %d", tt.origin, tt.p, got, tt.want)
		}
	}
}

func TestPartitionSpread(t *testing.T) {
	const p, hosts = 64, 64 * 200
	counts := make([]int, p)
	for i := range hosts {
		counts[Partition(fmt.Sprintf("https://host%d.example", i), p)]++
	}
	for i, c := range counts {
		if c < hosts/p/2 || c > hosts/p*2 {
			t.Errorf("partition %d has %d hosts of %d, want about %d", i, c, hosts, hosts/p)
		}
	}
}

// TestRendezvousMovesLittle: a worker joining takes about 1/N of the
// partitions, all from the others and none moved between them; one leaving
// moves only its own.
func TestRendezvousMovesLittle(t *testing.T) {
	const p = 1024
	three := []string{"a", "b", "c"}
	four := []string{"a", "b", "c", "d"}
	moved := 0
	for i := range p {
		before, after := owner(three, i), owner(four, i)
		if before != after {
			moved++
			if after != "d" {
				t.Fatalf("partition %d moved from %s to %s when d joined", i, before, after)
			}
		}
	}
	if moved < p/4/2 || moved > p/4*2 {
		t.Errorf("d's join moved %d of %d partitions, want about %d", moved, p, p/4)
	}
	for i := range p {
		if o := owner(three, i); o != "c" && owner([]string{"a", "b"}, i) != o {
			t.Fatalf("partition %d of %s moved when c left", i, o)
		}
	}
	if owner(nil, 0) != "" {
		t.Fatal("owner of no workers")
	}
}
