package pgstore

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseNote: an append notification's payload either parses into the
// fields it was made from or is refused; it never panics.
func FuzzParseNote(f *testing.F) {
	f.Add("0 12 4096 c-abc")
	f.Add("3 1 10 an id with spaces")
	f.Add("x 1 2 c")
	f.Add("1 2 3")
	f.Fuzz(func(t *testing.T, p string) {
		epoch, seq, id, ok := parseNote(p)
		if !ok {
			return
		}
		f := strings.SplitN(p, " ", 4)
		if n, err := strconv.ParseInt(f[0], 10, 64); err != nil || n != epoch {
			t.Fatalf("epoch %d from %q", epoch, f[0])
		}
		if n, err := strconv.ParseInt(f[1], 10, 64); err != nil || n != seq {
			t.Fatalf("seq %d from %q", seq, f[1])
		}
		if id != f[3] {
			t.Fatalf("id %q from %q", id, p)
		}
	})
}
