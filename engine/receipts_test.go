package engine_test

import (
	"context"
	"errors"
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

// TestCommandIdentityAndChanges: a command's kind, body digest and turn
// entry are the engine's, kept across a restart: the same ID with another
// digest is ErrConflict, Once runs a command at most once and records it,
// a refused Once leaves no record, and Receipts lists each change once,
// after the mark it was asked for.
func TestCommandIdentityAndChanges(t *testing.T) {
	prov := newScripted(reply(text("an answer"), done()))
	path := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")
	log, err := history.Open(path)
	must(t, err)
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, prov, engine.WithSaver(log), engine.WithCommandLog(log))
	ctx := context.Background()

	if _, err := eng.Send(ctx, "k1", "hello", nil, engine.WithDigest("d1")); err != nil {
		t.Fatal(err)
	}
	r, err := eng.Wait(ctx, "k1")
	must(t, err)
	if r.Kind != "send" || r.EntryID == "" {
		t.Fatalf("receipt: %+v, want kind send and the turn's user entry", r)
	}
	changed, mark := eng.Receipts(0)
	if len(changed) != 1 || changed[0].CommandID != "k1" || changed[0].State != engine.Done {
		t.Fatalf("changes since the start: %+v", changed)
	}
	if again, _ := eng.Receipts(mark); len(again) != 0 {
		t.Fatalf("changes after the mark: %+v", again)
	}
	if _, err := eng.Send(ctx, "k1", "hello", nil, engine.WithDigest("d2")); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("another body under k1: %v, want ErrConflict", err)
	}
	runs := 0
	for range 2 {
		r, err := eng.Once("s1", func() error { runs++; return nil }, engine.AsKind("select-branch"), engine.WithDigest("ds"))
		if err != nil || r.State != engine.Done || r.Kind != "select-branch" {
			t.Fatalf("once: %+v %v", r, err)
		}
	}
	refused := errors.New("not now")
	if _, err := eng.Once("s2", func() error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("a refused once: %v", err)
	}
	if runs != 1 {
		t.Fatalf("Once ran %d times", runs)
	}
	if _, err := eng.Status("s2"); !errors.Is(err, engine.ErrUnknownCommand) {
		t.Fatalf("a refused command left a receipt: %v", err)
	}
	eng.Close()
	must(t, log.Close())

	// What a new engine, or a reader of the sidecar, makes of it.
	recs, err := history.ReadCommands(path)
	must(t, err)
	got := map[string]engine.Receipt{}
	for _, rec := range recs {
		got[rec.ID] = engine.ReceiptOf(rec)
	}
	if got["k1"].State != engine.Done || got["k1"].EntryID != r.EntryID || got["k1"].Kind != "send" {
		t.Fatalf("k1 from the sidecar: %+v", got["k1"])
	}
	if got["s1"].State != engine.Done || got["s1"].Kind != "select-branch" {
		t.Fatalf("s1 from the sidecar: %+v", got["s1"])
	}
	if _, ok := got["s2"]; ok {
		t.Fatal("the refused command is in the sidecar")
	}
	log, err = history.Open(path)
	must(t, err)
	defer log.Close()
	eng = engine.New(transcript.NewStore(), prov, engine.WithSaver(log), engine.WithCommandLog(log))
	defer eng.Close()
	if _, err := eng.Send(ctx, "k1", "hello", nil, engine.WithDigest("d2")); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("another body under k1 after a restart: %v, want ErrConflict", err)
	}
}
