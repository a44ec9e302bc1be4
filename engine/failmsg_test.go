package engine_test

import (
	"bytes"
	"context"
	"os"
	"slices"
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

// Jazz keeps a failed turn out of its messages and shows the failure as an
// error notice: its chat loop (packages/cli/src/chat-service.ts at
// lvndry/jazz 0b712f839c42962693ebec58af3cdf299656a295) catches the run's
// error, prints terminal.error("LLM request failed: …") and a log line,
// returns the history it started with, and skips the save, so the next
// save writes the failed prompt and its notices as UI entries only. A
// notice is {kind: "notice", text, tone} (packages/core/src/types/
// presentation-content-schema.ts at 08d8075f60a1f35cec74f5840ce51661610ffeb5);
// version 2 logs wrote it as {type: "error", message}. The fixtures are
// logs in those shapes: a turn that went through, a failed one (with a
// partial answer in version 3), a command answered by an error notice
// (not a model turn), and a turn that went through after them.
func TestJazzFailedTurnReachesTheModelOnce(t *testing.T) {
	cases := []struct {
		file, failed, headline, partial, next string
	}{
		{"conv-failed.jsonl", "And the rollback step?", "LLM request failed: 503 Service Unavailable", "The rollback step first", "Thanks. Which registry?"},
		{"conv-failed-v2.jsonl", "Friday evening", "LLM request failed: 429 Too Many Requests", "", "Saturday morning"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src, err := os.ReadFile("testdata/jazz/agent-1/" + c.file)
				must(t, err)
				dir := t.TempDir() + "/conversations/agent-1"
				must(t, os.MkdirAll(dir, 0o700))
				path := dir + "/" + c.file
				must(t, os.WriteFile(path, src, 0o600))

				for round := range 2 { // a second resume sees the same, once
					before, err := os.ReadFile(path)
					must(t, err)
					log, err := history.Open(path)
					must(t, err)
					conv, err := log.Load()
					must(t, err)
					p := newScripted(reply(text("noted"), done()))
					store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
					eng := engine.New(store, p, engine.WithSaver(log))
					must(t, eng.Resume(conv.Document, conv.Messages))
					if _, err := eng.Send(context.Background(), "c", "what went wrong?", nil); err != nil {
						t.Fatal(err)
					}
					eng.Wait(context.Background(), "c")
					eng.Close()
					must(t, log.Close())

					msgs := p.reqs()[0].Messages
					var got []string
					for _, m := range msgs {
						got = append(got, string(m.Role)+": "+m.Content)
					}
					fail := slices.IndexFunc(msgs, func(m message.Message) bool {
						return m.Role == message.Assistant && strings.Contains(m.Content, "This reply failed: "+c.headline)
					})
					if fail < 1 || countFailures(msgs, c.headline) != 1 {
						t.Fatalf("round %d: the request does not hold the failure once:\n%s", round, strings.Join(got, "\n"))
					}
					if prev := msgs[fail-1]; prev.Role != message.User || prev.Content != c.failed {
						t.Fatalf("round %d: the failure does not follow its prompt:\n%s", round, strings.Join(got, "\n"))
					}
					if !strings.HasPrefix(msgs[fail].Content, c.partial) {
						t.Fatalf("round %d: the failure lacks the partial answer %q: %q", round, c.partial, msgs[fail].Content)
					}
					if nxt := msgs[fail+1]; nxt.Role != message.User || nxt.Content != c.next {
						t.Fatalf("round %d: the failed turn is not where it happened:\n%s", round, strings.Join(got, "\n"))
					}
					if slices.ContainsFunc(msgs, func(m message.Message) bool { return strings.Contains(m.Content, "nonsense") }) {
						t.Fatalf("round %d: a Jazz command reached the model:\n%s", round, strings.Join(got, "\n"))
					}

					after, err := os.ReadFile(path)
					must(t, err)
					if bytes.Contains(after, []byte("This reply failed")) {
						t.Fatalf("round %d: the recognised failure was written to the log:\n%s", round, after)
					}
					// A version 2 log is upgraded by its first save, as Jazz
					// upgrades it too; from then on, and for version 3 from
					// the start, saving only appends.
					if !bytes.Contains(before, []byte(`"version":2`)) &&
						(!bytes.HasPrefix(after, before) || bytes.Contains(after[len(before):], []byte(`"type":"rewrite"`))) {
						t.Fatalf("round %d: the log was rewritten:\n%s", round, after)
					}
				}
			})
		})
	}
}

