package report

import (
	"fmt"
	"testing"
)

func TestIndex(t *testing.T) {
	c := newCrawl()
	for i := range 10000 {
		c.intern(fmt.Sprintf("https://ex.test/%d", i))
	}
	for i := range 10000 {
		if id, ok := c.id(fmt.Sprintf("https://ex.test/%d", i)); !ok || id != uint32(i) {
			t.Fatalf("find %d = %d, %v", i, id, ok)
		}
	}
	if _, ok := c.id("https://ex.test/x"); ok {
		t.Error("found a URL never added")
	}
}

// Two URLs of one hash (forced here) are told apart by their text once
// the second is added.
func TestIndexClash(t *testing.T) {
	x := index{slots: make([]slot, 8)}
	urls := []string{"a", "b"}
	x.addHash(42, 0)
	if id, ok := x.findHash(urls, "b", 42, true); ok {
		t.Fatalf("exact find of b = %d before it was added", id)
	}
	x.addHash(42, 1)
	for i, u := range urls {
		if id, ok := x.findHash(urls, u, 42, false); !ok || id != uint32(i) {
			t.Errorf("find %s = %d, %v", u, id, ok)
		}
	}
	if _, ok := x.findHash(urls, "c", 42, false); ok {
		t.Error("c found")
	}
}
