package history

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkReadBranched reads a 20,000-entry conversation with and without
// a branch forked half way that holds another 10,000 entries: what a branch
// costs a reader beyond its own records (the prefix copy, its own document).
func BenchmarkReadBranched(b *testing.B) {
	for _, branched := range []bool{false, true} {
		b.Run(fmt.Sprintf("branched=%v", branched), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "c1.jsonl")
			l, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			es := entries(20_000, "e")
			if err := l.Save(doc(b, es...), nil); err != nil {
				b.Fatal(err)
			}
			if branched {
				id, err := l.Fork(Main, es[9_999].ID, 0, "")
				if err != nil {
					b.Fatal(err)
				}
				c, err := l.SetHead(id)
				if err != nil {
					b.Fatal(err)
				}
				d := c.Document
				for i := range 10_000 {
					if d, err = d.Append(agent(fmt.Sprintf("b%d", i), "branch answer")); err != nil {
						b.Fatal(err)
					}
				}
				if err := l.Save(d, nil); err != nil {
					b.Fatal(err)
				}
			}
			l.Close()
			b.ReportAllocs()
			for b.Loop() {
				c, err := ReadFile(path)
				if err != nil || c.Document.Len() != 20_000 {
					b.Fatalf("%v %d", err, c.Document.Len())
				}
			}
		})
	}
}
