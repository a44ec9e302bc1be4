package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

func userTexts(es []transcript.Entry) string {
	var out []string
	for _, e := range es {
		if u, ok := e.Content.(transcript.User); ok {
			out = append(out, u.Text)
		}
	}
	return strings.Join(out, "|")
}

func contents(ms []message.Message) string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Role)+":"+m.Content)
	}
	return strings.Join(out, "|")
}

// twoTurns runs two turns and returns the harness and the second user entry.
func twoTurns(t *testing.T, more ...[]item) (*harness, string) {
	t.Helper()
	p := newScripted(append([][]item{cat(text("one"), done()), cat(text("two"), done())}, more...)...)
	h := newHarness(t, p)
	h.send("c1", "first")
	h.send("c2", "second")
	es := h.wantKinds("user agent turn-receipt user agent turn-receipt")
	return h, es[3].ID
}

func TestEditAndResendForksBeforeTheUserEntry(t *testing.T) {
	h, second := twoTurns(t, cat(text("two, again"), done()))
	before := h.entries()
	gen := h.store.Snapshot().Generation
	r, err := h.eng.EditAndResend(context.Background(), "c3", second, "second, edited")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != engine.Queued && r.State != engine.Running {
		t.Fatalf("receipt %+v", r)
	}
	if r, _ := h.eng.Wait(context.Background(), "c3"); r.State != engine.Done {
		t.Fatalf("edited turn %+v", r)
	}
	if g := h.store.Snapshot().Generation; g == gen {
		t.Fatal("switching branches did not start a new generation")
	}
	es := h.wantKinds("user agent turn-receipt user agent turn-receipt")
	for i := range 3 {
		if es[i].ID != before[i].ID {
			t.Fatalf("entry %d: the shared prefix changed: %s, was %s", i, es[i].ID, before[i].ID)
		}
	}
	if es[3].ID == second || userTexts(es) != "first|second, edited" {
		t.Fatalf("branch entries %v", userTexts(es))
	}
	reqs := h.prov.reqs()
	if got := contents(reqs[2].Messages); !strings.HasSuffix(got, "user:first|assistant:one|user:second, edited") || strings.Contains(got, "two") {
		t.Fatalf("the edited turn's request saw %s", got)
	}

	c := h.reload()
	if c.Head != "b1" || len(c.Branches) != 2 {
		t.Fatalf("head %q branches %+v", c.Head, c.Branches)
	}
	if b := c.Branches[1]; b.AfterEntry != before[2].ID || b.AfterMessage != 2 || b.Title != "second, edited" {
		t.Fatalf("branch %+v", b)
	}
	if userTexts(c.Document.Entries()) != "first|second, edited" || contents(c.Messages) != "user:first|assistant:one|user:second, edited|assistant:two, again" {
		t.Fatalf("saved branch %v / %s", userTexts(c.Document.Entries()), contents(c.Messages))
	}
	md, mm, _ := c.Branch(history.Main)
	if userTexts(md.Entries()) != "first|second" || contents(mm) != "user:first|assistant:one|user:second|assistant:two" {
		t.Fatalf("main changed: %v / %s", userTexts(md.Entries()), contents(mm))
	}

	// A repeated command forks nothing more.
	if r, err := h.eng.EditAndResend(context.Background(), "c3", es[3].ID, "again"); err != nil || !r.Duplicate {
		t.Fatalf("duplicate: %+v %v", r, err)
	}
	if n := len(h.reload().Branches); n != 2 {
		t.Fatalf("a duplicate made %d branches", n)
	}
}

