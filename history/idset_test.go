package history

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestIDSetAgreesWithMap drives the set and a map with the same random
// adds and lookups, through several growths, with IDs that share prefixes.
func TestIDSetAgreesWithMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	// A set sized for 1<<20 IDs has few hash bits per slot, so some
	// lookups meet slots whose bits match another ID's.
	for _, start := range []int{0, 1, 100, 1 << 20} {
		s, m := newIDSet(start), map[string]int{}
		for range 20_000 {
			id := "e-" + strconv.Itoa(rng.IntN(8000))
			if rng.IntN(3) == 0 {
				want, had := m[id]
				if !had {
					want = -1
				}
				if s.has(id) != had || s.index(id) != want {
					t.Fatalf("has(%q) = %v, index %d; map says %v, %d", id, s.has(id), s.index(id), had, want)
				}
				continue
			}
			_, had := m[id]
			if added := s.add(id); added == had {
				t.Fatalf("add(%q) = %v, but the map had it: %v", id, added, had)
			}
			if !had {
				m[id] = s.len() - 1
			}
			if s.len() != len(m) {
				t.Fatalf("len %d, map %d", s.len(), len(m))
			}
		}
		for id, i := range m {
			if s.index(id) != i {
				t.Fatalf("%q: index %d, want %d", id, s.index(id), i)
			}
		}
	}
}

// TestIDSetFewHashBits fills a set whose slots keep few bits of the hash
// (11, sized for a million IDs) with 300,000 IDs, so many probes meet a
// slot whose bits match another ID's: only the string comparison tells
// them apart.
func TestIDSetFewHashBits(t *testing.T) {
	t.Parallel()
	s := newIDSet(1 << 20)
	const n = 300_000
	for i := range n {
		if !s.add("id-" + strconv.Itoa(i)) {
			t.Fatalf("id-%d taken as already there", i)
		}
	}
	for i := range n {
		if got := s.index("id-" + strconv.Itoa(i)); got != i {
			t.Fatalf("id-%d: index %d", i, got)
		}
		if s.has("other-" + strconv.Itoa(i)) {
			t.Fatalf("other-%d found", i)
		}
	}
}
