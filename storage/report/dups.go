package report

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// nearWindow is how many pages after it, in each table's order, a page
// is compared with: pages of one bucket that share the table's bits are
// sorted by their whole SimHash, so the nearest are close; a template
// that makes thousands of pages alike costs no more than this each.
const nearWindow = 8

// judgeDuplicates makes duplicate-content (an identical content_hash)
// and near-duplicate (SimHashes at most maxDist bits apart, the texts not
// identical) over the 200 HTML pages with facts and some text. Pages are
// numbers here: ids sorted by hash, never a map of strings.
func (c *crawl) judgeDuplicates(j *judge) {
	var ids []uint32
	for _, id := range c.order() {
		if p := &c.pages[id]; p.htmlOK() && p.has(fFacts) && p.words > 0 {
			ids = append(ids, id)
		}
	}
	if j.on("duplicate-content") {
		byHash := slices.Clone(ids) // in URL order, kept among equal hashes
		slices.SortStableFunc(byHash, func(a, b uint32) int { return cmp.Compare(c.pages[a].content, c.pages[b].content) })
		for i := 0; i < len(byHash); {
			k := i + 1
			for k < len(byHash) && c.pages[byHash[k]].content == c.pages[byHash[i]].content {
				k++
			}
			if k-i > 1 {
				more := ""
				if n := k - i - 2; n > 0 {
					more = fmt.Sprintf(" and %d more", n)
				}
				j.add("duplicate-content", c.urls[byHash[i]], "same text as "+c.urls[byHash[i+1]]+more)
				rest := "same text as " + c.urls[byHash[i]] + more // shared by the others
				for _, id := range byHash[i+1 : k] {
					j.add("duplicate-content", c.urls[id], rest)
				}
			}
			i = k
		}
	}
	if j.on("near-duplicate") {
		c.judgeNear(ids, j)
	}
}

// judgeNear finds, for each page of ids (in URL order), its nearest page
// whose SimHash is near enough and whose text is not the same, by the block method of Manku, Jain and Das Sarma: the 64 bits are
// cut into b blocks, and two hashes at most maxDist apart agree on at
// least b-maxDist of them, so a table per pair of blocks, sorted by
// those blocks, puts every such pair in one bucket of some table.
func (c *crawl) judgeNear(ids []uint32, j *judge) {
	// The share of bits two SimHashes differ in estimates the angle
	// between the texts' word counts over π (Charikar): a similarity
	// (cosine) of at least t is at most 64·acos(t)/π bits apart.
	maxDist := int(math.Floor(64*math.Acos(j.opts.NearDuplicate)/math.Pi + 1e-9))
	blocks := min(max(8, maxDist+2), 16) // past 14 bits apart, some pairs are missed
	const none = math.MaxUint32
	best := make([]uint32, len(ids)) // index of the nearest, or none
	dist := make([]uint8, len(ids))
	sims, contents := make([]uint64, len(ids)), make([]uint64, len(ids))
	for i, id := range ids {
		best[i], sims[i], contents[i] = none, c.pages[id].sim, c.pages[id].content
	}
	offer := func(a, b uint32, d int) {
		// The nearest wins, then the first by URL (ids are in URL order).
		if best[a] == none || d < int(dist[a]) || d == int(dist[a]) && b < best[a] {
			best[a], dist[a] = b, uint8(d)
		}
	}
	bounds := func(blk int) (lo, width int) { return blk * 64 / blocks, (blk+1)*64/blocks - blk*64/blocks }
	// Each table sorts one uint64 per page: the two blocks' bits on top
	// (at most 16), then the top 16 bits of the rest, then the page's
	// index, so that a plain sort of numbers groups and orders them.
	es := make([]uint64, len(ids))
	for x := 0; x < blocks; x++ {
		for y := x + 1; y < blocks; y++ {
			lx, wx := bounds(x)
			ly, wy := bounds(y)
			kmask := (uint64(1)<<wx-1)<<lx | (uint64(1)<<wy-1)<<ly
			for i, sim := range sims {
				key := (sim>>lx)&(1<<wx-1) | (sim>>ly)&(1<<wy-1)<<wx
				rest := sim &^ kmask
				es[i] = key<<48 | (rest>>48)<<32 | uint64(i)
			}
			slices.Sort(es)
			for i := range es {
				a := uint32(es[i])
				for k := i + 1; k < len(es) && k <= i+nearWindow && es[k]>>48 == es[i]>>48; k++ {
					b := uint32(es[k])
					d := bits.OnesCount64(sims[a] ^ sims[b])
					if d > maxDist || contents[a] == contents[b] {
						continue
					}
					offer(a, b, d)
					offer(b, a, d)
				}
			}
		}
	}
	for i, id := range ids {
		if b := best[i]; b != none {
			sim := math.Cos(math.Pi * float64(dist[i]) / 64)
			j.add("near-duplicate", c.urls[id], fmt.Sprintf("%.0f %% like %s", 100*sim, c.urls[ids[b]]))
		}
	}
}
