package report

import (
	"cmp"
	"slices"
	"strconv"
)

// compare lists what changed from the crawl old to the crawl now, for
// the URLs of their own hosts: URLs new and gone, and the changes of
// status (a 304 standing for the answer it confirms), title, canonical
// and noindex of the URLs in both.
func compare(old, now *crawl) *Comparison {
	cmpr := &Comparison{New: []string{}, Gone: []string{}, Changes: []Change{}}
	for id, u := range now.urls {
		p := &now.pages[id]
		if !p.own() {
			continue
		}
		oid, ok := old.id(u)
		if !ok || !old.pages[oid].own() {
			cmpr.New = append(cmpr.New, u)
			continue
		}
		q := &old.pages[oid]
		add := func(field, was, is string) {
			if was != is {
				cmpr.Changes = append(cmpr.Changes, Change{URL: u, Field: field, Old: was, New: is})
			}
		}
		add("status", strconv.Itoa(int(q.effStatus)), strconv.Itoa(int(p.effStatus)))
		add("title", q.title, p.title)
		add("canonical", old.canonicalOf(oid), now.canonicalOf(uint32(id)))
		add("noindex", strconv.FormatBool(q.has(fNoindex)), strconv.FormatBool(p.has(fNoindex)))
	}
	for id, u := range old.urls {
		if !old.pages[id].own() {
			continue
		}
		if nid, ok := now.id(u); !ok || !now.pages[nid].own() {
			cmpr.Gone = append(cmpr.Gone, u)
		}
	}
	slices.Sort(cmpr.New)
	slices.Sort(cmpr.Gone)
	slices.SortStableFunc(cmpr.Changes, func(a, b Change) int { return cmp.Compare(a.URL, b.URL) })
	return cmpr
}
