package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// A streamable-HTTP server on loopback: the header is built from the
// environment, progress arrives over the stream, and a wrong token leaves
// the server unavailable without the token in any message.
func TestStreamableHTTPServer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "http-test"}, nil)
	// The tool answers only once folio has shown its progress, since a
	// notification still in flight when the result lands is dropped.
	shown := make(chan struct{})
	var once sync.Once
	type args struct {
		Word string `json:"word"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "shout", Description: "Says the word loudly."},
		func(ctx context.Context, req *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 2; i++ {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2, Message: "warming up"})
				}
				select {
				case <-shown:
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(a.Word) + "!"}}}, nil, nil
		})
	var denied atomic.Int64
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			denied.Add(1)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	})) // on 127.0.0.1
	defer ts.Close()

	cfgs, err := parse(fmt.Appendf(nil, `{"mcpServers":{"web":{"url":%q,"headers":{"Authorization":"Bearer ${WEB_TOKEN}"}}}}`, ts.URL+"/mcp"), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WEB_TOKEN": "s3cret"}
	m := New(cfgs, withGetenv(func(k string) string { return env[k] }))
	defer m.Close()
	ts2, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.NewSet(ts2...)
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := set.Get("web__shout")
	if !ok {
		t.Fatalf("tools %v", set.Names())
	}
	host := toolview.New(toolview.WithCadence(0))
	defer host.Close()
	var updates atomic.Int64
	host.Subscribe(func(ch toolview.Change) {
		if ch.Open && ch.Value != nil && strings.Contains(string(ch.Value.Payload), `"warming up"`) {
			updates.Add(1)
			once.Do(func() { close(shown) })
		}
	})
	rec, err := host.Run(t.Context(), toolview.Spec{Tool: "web__shout", Producer: set.Manifest()}, []byte(`{"word":"hi"}`), tl.Run)
	if err != nil || rec.Outcome.Status != transcript.ToolOK || rec.Result.Text != "HI!" {
		t.Fatalf("%v %+v", err, rec)
	}
	if updates.Load() == 0 {
		t.Error("no progress arrived over HTTP")
	}
	if st := m.Status()[0]; st.Transport != "http" || st.Target != ts.URL+"/mcp" || st.State != StateRunning {
		t.Fatalf("status %+v", st)
	}

	// The wrong token: refused by the server, and never printed.
	env["WEB_TOKEN"] = "wrong-token-value"
	m2 := New(cfgs, withGetenv(func(k string) string { return env[k] }))
	defer m2.Close()
	if _, err := m2.Tools(t.Context()); err == nil || strings.Contains(err.Error(), "wrong-token-value") || denied.Load() == 0 {
		t.Fatalf("err = %v (denied %d)", err, denied.Load())
	}
	if st := m2.Status()[0]; st.State != StateFailed || strings.Contains(st.Error, "wrong-token-value") {
		t.Fatalf("status %+v", st)
	}
}

// A URL's query never reaches an error or the status: it may carry a key.
func TestURLQueryIsRedacted(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusNotFound)
	}))
	defer ts.Close()
	url := ts.URL + "/mcp?api_key=query-secret"
	m := New([]ServerConfig{{Name: "q", URL: url}})
	defer m.Close()
	_, err := m.Tools(t.Context())
	st := m.Status()[0]
	if err == nil || strings.Contains(err.Error(), "query-secret") || strings.Contains(st.Error+st.Target, "query-secret") {
		t.Fatalf("err %v, status %+v", err, st)
	}
}
