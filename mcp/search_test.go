package mcp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// TestSearchTool runs the history server in-process and calls its search
// tool the way another agent would.
func TestSearchTool(t *testing.T) {
	data := t.TempDir()
	l, err := history.Open(filepath.Join(data, "conversations", "c-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	es := []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "how do I rotate the gizmo keys?"}, Timestamp: t0},
		{ID: "a1", Content: transcript.Agent{Markdown: "Rotate them with `gizmo rotate`."}, Timestamp: t0},
	}
	d, err := transcript.NewDocument("c-1", es)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := newHistoryServer(data, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	sess, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "search", Arguments: map[string]any{"query": "gizmo role:answer"}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got searchAnswer
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Hits) != 1 || got.Hits[0].Conversation != "c-1" || got.Hits[0].Entry != "a1" || !strings.Contains(got.Hits[0].SnippetText("[", "]"), "[gizmo]") {
		t.Fatalf("hits %s", b)
	}
	// A malformed query is an error the agent reads, saying what is wrong.
	res, err = sess.CallTool(ctx, &sdk.CallToolParams{Name: "search", Arguments: map[string]any{"query": `"gizmo`}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatalf("a malformed query was answered: %+v", res)
	}
	if err == nil {
		b, _ := json.Marshal(res.Content)
		if !strings.Contains(string(b), "quote is not closed") {
			t.Fatalf("error %s", b)
		}
	}
	// The title search stays.
	if res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "search_titles", Arguments: map[string]any{"query": "gizmo"}}); err != nil || res.IsError {
		t.Fatalf("search_titles: %v %+v", err, res)
	}
}
