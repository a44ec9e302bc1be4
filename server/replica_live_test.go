package server

import (
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// A tab on another replica sees an answer grow by the owner's streaming
// messages, ahead of what the database holds: A's engine saves its
// streaming answer only every hour (or 8 KiB), and B's tab holds text of
// it the database does not have yet, applied as appends continuing
// exactly what the tab holds. At the end B's tab holds the database's
// document.
func TestReplicaStreamsAnAnswerBeforeItIsSaved(t *testing.T) {
	url := pgtest.URL(t)
	a := newReplicaServerSaving(t, url, 100, time.Hour)
	b := newReplicaServer(t, url, 400)
	id := a.create(t)
	cb := b.dial(t)
	tab := followTab(t, cb, id)
	ca := a.dial(t)
	ca.open(id)
	if r := ca.send(id, "k1", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	// Wait for 200 UTF-16 units of the answer on B's tab.
	var entry string
	held := 0
	cb.await(func(f frame) bool {
		if f.Type != "event" {
			return false
		}
		switch f.Op {
		case string(OpUpsert), string(OpSettle):
			if e, err := transcript.DecodeEntry(f.Entry); err == nil && e.Content.Kind() == transcript.KindAgent {
				entry, held = e.ID, utf16Len(textOf(e))
			}
		case string(OpAppend):
			if f.EntryID == entry {
				held = f.Offset + utf16Len(f.Text)
			}
		}
		return entry != "" && held >= 200
	})
	stored, err := history.ReadStore(a.store, id)
	must(t, err)
	if i, ok := stored.Document.Index(entry); ok {
		if n := utf16Len(textOf(stored.Document.At(i))); n >= held {
			t.Fatalf("the database holds %d units of the answer, B's tab %d: it saw no more than was saved", n, held)
		}
	}
	if r := ca.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", r)
	}
	waitEqual(t, id, a, b)
	conv, err := history.ReadStore(b.store, id)
	must(t, err)
	tab.awaitDocument(t, "B", conv.Document.Entries())
}

// A tab that opens on another replica while an answer streams starts
// from the saved records, and once a record catches up with the messages,
// it follows the messages again, ahead of the database; every append it
// gets continues exactly what it holds (tabDoc fails otherwise), and it
// ends with the database's document.
func TestReplicaTabJoiningMidAnswerCatchesUpWithTheStream(t *testing.T) {
	url := pgtest.URL(t)
	a := newReplicaServerSaving(t, url, 100, 500*time.Millisecond)
	b := newReplicaServer(t, url, 400)
	id := a.create(t)
	ca := a.dial(t)
	ca.open(id)
	if r := ca.send(id, "k1", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	ca.await(func(f frame) bool { return f.Type == "event" && f.Op == string(OpAppend) && f.Offset > 300 })
	cb := b.dial(t)
	tab := followTab(t, cb, id)
	ahead := false
	for !ahead {
		f := cb.await(func(f frame) bool {
			return f.Type == "event" && (f.Op == string(OpAppend) || f.Op == string(OpSettle))
		})
		if f.Op == string(OpSettle) {
			if e := f.entry(t); e.Content.Kind() == transcript.KindAgent {
				t.Fatal("the answer settled before B's tab got ahead of the database")
			}
			continue
		}
		stored, err := history.ReadStore(a.store, id)
		must(t, err)
		i, ok := stored.Document.Index(f.EntryID)
		ahead = !ok || utf16Len(textOf(stored.Document.At(i))) < f.Offset+utf16Len(f.Text)
	}
	if r := ca.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", r)
	}
	waitEqual(t, id, a, b)
	conv, err := history.ReadStore(b.store, id)
	must(t, err)
	tab.awaitDocument(t, "B", conv.Document.Entries())
}