func TestSelectBranchSwitchesTheConversation(t *testing.T) {
	h, second := twoTurns(t, cat(text("two, again"), done()), cat(text("three"), done()))
	if _, err := h.eng.EditAndResend(context.Background(), "c3", second, "second, edited"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.eng.Wait(context.Background(), "c3"); err != nil {
		t.Fatal(err)
	}
	gen := h.store.Snapshot().Generation
	if err := h.eng.SelectBranch(history.Main); err != nil {
		t.Fatal(err)
	}
	if h.store.Snapshot().Generation == gen {
		t.Fatal("no new generation")
	}
	if got := userTexts(h.entries()); got != "first|second" {
		t.Fatalf("main shows %s", got)
	}
	if got := contents(h.eng.Messages()); got != "user:first|assistant:one|user:second|assistant:two" {
		t.Fatalf("main's model history %s", got)
	}
	// The conversation continues on main; b1 is untouched.
	h.send("c4", "third")
	c := h.reload()
	if c.Head != history.Main || userTexts(c.Document.Entries()) != "first|second|third" {
		t.Fatalf("head %q %s", c.Head, userTexts(c.Document.Entries()))
	}
	bd, _, _ := c.Branch("b1")
	if userTexts(bd.Entries()) != "first|second, edited" {
		t.Fatalf("b1 %s", userTexts(bd.Entries()))
	}
	if err := h.eng.SelectBranch("b9"); !errors.Is(err, history.ErrUnknownBranch) {
		t.Fatalf("unknown branch: %v", err)
	}
}

func TestBranchesAfterResume(t *testing.T) {
	// A fresh engine resumed from the log no longer knows which entry each
	// message came with; the fork point is found from the end.
	h, second := twoTurns(t)
	h.eng.Close()
	h.log.Close()
	log, err := history.Open(h.path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	conv, err := log.Load()
	if err != nil {
		t.Fatal(err)
	}
	p := newScripted(cat(text("fresh"), done()))
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	e := engine.New(store, p, engine.WithSaver(log))
	defer e.Close()
	if err := e.Resume(conv.Document, conv.Messages); err != nil {
		t.Fatal(err)
	}
	first := conv.Document.At(0).ID
	if _, err := e.EditAndResend(context.Background(), "x", first, "first, edited"); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.Wait(context.Background(), "x"); r.State != engine.Done {
		t.Fatalf("%+v", r)
	}
	if got := contents(p.reqs()[0].Messages); strings.Contains(got, "one") || !strings.HasSuffix(got, "user:first, edited") {
		t.Fatalf("request %s", got)
	}
	if got := userTexts(store.Snapshot().Document.Entries()); got != "first, edited" {
		t.Fatalf("entries %s", got)
	}
	_ = second
}

func TestBranchEditsRefuseWhatTheyCannotDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, second := twoTurns(t, cat(text("working"), block()))
		es := h.entries()
		if _, err := h.eng.EditAndResend(context.Background(), "e1", es[1].ID, "x"); !errors.Is(err, engine.ErrNotUserEntry) {
			t.Fatalf("agent entry: %v", err)
		}
		if _, err := h.eng.EditAndResend(context.Background(), "e2", "nope", "x"); !errors.Is(err, engine.ErrNotUserEntry) {
			t.Fatalf("unknown entry: %v", err)
		}
		if _, err := h.eng.Send(context.Background(), "c3", "third", nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		before := readFile(t, h.path)
		if _, err := h.eng.EditAndResend(context.Background(), "e3", second, "x"); !errors.Is(err, engine.ErrBusy) {
			t.Fatalf("while running: %v", err)
		}
		if err := h.eng.SelectBranch(history.Main); !errors.Is(err, engine.ErrBusy) {
			t.Fatalf("select while running: %v", err)
		}
		if readFile(t, h.path) != before {
			t.Fatal("a refused edit wrote to the log")
		}
		h.eng.Stop()
		if _, err := h.eng.Wait(context.Background(), "c3"); err != nil {
			t.Fatal(err)
		}
		// After the stop, the edit goes through.
		if _, err := h.eng.EditAndResend(context.Background(), "e4", second, "second, edited"); err != nil {
			t.Fatalf("after stop: %v", err)
		}

		// An engine whose saver keeps no branches.
		bare := engine.New(transcript.NewStore(), newScripted())
		defer bare.Close()
		if err := bare.SelectBranch(history.Main); !errors.Is(err, engine.ErrNoBranches) {
			t.Fatalf("no saver: %v", err)
		}
	})
}
