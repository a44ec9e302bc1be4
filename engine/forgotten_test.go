package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// A command the engine has forgotten (it keeps the newest few hundred
// finished ones) is never run again when it is delivered late: with a
// command log it answers the receipt the log recorded, as a duplicate;
// without one it is refused with ErrAlreadyDone. A new ID still runs.
func TestForgottenCommandIsNotRunTwice(t *testing.T) {
	t.Parallel()
	for _, durable := range []bool{true, false} {
		t.Run(map[bool]string{true: "command-log", false: "no-command-log"}[durable], func(t *testing.T) {
			prov := newScripted()
			go func() {
				for range prov.started { // the script's record of requests is bounded
				}
			}()
			store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
			opts := []engine.Option{}
			if durable {
				log, err := history.Open(filepath.Join(t.TempDir(), "conversations", "c1.jsonl"))
				must(t, err)
				defer log.Close()
				opts = append(opts, engine.WithSaver(log), engine.WithCommandLog(log))
			}
			eng := engine.New(store, prov, opts...)
			defer eng.Close()
			const n = 600 // past twice the newest 256 kept, so the first are forgotten
			for i := range n {
				id := fmt.Sprintf("cmd-%d", i)
				if _, err := eng.Send(context.Background(), id, "q", nil, engine.WithDigest("d")); err != nil {
					t.Fatal(err)
				}
				if r, err := eng.Wait(context.Background(), id); err != nil || r.State != engine.Done {
					t.Fatalf("%s: %+v %v", id, r, err)
				}
			}
			if slices.ContainsFunc(eng.Commands(), func(r engine.Receipt) bool { return r.CommandID == "cmd-0" }) {
				t.Fatal("the first of 600 commands is still held; the test needs it forgotten")
			}
			requests := len(prov.reqs())
			r, err := eng.Send(context.Background(), "cmd-0", "q", nil, engine.WithDigest("d"))
			if durable {
				if err != nil || !r.Duplicate || r.State != engine.Done || r.EntryID == "" {
					t.Fatalf("the first command delivered again: %+v %v, want its recorded receipt as a duplicate", r, err)
				}
				if s, err := eng.Status("cmd-0"); err != nil || s.State != engine.Done {
					t.Fatalf("the first command's status: %+v %v", s, err)
				}
				if _, err := eng.Send(context.Background(), "cmd-0", "q", nil, engine.WithDigest("other")); !errors.Is(err, engine.ErrConflict) {
					t.Fatalf("the first command's ID with another body: %v, want ErrConflict", err)
				}
			} else if !errors.Is(err, engine.ErrAlreadyDone) {
				t.Fatalf("the first command delivered again: %+v %v, want ErrAlreadyDone", r, err)
			}
			if got := len(prov.reqs()); got != requests {
				t.Fatalf("the late delivery made %d model requests", got-requests)
			}
			users := 0
			for _, e := range store.Snapshot().Document.All() {
				if _, ok := e.Content.(transcript.User); ok {
					users++
				}
			}
			if d := store.Snapshot().Document; users != n && d.Elided() == 0 {
				t.Fatalf("%d user entries after %d sends", users, n)
			}
			if _, err := eng.Send(context.Background(), "cmd-new", "q", nil); err != nil {
				t.Fatal(err)
			}
			if r, err := eng.Wait(context.Background(), "cmd-new"); err != nil || r.State != engine.Done || r.Duplicate {
				t.Fatalf("a new command after: %+v %v", r, err)
			}
		})
	}
}
