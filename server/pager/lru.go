package pager

import (
	"container/list"
	"sync"
)

// DefaultLRUSize is how many snapshots one connection keeps.
const DefaultLRUSize = 4

// LRU keeps a connection's most recently used snapshots by token. Adding
// past its size releases the least recently used one at once.
type LRU struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are *lruItem
	items map[string]*list.Element
}

type lruItem struct {
	token string
	snap  *Snapshot
}

// NewLRU returns an LRU holding at most size snapshots (DefaultLRUSize when
// size < 1).
func NewLRU(size int) *LRU {
	if size < 1 {
		size = DefaultLRUSize
	}
	return &LRU{size: size, order: list.New(), items: map[string]*list.Element{}}
}

// Add stores snap under token, taking over the caller's reference. It
// returns the tokens it evicted; their snapshots are already released.
func (l *LRU) Add(token string, snap *Snapshot) (evicted []string) {
	l.mu.Lock()
	var drop []*Snapshot
	if el, ok := l.items[token]; ok {
		drop = append(drop, el.Value.(*lruItem).snap)
		l.order.Remove(el)
	}
	l.items[token] = l.order.PushFront(&lruItem{token, snap})
	for l.order.Len() > l.size {
		el := l.order.Back()
		it := el.Value.(*lruItem)
		l.order.Remove(el)
		delete(l.items, it.token)
		drop = append(drop, it.snap)
		evicted = append(evicted, it.token)
	}
	l.mu.Unlock()
	for _, s := range drop {
		s.Release()
	}
	return evicted
}

// Get returns the snapshot for token with an extra reference the caller must
// Release, and marks it most recently used.
func (l *LRU) Get(token string) (*Snapshot, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.items[token]
	if !ok {
		return nil, false
	}
	l.order.MoveToFront(el)
	s := el.Value.(*lruItem).snap
	s.Retain()
	return s, true
}

// Remove releases the snapshot stored under token, if any.
func (l *LRU) Remove(token string) bool {
	l.mu.Lock()
	el, ok := l.items[token]
	if ok {
		l.order.Remove(el)
		delete(l.items, token)
	}
	l.mu.Unlock()
	if ok {
		el.Value.(*lruItem).snap.Release()
	}
	return ok
}

// Len is the number of snapshots held.
func (l *LRU) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}

// Close releases every snapshot.
func (l *LRU) Close() {
	l.mu.Lock()
	var drop []*Snapshot
	for _, el := range l.items {
		drop = append(drop, el.Value.(*lruItem).snap)
	}
	l.items = map[string]*list.Element{}
	l.order.Init()
	l.mu.Unlock()
	for _, s := range drop {
		s.Release()
	}
}
