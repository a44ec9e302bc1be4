package server

import (
	"io"
	"net/http"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/demo"
)

func getWorkspace(t *testing.T, url string) workspaceInfo {
	t.Helper()
	resp, err := http.Get(url + "/api/v2/workspace")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET workspace: %d %s", resp.StatusCode, body)
	}
	var w workspaceInfo
	if err := json.Unmarshal(body, &w, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("workspace: %v: %s", err, body)
	}
	return w
}

// The first screen's facts: the tools' folder, the data folder and whether
// the default model is the demo, for a server on the demo model, one whose
// default is another model, and one without an engine.
func TestWorkspaceSaysWhereTheToolsWork(t *testing.T) {
	work := t.TempDir()
	ts := newTestServer(t, Options{Turns: &TurnsOptions{Provider: demo.New(demo.Options{Name: "demo"}), Model: "folio-demo", Workspace: work}})
	if w := getWorkspace(t, ts.url); w.Folder != work || w.Data != ts.data || !w.Demo {
		t.Fatalf("demo server: %+v, want folder %s, data %s, demo", w, work, ts.data)
	}

	ms, _, _ := newModelsServer(t)
	if w := getWorkspace(t, ms.url); w.Folder == "" || w.Demo != true {
		t.Fatalf("models server (demo default): %+v", w)
	}

	real := &TurnsOptions{Provider: demo.New(demo.Options{Name: "local"}), Model: "m", Workspace: work,
		Models: []ModelOption{{ModelInfo: ModelInfo{Name: "local/m", Provider: "local", Model: "m", Default: true},
			Config: provider.Config{Name: "local", Type: provider.TypeOpenAI, Model: "m"}}}}
	if w := getWorkspace(t, newTestServer(t, Options{Turns: real}).url); w.Demo {
		t.Fatalf("a server whose default is an OpenAI model says demo: %+v", w)
	}

	bare := newTestServer(t, Options{})
	if w := getWorkspace(t, bare.url); w.Folder != "" || w.Demo || w.Data != bare.data {
		t.Fatalf("server without an engine: %+v", w)
	}
}
