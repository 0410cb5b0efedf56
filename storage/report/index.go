package report

import "hash/maphash"

// index maps the URLs of a crawl to their ids: an open-addressing table
// of slots holding a URL's 64-bit hash and its id. At twenty million link
// lookups in a table of a million URLs, a lookup is mostly waiting for
// memory: a Go map touches a control word, a slot and the key, this table
// one slot. A lookup (find) trusts the 64-bit hash, seeded afresh by each
// run, and does not compare the URL: two URLs of a crawl sharing one is
// as likely as 1 in 10^7 for a million of them; when it happens, add sees
// it (interning compares URLs) and the slots of that hash compare URLs
// from then on.
type index struct {
	seed  maphash.Seed
	slots []slot
	n     int
}

type slot struct {
	h     uint64
	id    uint32 // id+1; 0 when the slot is free
	clash bool   // another URL has the same hash: compare the URL
}

func newIndex() index { return index{seed: maphash.MakeSeed(), slots: make([]slot, 1<<12)} }

// find returns the id of s, one of urls.
func (x *index) find(urls []string, s string) (uint32, bool) {
	return x.findHash(urls, s, maphash.String(x.seed, s), false)
}

// findExact is find comparing the URL of every slot of s's hash: for
// interning, so that a URL whose hash another has is seen by add.
func (x *index) findExact(urls []string, s string) (uint32, bool) {
	return x.findHash(urls, s, maphash.String(x.seed, s), true)
}

func (x *index) findHash(urls []string, s string, h uint64, exact bool) (uint32, bool) {
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := &x.slots[i]
		if e.id == 0 {
			return 0, false
		}
		if e.h == h && (!exact && !e.clash || urls[e.id-1] == s) {
			return e.id - 1, true
		}
	}
}

// add files id, whose URL is urls[id] and is not in x yet.
func (x *index) add(urls []string, id uint32) {
	x.addHash(maphash.String(x.seed, urls[id]), id)
}

func (x *index) addHash(h uint64, id uint32) {
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	clash := false
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; x.slots[i].id != 0; i = (i + 1) & mask {
		if x.slots[i].h == h {
			x.slots[i].clash, clash = true, true
		}
	}
	x.put(slot{h: h, id: id + 1, clash: clash})
	x.n++
}

func (x *index) put(e slot) {
	mask := uint64(len(x.slots) - 1)
	i := e.h & mask
	for x.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = e
}

func (x *index) grow() {
	old := x.slots
	x.slots = make([]slot, 2*len(old))
	for _, e := range old {
		if e.id != 0 {
			x.put(e)
		}
	}
}
