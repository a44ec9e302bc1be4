// Package lru is a bounded least-recently-used cache whose fills can be
// fenced against invalidations: a value read from its source before an
// invalidation is never stored after it.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps strings to values, holding at most its bound; the least
// recently used entry goes first. Safe for concurrent use.
type Cache[V any] struct {
	mu  sync.Mutex
	max int
	ll  *list.List
	m   map[string]*list.Element
	gen uint64 // bumped by every Drop and Clear
}

type entry[V any] struct {
	key string
	val V
}

// New returns a cache of at most bound entries (at least 1).
func New[V any](bound int) *Cache[V] {
	return &Cache[V]{max: max(bound, 1), ll: list.New(), m: map[string]*list.Element{}}
}

// Get returns key's value and marks it used.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*entry[V]).val, true
	}
	var zero V
	return zero, false
}

// Gen is the invalidation count; take it before reading a value from the
// source, and hand it to Put.
func (c *Cache[V]) Gen() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Put stores val under key unless an invalidation happened since gen was
// taken (the value may then be stale); it reports whether it stored.
func (c *Cache[V]) Put(key string, val V, gen uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return false
	}
	if e, ok := c.m[key]; ok {
		e.Value.(*entry[V]).val = val
		c.ll.MoveToFront(e)
		return true
	}
	c.m[key] = c.ll.PushFront(&entry[V]{key, val})
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*entry[V]).key)
	}
	return true
}

// Drop forgets key and fences fills begun before it.
func (c *Cache[V]) Drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if e, ok := c.m[key]; ok {
		c.ll.Remove(e)
		delete(c.m, key)
	}
}

// Clear forgets everything and fences fills begun before it.
func (c *Cache[V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.ll.Init()
	clear(c.m)
}

// Len is the number of entries held.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
