package lru

import (
	"strings"
	"testing"
)

func TestCacheBoundedLeastRecentFirst(t *testing.T) {
	c := New(100, func(s string) int { return len(s) })
	c.Put("a", strings.Repeat("x", 20)) // 21
	c.Put("b", strings.Repeat("x", 20)) // 42
	c.Put("c", strings.Repeat("x", 20)) // 63
	if _, ok := c.Get("a"); !ok {       // a is now the most recent
		t.Fatal("a not kept")
	}
	c.Put("d", strings.Repeat("x", 20)) // 84
	c.Put("e", strings.Repeat("x", 20)) // 105: b, the least recent, goes
	if _, ok := c.Get("b"); ok {
		t.Error("b kept past the size")
	}
	for _, k := range []string{"a", "c", "d", "e"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s dropped", k)
		}
	}
	if u := c.Used(); u != 84 {
		t.Errorf("used %d, want 84", u)
	}
	c.Put("a", "y") // replaced: its old cost is given back
	if u := c.Used(); u != 65 {
		t.Errorf("used after replacing a: %d, want 65", u)
	}
	c.Put("big", strings.Repeat("x", 30)) // over a quarter: not kept
	if _, ok := c.Get("big"); ok {
		t.Error("a value over a quarter of the size was kept")
	}
	c.Put("c", strings.Repeat("x", 30)) // too big to keep: the old c goes too
	if v, ok := c.Get("c"); ok {
		t.Errorf("c is still the old %q after a Put too big to keep", v)
	}
	if u := c.Used(); u != 44 {
		t.Errorf("used after c's too big Put: %d, want 44", u)
	}
}
