// Package lru is a cache of values by key, bounded by the sum of their
// costs (bytes, as the caller counts them), the least recently used
// dropped first. The crawl keeps this run's answers in one, for a
// rendering browser's requests and the requisite leases of the same URLs
// (README, "Rendering").
package lru

import (
	"container/list"
	"sync"
)

// Cache keeps values of type V by string key within a budget. It is safe
// for concurrent use. Make one with New.
type Cache[V any] struct {
	cost func(V) int

	mu    sync.Mutex
	size  int
	used  int
	order *list.List // of *entry[V], most recent first
	byKey map[string]*list.Element
}

type entry[V any] struct {
	key  string
	v    V
	cost int
}

// New returns a cache of at most size in costs; cost(v) is what v costs,
// its key's length added.
func New[V any](size int, cost func(V) int) *Cache[V] {
	return &Cache[V]{cost: cost, size: size, order: list.New(), byKey: map[string]*list.Element{}}
}

// Get returns the value under key and marks it used.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[V]).v, true
}

// Put keeps v under key, in place of what was there, dropping the least
// recently used values until the cache is within its size. A value that
// costs more than a quarter of the size is not kept: it would push out
// many others for one; what was under key is dropped all the same, not
// served in its place.
func (c *Cache[V]) Put(key string, v V) {
	n := c.cost(v) + len(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.used -= e.Value.(*entry[V]).cost
		c.order.Remove(e)
		delete(c.byKey, key)
	}
	if n > c.size/4 {
		return
	}
	c.byKey[key] = c.order.PushFront(&entry[V]{key: key, v: v, cost: n})
	c.used += n
	for c.used > c.size {
		last := c.order.Back()
		old := last.Value.(*entry[V])
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.used -= old.cost
	}
}

// Used is what the values kept cost now, keys included.
func (c *Cache[V]) Used() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
