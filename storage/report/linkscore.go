package report

import (
	"math"
	"slices"
)

// PageScore is a 200 HTML page's standing in the crawl's own links.
type PageScore struct {
	URL string `json:"url"`
	// Inlinks counts the distinct pages with an a or area link to it.
	Inlinks int `json:"inlinks"`
	// LinkScore is its internal PageRank, scaled so that the highest
	// page has 100.
	LinkScore float64 `json:"link_score"`
}

// edgeChunk is how many edges one block of an edgeList holds: blocks of
// a fixed size grow the list without append's doubling, which at twenty
// million edges would leave as many again unused.
const edgeChunk = 1 << 20

// edgeList collects the a and area links between pages as (from, to)
// ids, one uint64 each.
type edgeList struct{ blocks [][]uint64 }

func (l *edgeList) add(from, to uint32) {
	if n := len(l.blocks); n == 0 || len(l.blocks[n-1]) == edgeChunk {
		l.blocks = append(l.blocks, make([]uint64, 0, edgeChunk))
	}
	b := &l.blocks[len(l.blocks)-1]
	*b = append(*b, uint64(from)<<32|uint64(to))
}

func (l *edgeList) len() int {
	n := 0
	for _, b := range l.blocks {
		n += len(b)
	}
	return n
}

// pageRankIterations bounds the power iteration; it stops sooner when
// the scores move less than pageRankEpsilon in all.
const (
	pageRankIterations = 100
	pageRankEpsilon    = 1e-9
	damping            = 0.85
)

// linkScores makes Report.Pages: over the 200 HTML pages, the distinct
// pages linking to each (a and area links), and PageRank (damping 0.85,
// a page's links to one page counted once, none to itself) over the
// links between them, as compressed sparse rows of ids.
func (c *crawl) linkScores(lists []*edgeList) []PageScore {
	n := 0
	for _, l := range lists {
		n += l.len()
	}
	edges := make([]uint64, 0, n)
	for _, l := range lists {
		for i, b := range l.blocks {
			edges = append(edges, b...)
			l.blocks[i] = nil // each block freed as soon as it is copied
		}
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)

	// The pages, numbered 0..m-1 in URL order.
	idx := make([]int32, len(c.urls))
	var pages []uint32
	for _, id := range c.order() {
		idx[id] = -1
		if c.pages[id].htmlOK() {
			idx[id] = int32(len(pages))
			pages = append(pages, id)
		}
	}
	m := len(pages)
	inlinks := make([]int32, m)
	start := make([]uint32, m+1) // CSR: the links of page k are edges[start[k]:start[k+1]]
	kept := 0
	for _, e := range edges { // in from order: the page indexes of the links' targets overwrite them in place
		f, t := idx[uint32(e>>32)], idx[uint32(e)]
		if t < 0 {
			continue
		}
		inlinks[t]++
		if f >= 0 {
			start[f+1]++
			edges[kept] = uint64(t)
			kept++
		}
	}
	idx = nil
	for k := 0; k < m; k++ {
		start[k+1] += start[k]
	}
	pr := pageRank(start, edges[:kept], m)
	top := 0.0
	for _, v := range pr {
		top = max(top, v)
	}
	out := make([]PageScore, m)
	for k, id := range pages {
		score := 0.0
		if top > 0 {
			score = math.Round(10000*pr[k]/top) / 100
		}
		out[k] = PageScore{URL: c.urls[id], Inlinks: int(inlinks[k]), LinkScore: score}
	}
	return out
}

// pageRank is the PageRank of m pages whose links are to[start[k]:start[k+1]]
// (the targets' page indexes, in from order, as the CSR layout has
// them): a page without links gives its rank to every page alike.
func pageRank(start []uint32, to []uint64, m int) []float64 {
	if m == 0 {
		return nil
	}
	pr, next := make([]float64, m), make([]float64, m)
	for k := range pr {
		pr[k] = 1 / float64(m)
	}
	for range pageRankIterations {
		dangling := 0.0
		for k := range next {
			next[k] = 0
		}
		for k := 0; k < m; k++ {
			out := to[start[k]:start[k+1]]
			if len(out) == 0 {
				dangling += pr[k]
				continue
			}
			share := pr[k] / float64(len(out))
			for _, t := range out {
				next[t] += share
			}
		}
		base := (1-damping)/float64(m) + damping*dangling/float64(m)
		moved := 0.0
		for k := range next {
			next[k] = base + damping*next[k]
			moved += math.Abs(next[k] - pr[k])
		}
		pr, next = next, pr
		if moved < pageRankEpsilon {
			break
		}
	}
	return pr
}
