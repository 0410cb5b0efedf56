package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"hash/maphash"
	"io"
	"net/url"
	"slices"
	"strings"
)

// fragKey is a link's target page and a hash of its fragment (decoded).
type fragKey struct {
	page uint32
	frag uint64
}

// fragSeed hashes fragments; one seed per process is all a report needs.
var fragSeed = maphash.MakeSeed()

// fragHash is the hash of a fragment as an id: percent-decoded when it
// decodes.
func fragHash(frag string) uint64 {
	if d, err := url.PathUnescape(frag); err == nil {
		frag = d
	}
	return maphash.String(fragSeed, frag)
}

// wantFragment notes the line just parsed, to the page to, when it asks
// for a fragment of a 200 HTML page whose targets the crawl recorded:
// the report checks it against the page's anchors once the link graph
// is read (checkFragments). An empty fragment and #top name the page's top.
func (w *linkWorker) wantFragment(to uint32) {
	i := strings.IndexByte(w.l.to, '#')
	if i < 0 || !isLinkKind(w.l.kind) {
		return
	}
	frag := w.l.to[i+1:]
	if frag == "" || strings.EqualFold(frag, "top") {
		return
	}
	if !w.okFacts.has(to) {
		return
	}
	h := fragHash(frag)
	w.addFragPair(fragKey{to, h})
	if old, ok := w.fragTexts[h]; !ok || frag < old {
		w.fragTexts[h] = strings.Clone(frag)
	}
}

// compactFrags is how many pairs a worker gathers before it first drops
// the ones it has twice.
const compactFrags = 1 << 12

// addFragPair keeps k. A link graph names the same (page, fragment) on
// many lines (a template's link from every page): when the pairs fill
// their slice they are sorted and each kept once, and the slice grows
// only if that leaves it over half full, so it holds at most twice the
// distinct pairs, not a pair per line, and each pair is sorted a bounded
// number of times.
func (w *linkWorker) addFragPair(k fragKey) {
	if n := len(w.fragPairs); n >= compactFrags && n == cap(w.fragPairs) {
		w.fragPairs = sortFragPairs(w.fragPairs)
		if len(w.fragPairs) > n/2 {
			w.fragPairs = slices.Grow(w.fragPairs, n)
		}
	}
	w.fragPairs = append(w.fragPairs, k)
}

// sortFragPairs sorts ks by page then fragment and keeps each once.
func sortFragPairs(ks []fragKey) []fragKey {
	slices.SortFunc(ks, func(a, b fragKey) int {
		return cmp.Or(cmp.Compare(a.page, b.page), cmp.Compare(a.frag, b.frag))
	})
	return slices.Compact(ks)
}

// checkFragments reads the inventory again for the anchors of the pages
// that links ask a fragment of, and makes broken-fragment of each
// fragment that names none of them. A page's anchors are the last record
// that has them; a page with as many as the crawl keeps (1,000) may have
// more, and is not judged.
func (c *crawl) checkFragments(r io.Reader, g *graph, j *judge) error {
	frags := g.fragPairs
	if len(frags) == 0 {
		return nil
	}
	wanted := newBitset(len(c.urls))
	for _, k := range frags {
		wanted.set(k.page)
	}
	type anchored struct {
		URL     string   `json:"url"`
		Anchors []string `json:"anchors"`
	}
	// frags is sorted by page: a page's pairs are a run of it, whose
	// verdicts (found) a later record of the page sets again.
	found := newBitset(len(frags))
	capped := newBitset(len(c.urls))
	var hs []uint64
	err := eachLine(r, func(line []byte) {
		if !bytes.Contains(line, []byte(`"anchors":`)) {
			return
		}
		var rec anchored
		if json.Unmarshal(line, &rec) != nil {
			return
		}
		id, ok := c.id(rec.URL)
		if !ok || !wanted.has(id) {
			return
		}
		hs = hs[:0]
		for _, a := range rec.Anchors {
			hs = append(hs, maphash.String(fragSeed, a))
		}
		slices.Sort(hs)
		lo, _ := slices.BinarySearchFunc(frags, id, func(k fragKey, id uint32) int { return cmp.Compare(k.page, id) })
		for k := lo; k < len(frags) && frags[k].page == id; k++ {
			if _, in := slices.BinarySearch(hs, frags[k].frag); in {
				found.set(uint32(k))
			} else {
				found.clear(uint32(k))
			}
		}
		if len(rec.Anchors) >= 1000 { // as many as the crawl keeps: not judged
			capped.set(id)
		} else {
			capped.clear(id)
		}
	})
	if err != nil {
		return err
	}
	for k, f := range frags {
		if !found.has(uint32(k)) && !capped.has(f.page) {
			j.add("broken-fragment", c.urls[f.page]+"#"+g.fragTexts[f.frag], "no id or <a name> of that name on the page")
		}
	}
	return nil
}
