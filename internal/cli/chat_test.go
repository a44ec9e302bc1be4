package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/transcript"
)

// The chat's wiring over a real data folder: the picker lists saved
// conversations, resuming one hydrates the engine's store from its log,
// and the next turn saves into that same log; a new chat titles its log
// from the first message.
func TestChatSessionResumeAndSave(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	path, err := history.Path(data, "saved-1")
	if err != nil {
		t.Fatal(err)
	}
	log, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	doc, err := transcript.NewDocument("saved-1", []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "an old question"}, Timestamp: at},
		{ID: "a1", Content: transcript.Agent{Markdown: "An old answer."}, Timestamp: at},
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []message.Message{message.Text(message.User, "an old question"), message.Text(message.Assistant, "An old answer.")}
	if err := log.Save(doc, msgs); err != nil {
		t.Fatal(err)
	}
	if err := log.SetTitle("old times"); err != nil {
		t.Fatal(err)
	}
	log.Close()

	s := fastSession(t, data)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	list, err := s.list()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "saved-1" || list[0].Title != "old times" || list[0].Entries != 2 {
		t.Fatalf("the picker's list: %+v", list)
	}
	if err := s.resume("missing"); err == nil {
		t.Fatal("resuming a conversation that does not exist did not fail")
	}
	if err := s.resume("saved-1"); err != nil {
		t.Fatal(err)
	}
	snap := s.eng.Store().Snapshot()
	if snap.Document.Len() != 2 || snap.Document.At(0).ID != "u1" {
		t.Fatalf("the store after resume holds %d entries", snap.Document.Len())
	}
	ctx := context.Background()
	if _, err := s.eng.Send(ctx, "c1", "hello again", nil); err != nil {
		t.Fatal(err)
	}
	if r, err := s.eng.Wait(ctx, "c1"); err != nil || r.State != "done" {
		t.Fatalf("the turn after resume: %+v %v", r, err)
	}
	conv, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if conv.Document.Len() <= 2 || conv.Title != "old times" {
		t.Fatalf("the resumed log has %d entries and title %q after a turn; want more than 2 and the old title", conv.Document.Len(), conv.Title)
	}
}

// fastSession is a chat session over data with the demo model streaming as
// fast as it is read.
func fastSession(t *testing.T, data string) *chatSession {
	t.Helper()
	env := func(k string) string {
		if k == "FOLIO_DEMO_RATE" {
			return "0"
		}
		return ""
	}
	cfg, prov, err := provider.Load(provider.Options{DataDir: data, Provider: "demo", Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newChatSession(data, cfg, prov, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A new chat is saved under a fresh ID and titled from its first message by
// history.DisplayTitle, the rule listings use for untitled logs and the
// server uses for new web conversations: the message on one line.
func TestChatSessionTitlesNewConversation(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := fastSession(t, data)
	defer s.close()
	ctx := context.Background()
	if _, err := s.eng.Send(ctx, "c1", "plan the parser\nwith details", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.Wait(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	list, err := history.List(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != s.id || list[0].Title != "plan the parser with details" {
		t.Fatalf("saved conversations: %+v", list)
	}
}

// /new starts an empty conversation under a fresh ID and leaves the one
// before saved; /export writes the conversation as text into the tools'
// folder; /model lists the usable models and switches to one.
func TestChatSessionNewExportModel(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := fastSession(t, data)
	defer s.close()
	s.work = t.TempDir()
	s.popts = provider.Options{DataDir: data, Provider: "demo", Getenv: func(string) string { return "" }}
	ctx := context.Background()
	if _, err := s.eng.Send(ctx, "c1", "first conversation", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.Wait(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	path, err := s.export("text")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "› first conversation") || filepath.Dir(path) != s.work {
		t.Fatalf("export wrote %s: %q, %v", path, b, err)
	}
	// /export html writes the saved log's every entry into one HTML file.
	path, err = s.export("html")
	if err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(path)
	if err != nil || filepath.Dir(path) != s.work || !strings.HasSuffix(path, ".html") {
		t.Fatalf("export html wrote %s: %v", path, err)
	}
	if es := htmlEntries(t, string(b)); len(es) != s.eng.Store().Snapshot().Document.Len() || es[0].Content.(transcript.User).Text != "first conversation" {
		t.Fatalf("export html holds %d entries, the conversation %d", len(es), s.eng.Store().Snapshot().Document.Len())
	}
	first := s.id
	if err := s.newConversation(); err != nil {
		t.Fatal(err)
	}
	if s.id == first || s.eng.Store().Snapshot().Document.Len() != 0 {
		t.Fatalf("/new kept the conversation: id %s, %d entries", s.id, s.eng.Store().Snapshot().Document.Len())
	}
	if _, ok := s.saved(); ok {
		t.Fatal("the new, empty conversation counts as saved")
	}
	list, err := s.list()
	if err != nil || len(list) != 1 || list[0].ID != first {
		t.Fatalf("the first conversation is not listed after /new: %+v, %v", list, err)
	}
	models, err := s.models()
	if err != nil || len(models) == 0 || models[0] != "demo/folio-demo" {
		t.Fatalf("models: %q, %v", models, err)
	}
	if err := s.setModel(models[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.setModel("nope/none"); err == nil {
		t.Fatal("switching to an unknown model succeeded")
	}
}

// /export writes the whole conversation, also when the engine holds only
// its end (a resume's tail; a long session's window): the entries before
// it come from the log.
func TestChatExportReadsWhatTheEngineLeftOut(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	id := "20260101-000000-e0e0e0"
	path, err := history.Path(data, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	o := gen.Options{Messages: 400, Seed: 5}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Write(f, o); err != nil {
		t.Fatal(err)
	}
	f.Close()
	prompts := 0
	for e := range gen.Entries(o) {
		if _, ok := e.Content.(transcript.User); ok {
			prompts++
		}
	}
	s := fastSession(t, data)
	defer s.close()
	s.work = t.TempDir()
	if err := s.resume(id); err != nil {
		t.Fatal(err)
	}
	if s.eng.Store().Snapshot().Document.Elided() == 0 {
		t.Fatal("the resume loaded every entry; the test needs a tail")
	}
	out, err := s.export("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "› ") {
			got++
		}
	}
	if got != prompts {
		t.Fatalf("the export shows %d prompts; the conversation has %d", got, prompts)
	}
}
