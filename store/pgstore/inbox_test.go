package pgstore

import (
	"context"
	"testing"
)

// A forwarded command is one row per command ID; only its owner claims
// it, once, and the sender can take it back only while nobody has.
func TestInboxClaimsOnceAndWithdraws(t *testing.T) {
	u := freshURL(t)
	ctx := context.Background()
	sender := NewMirror(newTestStoreAt(t, u), t.TempDir(), nil)
	owner := NewMirror(newTestStoreAt(t, u), t.TempDir(), nil)
	for range 2 {
		if err := sender.Forward(ctx, "c1", "k1", []byte(`{"kind":"send"}`)); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := sender.s.pool.QueryRow(ctx, `SELECT count(*) FROM folio_inbox`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows after forwarding one ID twice (%v)", n, err)
	}
	var ran []string
	owner.OnCommand(func(id string, body []byte) { ran = append(ran, string(body)) })
	// Not the owner yet: nothing is claimed.
	owner.inboxNote(ctx, note{Conversation: "c1", Command: "k1"})
	if _, ok := owner.claim(ctx, "c1", "nope"); ok {
		t.Fatal("claimed a command that does not exist")
	}
	l, err := owner.OpenLog("c1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if body, ok := owner.claim(ctx, "c1", "k1"); !ok || string(body) != `{"kind":"send"}` {
		t.Fatalf("the owner's claim: %q %v", body, ok)
	}
	if _, ok := owner.claim(ctx, "c1", "k1"); ok {
		t.Fatal("a command was claimed twice")
	}
	if took, err := sender.Withdraw(ctx, "c1", "k1"); err != nil || took {
		t.Fatalf("withdrew a claimed command: %v %v", took, err)
	}
	if err := sender.Forward(ctx, "c1", "k2", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if took, err := sender.Withdraw(ctx, "c1", "k2"); err != nil || !took {
		t.Fatalf("could not withdraw an unclaimed command: %v %v", took, err)
	}
	if len(ran) != 0 {
		t.Fatalf("ran %q before owning the conversation", ran)
	}
}
