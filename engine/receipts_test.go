package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// TestReceiptsSurviveARestart: a command ID sent again to a new engine on
// the same log answers with its first receipt and starts no turn; one that
// was accepted but never settled (the process died) is Failed,
// interrupted, and is not run either.
func TestReceiptsSurviveARestart(t *testing.T) {
	prov := newScripted(reply(text("first answer"), done()))
	path := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")

	log, err := history.Open(path)
	must(t, err)
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, prov, engine.WithSaver(log), engine.WithCommandLog(log))
	if _, err := eng.Send(context.Background(), "k1", "hello", nil); err != nil {
		t.Fatal(err)
	}
	first, err := eng.Wait(context.Background(), "k1")
	must(t, err)
	if first.State != engine.Done {
		t.Fatalf("first receipt: %+v", first)
	}
	// k2 accepted, never settled: as if the process died mid-turn.
	must(t, log.RecordCommand(history.CommandRecord{ID: "k2", State: string(engine.Running)}))
	eng.Close()
	must(t, log.Close())

	log, err = history.Open(path)
	must(t, err)
	defer log.Close()
	conv, err := log.Load()
	must(t, err)
	store = transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng = engine.New(store, prov, engine.WithSaver(log), engine.WithCommandLog(log))
	defer eng.Close()
	must(t, eng.Resume(conv.Document, conv.Messages))
	again, err := eng.Send(context.Background(), "k1", "hello", nil)
	must(t, err)
	if !again.Duplicate || again.State != engine.Done {
		t.Fatalf("resent after a restart: %+v, want the first receipt (done, duplicate)", again)
	}
	k2, err := eng.Send(context.Background(), "k2", "hello again", nil)
	must(t, err)
	if !k2.Duplicate || k2.State != engine.Failed || k2.Reason != engine.ReasonInterrupted {
		t.Fatalf("an interrupted command resent: %+v", k2)
	}
	if n := len(prov.requests); n != 1 {
		t.Fatalf("%d model requests, want 1: a resend started a turn", n)
	}
	users := 0
	for _, e := range store.Snapshot().Document.All() {
		if _, ok := e.Content.(transcript.User); ok {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("%d user entries, want 1", users)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
