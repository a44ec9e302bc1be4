package pager_test

import (
	"fmt"
	"iter"
	"os"
	"time"

	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// A program serving a long conversation to a client captures it once and
// then reads byte-budgeted pages from either end: the latest page to open
// it, the earliest to read from the start.
func ExampleSnapshot_Page() {
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	entries := []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "hello"}, Timestamp: at},
		{ID: "a1", Content: transcript.Agent{Markdown: "Hello! What shall we do?"}, Timestamp: at},
		{ID: "u2", Content: transcript.User{Text: "count to three"}, Timestamp: at},
		{ID: "a2", Content: transcript.Agent{Markdown: "1, 2, 3."}, Timestamp: at},
	}
	items := func(yield func(pager.Item, error) bool) {
		for _, e := range entries {
			raw, err := transcript.EncodeEntry(e)
			if !yield(pager.Item{ID: e.ID, Kind: e.Content.Kind(), Raw: raw}, err) {
				return
			}
		}
	}
	snap, err := pager.Build(os.TempDir(), iter.Seq2[pager.Item, error](items))
	if err != nil {
		panic(err)
	}
	defer snap.Release()

	latest, err := snap.Page(nil, pager.AnchorLatest, pager.Before, pager.MinBudget)
	if err != nil {
		panic(err)
	}
	earliest, err := snap.Page(nil, pager.AnchorEarliest, pager.After, pager.MinBudget)
	if err != nil {
		panic(err)
	}
	fmt.Println(snap.Stats().Groups, "groups")
	fmt.Println("latest:", latest.First, latest.Last, latest.HasMoreBefore)
	fmt.Println("earliest:", earliest.First, earliest.Last, earliest.HasMoreAfter)
	// Output:
	// 4 groups
	// latest: 0 3 false
	// earliest: 0 3 false
}
