package server

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/demo"
	_ "github.com/foliodev/folio/provider/openai" // registers the openai client for provider.New
	"github.com/foliodev/folio/provider/providertest"
	"github.com/foliodev/folio/transcript"
)

// newModelsServer runs real turns on the demo model by default, with a
// second model served by an OpenAI-compatible loopback server.
func newModelsServer(t *testing.T) (*testServer, *testTurns, *providertest.Server) {
	t.Helper()
	other := providertest.NewServer(t, providertest.Fixture(t, "../engine/testdata/openai_answer.sse"))
	topts := TurnsOptions{
		Provider:  demo.New(demo.Options{}),
		Model:     "folio-demo",
		Workspace: t.TempDir(),
		Models: []ModelOption{
			{ModelInfo: ModelInfo{Name: "demo/folio-demo", Provider: "demo", Model: "folio-demo", Default: true}},
			{ModelInfo: ModelInfo{Name: "local/small-model", Provider: "local", Model: "small-model"},
				Config: provider.Config{Name: "local", Type: provider.TypeOpenAI, BaseURL: other.URL, Model: "small-model",
					APIKey: "sk-secret-never-listed", IdleTimeout: 5 * time.Second}},
		},
	}
	ts := newTestServer(t, Options{Turns: &topts, DataDir: t.TempDir()})
	return ts, ts.engines(), other
}

type modelList struct {
	Models  []ModelInfo `json:"models"`
	Current string      `json:"current"`
}

func getModels(t *testing.T, url string) modelList {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET models: %d %s", resp.StatusCode, body)
	}
	if bytes.Contains(body, []byte("sk-secret")) || bytes.Contains(body, []byte("127.0.0.1")) {
		t.Fatalf("the model list leaks a key or base URL: %s", body)
	}
	var l modelList
	if err := json.Unmarshal(body, &l, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("models: %v: %s", err, body)
	}
	return l
}

// The list names every model without secrets; a send naming the second
// model runs that turn and the next one there; an unknown model is a
// protocol error and nothing is sent.
func TestModelsListAndSwitch(t *testing.T) {
	ts, turns, other := newModelsServer(t)
	conv := ts.create(t)
	l := getModels(t, ts.url+"/api/v2/models?conversation="+conv)
	if len(l.Models) != 2 || !l.Models[0].Default || l.Models[1].Default || l.Models[1].Name != "local/small-model" {
		t.Fatalf("models %+v", l.Models)
	}
	if l.Current != "demo/folio-demo" {
		t.Fatalf("current %q before any switch, want the default", l.Current)
	}

	c := ts.dial(t)
	c.open(conv)
	f := c.call(map[string]any{"type": "send", "conversation": conv, "commandId": "k0", "text": "hi", "model": "nope/none"})
	if f.Type != "error" || f.Code != "unknown-model" || !strings.Contains(f.Message, "local/small-model") {
		t.Fatalf("unknown model: %s", f.raw)
	}

	if rc := c.send(conv, "k1", "on the demo"); rc.State == transcript.CommandRejected {
		t.Fatalf("k1: %+v", rc)
	}
	if rc := c.finished("k1"); rc.Code != "" {
		t.Fatalf("k1 finished %+v", rc)
	}
	if n := len(other.Requests()); n != 0 {
		t.Fatalf("the default turn reached the other model (%d requests)", n)
	}
	f = c.call(map[string]any{"type": "send", "conversation": conv, "commandId": "k2", "text": "switch", "model": "local/small-model"})
	if f.Receipt == nil || f.Receipt.State == transcript.CommandRejected {
		t.Fatalf("k2: %s", f.raw)
	}
	if rc := c.finished("k2"); rc.Code != "" {
		t.Fatalf("k2 finished %+v", rc)
	}
	c.send(conv, "k3", "stays switched")
	c.finished("k3")
	reqs := other.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the other model got %d requests, want 2 (the switching send and the one after)", len(reqs))
	}
	for _, r := range reqs {
		if !bytes.Contains(r, []byte(`"small-model"`)) {
			t.Errorf("request asked %s", r)
		}
	}
	if l := getModels(t, ts.url+"/api/v2/models?conversation="+conv); l.Current != "local/small-model" {
		t.Errorf("current %q after the switch", l.Current)
	}

	// The engine closes (as when idle) and reopens on the next command: an
	// edit-and-resend, which names no model, still runs on the switched one.
	turns.forget(conv)
	var firstUser string
	for _, e := range c.pageAll(t, conv) {
		if _, ok := e.Content.(transcript.User); ok {
			firstUser = e.ID
			break
		}
	}
	f = c.call(map[string]any{"type": "edit", "conversation": conv, "commandId": "k4", "entryId": firstUser, "text": "edited"})
	if f.Receipt == nil || f.Receipt.State == transcript.CommandRejected {
		t.Fatalf("edit: %s", f.raw)
	}
	if rc := c.finished("k4"); rc.Code != "" {
		t.Fatalf("k4 finished %+v", rc)
	}
	if n := len(other.Requests()); n != 3 {
		t.Fatalf("after reopening, the edit's turn did not run on the switched model (%d requests there)", n)
	}
	resp, err := http.Get(ts.url + "/api/v2/models?conversation=../x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad conversation ID got %d", resp.StatusCode)
	}
}

// ConfiguredModels lists the selected provider first as the default, adds
// usable others, and skips a built-in that has no key.
func TestConfiguredModels(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"provider":"ollama","providers":{"ollama":{"type":"openai","baseURL":"http://127.0.0.1:11434/v1","model":"qwen3"}}}`
	if err := os.WriteFile(filepath.Join(dir, provider.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ANTHROPIC_API_KEY": "k"}
	ms, err := ConfiguredModels(provider.Options{DataDir: dir, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		s := m.Name
		if m.Default {
			s += "*"
		}
		got = append(got, s)
	}
	want := "ollama/qwen3* demo/folio-demo anthropic/claude-sonnet-4-5"
	if strings.Join(got, " ") != want {
		t.Fatalf("models %q, want %q (openai has no key and is left out)", strings.Join(got, " "), want)
	}
}
