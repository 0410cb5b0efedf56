package report

import (
	"cmp"
	"slices"
	"strconv"
)

// compare lists what changed from the crawl old to the crawl now, for
// the URLs of their own hosts that were in scope (a record of a URL
// refused by scope, or asked by check_external, is no URL of the crawl):
// URLs new and gone, and the changes of status (a 304 standing for the
// answer it confirms), title, canonical and noindex of the URLs in both.
// A URL is matched by its canonical key too (http://h is http://h/).
func compare(old, now *crawl) *Comparison {
	cmpr := &Comparison{New: []string{}, Gone: []string{}, Changes: []Change{}}
	for id, u := range now.urls {
		p := &now.pages[id]
		if !p.compared() {
			continue
		}
		oid, ok := old.lookup(u)
		if !ok || !old.pages[oid].compared() {
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
		if !old.pages[id].compared() {
			continue
		}
		if nid, ok := now.lookup(u); !ok || !now.pages[nid].compared() {
			cmpr.Gone = append(cmpr.Gone, u)
		}
	}
	slices.Sort(cmpr.New)
	slices.Sort(cmpr.Gone)
	slices.SortStableFunc(cmpr.Changes, func(a, b Change) int { return cmp.Compare(a.URL, b.URL) })
	return cmpr
}

// compared reports whether p is a URL of the crawl that compare looks
// at: of its own hosts, and not refused by scope.
func (p *page) compared() bool { return p.own() && !p.has(fOutOfScope) }
