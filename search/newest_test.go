package search

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
)

// TestNewestInAConversation: Options.Newest lists one conversation's
// matches newest first, unranked, the newest Limit of them; a hit with a
// higher score but older comes after a newer weak one.
func TestNewestInAConversation(t *testing.T) {
	t.Parallel()
	backends(t, testNewestInAConversation)
}

func testNewestInAConversation(t *testing.T, e env) {
	c := e.convo("long")
	var es []transcript.Entry
	for i := range 30 {
		text := fmt.Sprintf("filler number %d", i)
		switch i {
		case 3:
			text = "otter otter otter otter, a strong match"
		case 12, 20, 27:
			text = fmt.Sprintf("a long prompt that mentions the otter once among many other words, number %d", i)
		}
		es = append(es, at(user(fmt.Sprintf("u%d", i), text), t0.Add(time.Duration(i)*time.Minute)))
	}
	c.save(es...)
	o := e.convo("else")
	o.save(at(user("u1", "an otter elsewhere"), t0.Add(time.Hour)))
	ix := e.index()
	q, err := ParseQuery("otter conversation:long")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Run(context.Background(), q, Options{Newest: true, Limit: MaxLimit, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(hits); !slices.Equal(got, []string{"long/u27", "long/u20", "long/u12", "long/u3"}) {
		t.Fatalf("newest first: got %v", got)
	}
	if len(hits[0].Snippet) == 0 {
		t.Errorf("no snippet: %+v", hits[0])
	}
	hits, err = ix.Run(context.Background(), q, Options{Newest: true, Limit: 2, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(hits); !slices.Equal(got, []string{"long/u27", "long/u20"}) {
		t.Fatalf("the newest two: got %v", got)
	}
	// Ranked, the strong match comes first.
	if got := entryIDs(find(t, ix, "otter conversation:long")); got[0] != "long/u3" {
		t.Fatalf("ranked: got %v", got)
	}
}

// A find lists more hits than a ranked search may (MaxFind, not
// MaxLimit), and past a batch of the PostgreSQL back end's reading: every
// one of a conversation's 1,100 matches, newest first.
func TestNewestPastMaxLimit(t *testing.T) {
	t.Parallel()
	backends(t, testNewestPastMaxLimit)
}

func testNewestPastMaxLimit(t *testing.T, e env) {
	const n = 1100
	c := e.convo("many")
	var es []transcript.Entry
	for i := range n {
		es = append(es, at(user(fmt.Sprintf("u%d", i), fmt.Sprintf("otter number %d", i)), t0.Add(time.Duration(i)*time.Second)))
	}
	c.save(es...)
	ix := e.index()
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	q, err := ParseQuery("otter conversation:many")
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Run(context.Background(), q, Options{Newest: true, Limit: MaxFind, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != n {
		t.Fatalf("%d hits, want %d", len(hits), n)
	}
	for i, h := range hits {
		if want := fmt.Sprintf("u%d", n-1-i); h.Entry != want {
			t.Fatalf("hit %d is %s, want %s", i, h.Entry, want)
		}
	}
	// A ranked search stays within MaxLimit.
	if hits := find(t, ix, "otter"); len(hits) != MaxLimit {
		t.Fatalf("ranked: %d hits, want %d", len(hits), MaxLimit)
	}
}