// A folio log from before failures reached the messages, with turns after
// the failed one: the failure is sent where it happened, once, on every
// resume, and never written.
func TestLegacyFailureMidLogKeepsItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, newScripted())
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		doc, err := transcript.NewDocument("c1", []transcript.Entry{
			{ID: "u1", Content: transcript.User{Text: "go"}, Timestamp: at},
			{ID: "a1", Content: transcript.Agent{Markdown: "Half an ans"}, Timestamp: at},
			{ID: "f1", Content: transcript.Failure{Reason: "provider", Headline: "The model provider reported an error.", Detail: "503"}, Timestamp: at},
			{ID: "n1", Content: transcript.Notice{Text: "could not save the conversation: disk full", Tone: transcript.ToneError}, Timestamp: at},
			{ID: "u2", Content: transcript.User{Text: "again"}, Timestamp: at},
			{ID: "a2", Content: transcript.Agent{Markdown: "fine"}, Timestamp: at},
			{ID: "n2", Content: transcript.Notice{Text: "could not save the conversation: disk full", Tone: transcript.ToneError}, Timestamp: at},
		})
		must(t, err)
		must(t, h.log.Save(doc, []message.Message{message.Text(message.User, "go"), message.Text(message.User, "again"), message.Text(message.Assistant, "fine")}))
		must(t, h.log.Close())
		for round := range 2 {
			p := newScripted(reply(text("ok"), done()))
			log, err := history.Open(h.path)
			must(t, err)
			conv, err := log.Load()
			must(t, err)
			eng := engine.New(transcript.NewStore(transcript.WithPacing(transcript.Pacing{})), p, engine.WithSaver(log))
			must(t, eng.Resume(conv.Document, conv.Messages))
			if _, err := eng.Send(context.Background(), "c", "and now?", nil); err != nil {
				t.Fatal(err)
			}
			eng.Wait(context.Background(), "c")
			eng.Close()
			must(t, log.Close())
			msgs := p.reqs()[0].Messages
			var got []string
			for _, m := range msgs {
				got = append(got, string(m.Role)+": "+m.Content)
			}
			want := []string{"user: go", "assistant: Half an ans\n\n[This reply failed: The model provider reported an error.]",
				"user: again", "assistant: fine", "user: and now?"}
			if round == 1 { // the first round's turn was saved as usual
				want = append(want, "assistant: ok", "user: and now?")
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("round %d: request messages\n%s\nwant\n%s", round, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	})
}

// Editing a prompt after a failed Jazz turn forks the conversation before
// the edited turn: the branch holds the failure once, where it happened,
// and the log's branch record counts only the messages the log holds.
func TestEditAfterAJazzFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, err := os.ReadFile("testdata/jazz/agent-1/conv-failed.jsonl")
		must(t, err)
		dir := t.TempDir() + "/conversations/agent-1"
		must(t, os.MkdirAll(dir, 0o700))
		path := dir + "/conv-failed.jsonl"
		must(t, os.WriteFile(path, src, 0o600))
		log, err := history.Open(path)
		must(t, err)
		defer log.Close()
		p := newScripted(reply(text("noted"), done()))
		store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
		eng := engine.New(store, p, engine.WithSaver(log))
		defer eng.Close()
		conv, err := eng.Open(log)
		must(t, err)
		d := conv.Document
		edited := ""
		for i := d.Len() - 1; i >= 0 && edited == ""; i-- {
			if u, ok := d.At(i).Content.(transcript.User); ok && u.Text == "Thanks. Which registry?" {
				edited = d.At(i).ID
			}
		}
		if edited == "" {
			t.Fatal("the fixture's last prompt is not in the tail")
		}
		ctx := context.Background()
		if _, err := eng.EditAndResend(ctx, "e", edited, "Which registry, then?"); err != nil {
			t.Fatal(err)
		}
		if r, err := eng.Wait(ctx, "e"); err != nil || r.State != engine.Done {
			t.Fatalf("turn: %+v %v", r, err)
		}
		msgs := p.reqs()[0].Messages
		var got []string
		for _, m := range msgs {
			got = append(got, string(m.Role)+": "+m.Content)
		}
		if n := countFailures(msgs, "LLM request failed: 503 Service Unavailable"); n != 1 {
			t.Fatalf("the branch's request holds the failure %d times:\n%s", n, strings.Join(got, "\n"))
		}
		if last := msgs[len(msgs)-1]; last.Content != "Which registry, then?" || slices.ContainsFunc(msgs, func(m message.Message) bool { return m.Content == "Thanks. Which registry?" }) {
			t.Fatalf("the request is not the edited branch's:\n%s", strings.Join(got, "\n"))
		}
		raw, err := history.ReadFile(path)
		must(t, err)
		b, ok := raw.BranchInfo(raw.Head)
		if !ok || b.Parent != history.Main {
			t.Fatalf("the head %q is not a fork of main", raw.Head)
		}
		_, mainMsgs, err := raw.Branch(history.Main)
		must(t, err)
		if b.AfterMessage > len(mainMsgs) || slices.ContainsFunc(mainMsgs[:b.AfterMessage], func(m message.Message) bool { return strings.Contains(m.Content, "This reply failed") }) {
			t.Fatalf("the fork shares %d of main's %d stored messages", b.AfterMessage, len(mainMsgs))
		}
		if bytes.Contains(mustRead(t, path), []byte("This reply failed")) {
			t.Fatal("the recognised failure was written to the log")
		}
	})
}
