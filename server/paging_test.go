package server

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/foliodev/folio/server/pager"
)

// groupStarts finds the groups of a page without decoding it: each group
// object starts with the bytes the pager writes, `{"index":N,"entries":[{"id":"`,
// which cannot occur unescaped inside an entry's strings. It returns each
// group's index and first entry ID.
func groupStarts(t *testing.T, groups []byte) (idx []int, first []string) {
	t.Helper()
	const pre = `{"index":`
	for off := 0; ; {
		i := bytes.Index(groups[off:], []byte(pre))
		if i < 0 {
			return idx, first
		}
		off += i + len(pre)
		j := bytes.IndexByte(groups[off:], ',')
		n, err := strconv.Atoi(string(groups[off : off+j]))
		if err != nil {
			t.Fatalf("group index at %d: %v", off, err)
		}
		off += j
		const ent = `,"entries":[{"id":"`
		if !bytes.HasPrefix(groups[off:], []byte(ent)) {
			t.Fatalf("group %d does not start with its entries", n)
		}
		off += len(ent)
		k := bytes.IndexByte(groups[off:], '"')
		idx, first = append(idx, n), append(first, string(groups[off:off+k]))
	}
}

// walk pages a whole snapshot one way and counts how often it saw each group.
func walk(t *testing.T, c *client, tok, conv string, groups int, forward bool, budget int) (seen []int, pages int) {
	t.Helper()
	seen = make([]int, groups)
	anchor, dir := "latest", "before"
	if forward {
		anchor, dir = "earliest", "after"
	}
	for {
		f := c.page(tok, conv, anchor, dir, budget)
		if f.Type != "page" {
			t.Fatalf("page: %s", f.raw)
		}
		if f.First == nil {
			break
		}
		pages++
		idx, ids := groupStarts(t, f.Groups)
		if len(idx) > 1 && len(f.Groups)-2 > budget { // -2: the brackets
			t.Fatalf("page %d..%d of %d groups is %d bytes, over the %d budget", *f.First, *f.Last, len(idx), len(f.Groups), budget)
		}
		for i, g := range idx {
			if g != *f.First+i {
				t.Fatalf("group %d at position %d of a page starting at %d", g, i, *f.First)
			}
			seen[g]++
		}
		if forward {
			anchor = ids[len(ids)-1] // any entry of the last group anchors "after" it
			if !f.HasMoreA {
				break
			}
		} else {
			anchor = ids[0]
			if !f.HasMoreB {
				break
			}
		}
	}
	return seen, pages
}

// TestPagingA300kConversationBothWays is the acceptance walk: every display
// group of a generated 300,000-entry conversation is visited exactly once
// forwards and once backwards, over a real WebSocket.
func TestPagingA300kConversationBothWays(t *testing.T) {
	n := 300000
	if testing.Short() || raceEnabled {
		n = 20000 // the full size runs without -race: go test -run A300k ./server
	}
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "big", n, 1)
	c := ts.dial(t)
	snap := c.open("big")
	if snap.Entries != n {
		t.Fatalf("snapshot captured %d entries, want %d", snap.Entries, n)
	}
	var groups struct{ Groups int }
	groups.Groups = int(mustInt(t, snap.raw, "groups"))
	for _, forward := range []bool{true, false} {
		seen, pages := walk(t, c, snap.Token, "big", groups.Groups, forward, pager.DefaultBudget)
		for g, k := range seen {
			if k != 1 {
				t.Fatalf("forward=%v: group %d seen %d times", forward, g, k)
			}
		}
		t.Logf("forward=%v: %d groups in %d pages", forward, groups.Groups, pages)
	}
}

func mustInt(t testing.TB, raw []byte, member string) int64 {
	t.Helper()
	var m map[string]any
	if err := jsonUnmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	v, ok := m[member].(float64)
	if !ok {
		t.Fatalf("%s missing in %s", member, raw[:min(len(raw), 300)])
	}
	return int64(v)
}

// TestBudgetKeepsLargeGroupsWhole pages with the smallest budget around a
// conversation whose few huge turns exceed it: those come alone and whole,
// every other page stays within the budget.
func TestBudgetKeepsLargeGroupsWhole(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "c", 4000, 2)
	c := ts.dial(t)
	snap := c.open("c")
	groups := int(mustInt(t, snap.raw, "groups"))
	seen, _ := walk(t, c, snap.Token, "c", groups, true, pager.MinBudget)
	for g, k := range seen {
		if k != 1 {
			t.Fatalf("group %d seen %d times", g, k)
		}
	}
	// Find the over-budget pages explicitly.
	over := 0
	anchor := "earliest"
	for {
		f := c.page(snap.Token, "c", anchor, "after", pager.MinBudget)
		if f.First == nil {
			break
		}
		if len(f.Groups) > pager.MinBudget+2 {
			over++
			if *f.First != *f.Last {
				t.Fatalf("over-budget page holds groups %d..%d", *f.First, *f.Last)
			}
		}
		gs := f.groups(t)
		l := gs[len(gs)-1].Entries
		anchor = l[len(l)-1].ID
		if !f.HasMoreA {
			break
		}
	}
	if over == 0 {
		t.Fatal("no group exceeded the budget; the fixture proves nothing")
	}
	// Errors that do not break the window.
	for _, tc := range []struct {
		anchor, dir string
		budget      int
		code        string
	}{
		{"no-such-entry", "before", 0, "bad-anchor"},
		{"latest", "up", 0, "bad-direction"},
		{"latest", "before", 10, "bad-budget"},
		{"latest", "before", pager.MaxBudget + 1, "bad-budget"},
	} {
		f := c.page(snap.Token, "c", tc.anchor, tc.dir, tc.budget)
		if f.Type != "error" || f.Code != tc.code || f.Rebuild {
			t.Errorf("%+v: got %s", tc, f.raw)
		}
	}
	if f := c.page(snap.Token, "c", "latest", "before", 0); f.Type != "page" || f.HasMoreA {
		t.Fatalf("latest page after errors: %s", f.raw[:min(200, len(f.raw))])
	}
}
