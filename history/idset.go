package history

import "hash/maphash"

// idSet is the set of entry IDs in a document, which the batch rules check
// every appended ID against. On a long log it is filled with hundreds of
// thousands of IDs in one read, each add a probe at a random place, so it
// is an open-addressing table of 32-bit words, small enough to stay in a
// core's cache longer: the low bits of a slot hold the ID's index in keys
// plus one, as many bits as the table has slots, and the high bits the
// same bits of the ID's hash. Only a slot whose hash bits match is
// compared as a string.
type idSet struct {
	slots []uint32 // hash bits | index+1; 0 is empty
	bits  uint     // len(slots) is 1<<bits
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
	b := uint(4)
	for !s.roomy(n, b) {
		b++
	}
	s.slots, s.bits = make([]uint32, 1<<b), b
	s.keys = make([]string, 0, n)
}

// roomy reports whether n IDs leave a table of 1<<b slots at most three
// quarters full: linear probing stays short, and index+1 fits in b bits.
func (s *idSet) roomy(n int, b uint) bool { return 4*n <= 3<<b }

func (s *idSet) len() int { return len(s.keys) }

// find returns the slot holding id, or the empty slot where it would go,
// and id's tag (the high bits of the slot it has or would have).
func (s *idSet) find(id string) (slot int, tag uint32, ok bool) {
	h := maphash.String(s.seed, id)
	low := uint32(1)<<s.bits - 1 // all ones when bits is 32: then no tag
	tag, mask := uint32(h>>32)&^low, uint64(len(s.slots)-1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			return int(i), tag, false
		}
		if v&^low == tag && s.keys[v&low-1] == id {
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
	if !s.roomy(len(s.keys)+1, s.bits) {
		keys := s.keys
		s.init(2 * len(keys))
		for _, k := range keys {
			j, t, _ := s.find(k)
			s.slots[j] = t | uint32(len(s.keys)+1)
			s.keys = append(s.keys, k)
		}
		i, tag, _ = s.find(id)
	}
	s.slots[i] = tag | uint32(len(s.keys)+1)
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
	return int(s.slots[i]&(uint32(1)<<s.bits-1)) - 1
}
