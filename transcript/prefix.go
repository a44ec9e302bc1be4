package transcript

// SamePrefix reports whether the first n entries of d and old are the same
// facts. It is how a writer learns that nothing it already saved changed.
//
// When d grew from old by appends and settlement, the two share storage and
// the answer takes constant time. Otherwise entries are compared node by
// node: identical nodes are equal without hashing, and only nodes that differ
// (after Replace, or in documents built separately) compare their cached
// fingerprints.
func (d Document) SamePrefix(old Document, n int) bool {
	if n > d.Len() || n > old.Len() {
		return false
	}
	k := min(n, len(d.nodes), len(old.nodes))
	if k > 0 && &d.nodes[0] != &old.nodes[0] {
		for i := range k {
			if !sameNode(d.nodes[i], old.nodes[i]) {
				return false
			}
		}
	}
	for i := k; i < n; i++ {
		if !sameNode(d.node(i), old.node(i)) {
			return false
		}
	}
	return true
}

func sameNode(a, b *node) bool {
	return a == b || a.fingerprint() == b.fingerprint()
}
