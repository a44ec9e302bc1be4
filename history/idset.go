package history

import "hash/maphash"

// idSet is the set of entry IDs in a document, which the batch rules check
// every appended ID against. On a long log it is filled with hundreds of
// thousands of IDs in one read, so it is an open-addressing table of plain
// words: each slot holds the high half of an ID's hash and the ID's index
// in keys, and only a slot whose hash half matches is compared as a string.
type idSet struct {
	slots []uint64 // hash>>32<<32 | index+1; 0 is empty
	keys  []string
	seed  maphash.Seed
}

// newIDSet returns a set with room for n IDs before it grows.
func newIDSet(n int) *idSet {
	s := &idSet{seed: maphash.MakeSeed()}
	s.init(n)
	return s
}

func (s *idSet) init(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	s.slots = make([]uint64, size)
	s.keys = make([]string, 0, n)
}

func (s *idSet) len() int { return len(s.keys) }

// find returns the slot holding id, or the empty slot where it would go,
// and id's tag (the high half of its hash).
func (s *idSet) find(id string) (slot int, tag uint64, ok bool) {
	h := maphash.String(s.seed, id)
	tag, mask := h>>32<<32, uint64(len(s.slots)-1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			return int(i), tag, false
		}
		if v>>32<<32 == tag && s.keys[uint32(v)-1] == id {
			return int(i), tag, true
		}
	}
}

func (s *idSet) has(id string) bool {
	_, _, ok := s.find(id)
	return ok
}

// add puts id in the set and reports whether it was new.
func (s *idSet) add(id string) bool {
	i, tag, ok := s.find(id)
	if ok {
		return false
	}
	if 2*(len(s.keys)+1) > len(s.slots) {
		keys := s.keys
		s.init(2 * len(keys))
		for _, k := range keys {
			j, t, _ := s.find(k)
			s.slots[j] = t | uint64(len(s.keys)+1)
			s.keys = append(s.keys, k)
		}
		i, _, _ = s.find(id)
	}
	s.slots[i] = tag | uint64(len(s.keys)+1)
	s.keys = append(s.keys, id)
	return true
}

// index returns the position id was added at (in a document's set, its
// entry's index), or -1.
func (s *idSet) index(id string) int {
	i, _, ok := s.find(id)
	if !ok {
		return -1
	}
	return int(uint32(s.slots[i])) - 1
}
