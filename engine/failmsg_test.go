package engine_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/transcript"
)

// countFailures counts the messages holding the partial answer and the
// failure statement.
func countFailures(msgs []message.Message, partial string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == message.Assistant && strings.Contains(m.Content, partial) && strings.Contains(m.Content, "This reply failed") {
			n++
		}
	}
	return n
}

// After a failed turn, the next request holds the partial answer and the
// failure, once.
func TestNextRequestSeesTheFailureOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(
			cat(text("Half an ans"), fail(&provider.Error{Class: provider.ClassAuth, Status: 401, Msg: "bad key"})),
			reply(text("ok"), done()),
			reply(text("ok again"), done()))
		h := newHarness(t, p)
		if r := h.send("c1", "go"); r.State != engine.Failed {
			t.Fatalf("state %s", r.State)
		}
		h.send("c2", "what happened?")
		h.send("c3", "and now?")
		reqs := p.reqs()
		for i := 1; i < 3; i++ {
			if n := countFailures(reqs[i].Messages, "Half an ans"); n != 1 {
				t.Fatalf("request %d holds the failure %d times, want once: %+v", i, n, reqs[i].Messages)
			}
		}
		if n := countFailures(h.reload().Messages, "Half an ans"); n != 1 {
			t.Fatalf("the saved messages hold the failure %d times", n)
		}
	})
}

// A log saved before failures reached the messages (a failure entry, no
// message) is recognised on resume: the next request holds the failure
// once, and what the log held is not rewritten.
func TestLegacyFailureRecognisedOnResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, newScripted())
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		doc, err := transcript.NewDocument("c1", []transcript.Entry{
			{ID: "u1", Content: transcript.User{Text: "go"}, Timestamp: at},
			{ID: "a1", Content: transcript.Agent{Markdown: "Half an ans"}, Timestamp: at},
			{ID: "f1", Content: transcript.Failure{Reason: "provider", Headline: "The model provider reported an error.", Detail: "503"}, Timestamp: at},
		})
		must(t, err)
		must(t, h.log.Save(doc, []message.Message{message.Text(message.User, "go")}))
		before, err := os.ReadFile(h.path)
		must(t, err)
		must(t, h.log.Close())

		p := newScripted(reply(text("ok"), done()))
		log, err := history.Open(h.path)
		must(t, err)
		defer log.Close()
		conv, err := log.Load()
		must(t, err)
		store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
		eng := engine.New(store, p, engine.WithSaver(log))
		defer eng.Close()
		must(t, eng.Resume(conv.Document, conv.Messages))
		if _, err := eng.Send(context.Background(), "c2", "what happened?", nil); err != nil {
			t.Fatal(err)
		}
		eng.Wait(context.Background(), "c2")
		if n := countFailures(p.reqs()[0].Messages, "Half an ans"); n != 1 {
			t.Fatalf("the resumed request holds the failure %d times: %+v", n, p.reqs()[0].Messages)
		}
		after, err := os.ReadFile(h.path)
		must(t, err)
		if !bytes.HasPrefix(after, before) || bytes.Contains(after[len(before):], []byte(`"type":"rewrite"`)) {
			t.Fatalf("the log was rewritten:\n%s", after[len(before):])
		}
	})
}
