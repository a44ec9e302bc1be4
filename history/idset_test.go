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
	for _, start := range []int{0, 1, 100} {
		s, m := newIDSet(start), map[string]bool{}
		for range 20_000 {
			id := "e-" + strconv.Itoa(rng.IntN(8000))
			if rng.IntN(3) == 0 {
				if s.has(id) != m[id] {
					t.Fatalf("has(%q) = %v, map says %v", id, s.has(id), m[id])
				}
				continue
			}
			if added := s.add(id); added == m[id] {
				t.Fatalf("add(%q) = %v, but the map had it: %v", id, added, m[id])
			}
			m[id] = true
			if s.len() != len(m) {
				t.Fatalf("len %d, map %d", s.len(), len(m))
			}
		}
		for id := range m {
			if !s.has(id) {
				t.Fatalf("lost %q", id)
			}
		}
	}
}
