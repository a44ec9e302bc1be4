package pager

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestDigitsUpTo: the closed form counts what writing 0..n-1 out takes,
// across every power of ten a conversation's groups reach.
func TestDigitsUpTo(t *testing.T) {
	var want int64
	for n := int64(0); n <= 120_000; n++ {
		if got := digitsUpTo(n); got != want {
			t.Fatalf("digitsUpTo(%d) = %d; writing them out takes %d", n, got, want)
		}
		want += int64(len(strconv.FormatInt(n, 10)))
	}
}

// TestSpanBytesIsTheFrame: for runs of groups with random entries, the
// size spanBytes works out from their entries' total and count alone is
// the length of the groups as groupOpen and groupClose write them, commas
// included; each group's "bytes" is its own length and parses as JSON.
func TestSpanBytesIsTheFrame(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, first := range []int{0, 1, 8, 9, 95, 99, 998, 9_999, 123_456} {
		var page []byte
		var entriesLen int64
		n := 0
		for g := first; g < first+40; g++ {
			if g > first {
				page = append(page, ',')
			}
			start := len(page)
			page = groupOpen(page, g)
			var glen int64
			k := 1 + rnd.IntN(5)
			for i := range k {
				if i > 0 {
					page = append(page, ',')
				}
				e := fmt.Sprintf(`{"id":"e%d","pad":"%*s"}`, i, rnd.IntN(3000), "")
				page = append(page, e...)
				glen += int64(len(e))
			}
			page = groupClose(page, g, glen, k)
			entriesLen += glen
			n += k
			var obj struct {
				Index   int               `json:"index"`
				Entries []json.RawMessage `json:"entries"`
				Bytes   int64             `json:"bytes"`
			}
			if err := json.Unmarshal(page[start:], &obj); err != nil {
				t.Fatalf("group %d is not JSON: %v\n%s", g, err, page[start:])
			}
			if obj.Index != g || len(obj.Entries) != k || obj.Bytes != int64(len(page)-start) || obj.Bytes != groupBytes(g, glen, k) {
				t.Fatalf("group %d says index %d, %d entries, %d bytes; it is %d bytes of %d entries", g, obj.Index, len(obj.Entries), obj.Bytes, len(page)-start, k)
			}
			if got := spanBytes(first, g, entriesLen, n); got != int64(len(page)) {
				t.Fatalf("groups %d..%d: spanBytes %d; written %d", first, g, got, len(page))
			}
		}
	}
}
