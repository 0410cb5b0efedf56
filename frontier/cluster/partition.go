package cluster

import (
	"hash/fnv"
	"strconv"
)

// Partition returns the partition of the host origin (as frontier.URL's
// Origin writes it) among p: FNV-1a of the origin, mixed, modulo p. It is
// stable across processes, machines and versions: it decides where a host's
// state lives, so changing it would orphan every crawl under way.
func Partition(origin string, p int) int {
	if p <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(origin))
	return int(mix(h.Sum64()) % uint64(p))
}

// mix is splitmix64's finaliser: FNV-1a's low bits are weak for short keys
// that differ in one byte, and a modulus reads only those.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// score is the rendezvous (highest random weight) score of worker for
// partition p.
func score(worker string, p int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(worker))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(p), 10))
	return mix(h.Sum64())
}

// owner returns which of workers should own partition p: the one of the
// highest score, ties to the smaller id. When a worker joins it takes from
// each other about 1/N of theirs; when one leaves only its partitions move.
// It returns "" when workers is empty.
func owner(workers []string, p int) string {
	best, bestScore := "", uint64(0)
	for _, w := range workers {
		s := score(w, p)
		if best == "" || s > bestScore || s == bestScore && w < best {
			best, bestScore = w, s
		}
	}
	return best
}
