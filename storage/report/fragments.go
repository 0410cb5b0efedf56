package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"hash/maphash"
	"io"
	"net/url"
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
	if p := &w.c.pages[to]; !p.htmlOK() || !p.has(fFacts) {
		return
	}
	k := fragKey{to, fragHash(frag)}
	if old, ok := w.frags[k]; !ok || w.l.to < old {
		w.frags[k] = strings.Clone(w.l.to)
	}
}

// checkFragments reads the inventory again for the anchors of the pages
// that links ask a fragment of, and makes broken-fragment of each
// fragment that names none of them. A page's anchors are the last record
// that has them; a page with as many as the crawl keeps (1,000) may have
// more, and is not judged.
func (c *crawl) checkFragments(r io.Reader, frags map[fragKey]string, j *judge) error {
	if len(frags) == 0 {
		return nil
	}
	wanted := newBitset(len(c.urls))
	for k := range frags {
		wanted.set(k.page)
	}
	type anchored struct {
		URL     string   `json:"url"`
		Anchors []string `json:"anchors"`
	}
	have := map[uint32][]uint64{} // a wanted page's anchors, hashed
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"anchors":`)) {
			continue
		}
		var rec anchored
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		id, ok := c.id(rec.URL)
		if !ok || !wanted.has(id) {
			continue
		}
		hs := make([]uint64, 0, len(rec.Anchors))
		for _, a := range rec.Anchors {
			hs = append(hs, maphash.String(fragSeed, a))
		}
		if len(rec.Anchors) >= 1000 {
			hs = nil // as many as the crawl keeps: not judged
		}
		have[id] = hs
	}
	if err := sc.Err(); err != nil && err != bufio.ErrTooLong {
		return err
	}
	for k, link := range frags {
		hs, ok := have[k.page]
		if ok && hs == nil {
			continue
		}
		found := false
		for _, h := range hs {
			found = found || h == k.frag
		}
		if !found {
			j.add("broken-fragment", link, "no id or <a name> of that name on the page")
		}
	}
	return nil
}
