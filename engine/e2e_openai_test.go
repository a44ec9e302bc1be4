package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/openai"
	"github.com/foliodev/folio/provider/providertest"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// openaiEngine wires the real OpenAI-compatible client to a loopback SSE
// server, the real tools in a temporary workspace and a real log.
func openaiEngine(t *testing.T, replies ...providertest.Reply) (*engine.Engine, *transcript.Store, *providertest.Server, string, string) {
	t.Helper()
	srv := providertest.NewServer(t, replies...)
	prov, err := openai.New(provider.Config{Name: "openai", Type: provider.TypeOpenAI, BaseURL: srv.URL, Model: "gpt-4o-mini", IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "README.md"), []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	path := filepath.Join(data, "conversations", "e2e.jsonl")
	log, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	set, err := tools.Builtin(work, nil)
	if err != nil {
		t.Fatal(err)
	}
	host := toolview.New(toolview.WithArtifactDir(filepath.Join(data, "artifacts")))
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, prov, engine.WithTools(set), engine.WithHost(host), engine.WithSaver(log),
		engine.WithModel("gpt-4o-mini"), engine.WithAllowed("shell"))
	t.Cleanup(func() { eng.Close(); host.Close() })
	return eng, store, srv, work, path
}

func waitTurn(t *testing.T, eng *engine.Engine, id, text string) engine.Receipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := eng.Send(ctx, id, text, nil); err != nil {
		t.Fatal(err)
	}
	r, err := eng.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// End to end through the real OpenAI client: parallel tool calls with
// fragmented arguments run the real shell and read_file tools, and the
// second step answers.
func TestEndToEndOpenAIClientWithRealTools(t *testing.T) {
	eng, store, srv, _, path := openaiEngine(t,
		providertest.Fixture(t, "testdata/openai_tools.sse"),
		providertest.Fixture(t, "testdata/openai_answer.sse"))
	r := waitTurn(t, eng, "c1", "what is here?")
	if r.State != engine.Done {
		t.Fatalf("%+v", r)
	}
	es := store.Snapshot().Document.Entries()
	if got := kinds(es); got != "user reasoning agent tool tool agent turn-receipt" {
		t.Fatalf("entries %s", got)
	}
	sh, rd := es[3].Content.(transcript.Tool), es[4].Content.(transcript.Tool)
	if sh.Receipt.Status != transcript.ToolOK || sh.Receipt.Args != `{"command": "ls"}` || sh.Presentation == nil ||
		sh.Presentation.Schema != toolschema.Shell || sh.Presentation.Artifact == nil || !sh.Presentation.Artifact.Final {
		t.Errorf("shell entry %+v %+v", sh.Receipt, sh.Presentation)
	}
	if rd.Receipt.Status != transcript.ToolOK || rd.Receipt.Summary != "read README.md" {
		t.Errorf("read entry %+v", rd.Receipt)
	}
	msgs := eng.Messages()
	if !strings.Contains(msgs[2].Content, "README.md") || !strings.Contains(msgs[3].Content, "hello from the workspace") {
		t.Errorf("tool results: %q / %q", msgs[2].Content, msgs[3].Content)
	}
	// The second request carried both results back to the server.
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1]), "call_sh") || !strings.Contains(string(reqs[1]), "hello from the workspace") {
		t.Errorf("second request: %s", reqs[len(reqs)-1])
	}
	rc := es[6].Content.(transcript.TurnReceipt)
	if len(rc.Steps) != 2 || *rc.Steps[0].CompletionTokens != 30 || *rc.Steps[1].PromptTokens != 200 {
		t.Errorf("receipt %+v", rc.Steps)
	}
	f, _ := os.Open(path)
	conv, err := history.Read(f)
	f.Close()
	if err != nil || kinds(conv.Document.Entries()) != kinds(es) || len(conv.Messages) != len(msgs) {
		t.Errorf("saved log differs: %v", err)
	}
}

// A failure mid-stream through the real client: the live document and the
// reloaded log hold the same partial answer and one failure entry.
func TestEndToEndOpenAIMidStreamFailure(t *testing.T) {
	eng, store, _, _, path := openaiEngine(t, providertest.Fixture(t, "testdata/openai_midstream_error.sse"))
	r := waitTurn(t, eng, "c1", "explain")
	if r.State != engine.Failed {
		t.Fatalf("%+v", r)
	}
	live := store.Snapshot().Document.Entries()
	if got := kinds(live); got != "user agent failure" {
		t.Fatalf("entries %s", got)
	}
	if live[1].Content.(transcript.Agent).Markdown != "Partial answer before the failure" {
		t.Errorf("partial %+v", live[1].Content)
	}
	f, _ := os.Open(path)
	conv, err := history.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	saved := conv.Document.Entries()
	if len(saved) != len(live) {
		t.Fatalf("saved %s", kinds(saved))
	}
	for i := range live {
		if live[i].ID != saved[i].ID || !reflect.DeepEqual(live[i].Content, saved[i].Content) {
			t.Errorf("entry %d: live %+v saved %+v", i, live[i].Content, saved[i].Content)
		}
	}
}
