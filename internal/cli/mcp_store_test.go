package cli

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/store/pgstore/pgtest"
)

// The real binary's `folio mcp serve --store`, driven by the SDK's client:
// its tools read the PostgreSQL store's conversations, and search answers
// from the search index in the store's database, not from a data folder.
func TestMCPServeStore(t *testing.T) {
	url := pgtest.URL(t)
	folio, _ := builtBinaries(t)
	src := t.TempDir()
	writeConversation(t, src, "c-trip", "Trip plans for June", 5)
	writeConversation(t, src, "c-bug", "Fix the parser bug", 1)
	if out, _, err := run(t, "log", "import", "--to", url, src); err != nil {
		t.Fatalf("import: %q %v", out, err)
	}
	// An empty data folder: everything the tools answer comes from the
	// store.
	data := t.TempDir()
	cmd := exec.Command(folio, "mcp", "serve", "--data", data, "--store", url)
	cmd.Env = append(os.Environ(), "FOLIO_DATABASE_URL=")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	call := func(name string, args any, out any) {
		t.Helper()
		res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v in %s", name, err, b)
		}
	}
	type conversationList struct {
		Conversations []struct {
			ID string `json:"id"`
		} `json:"conversations"`
		Total int `json:"total"`
	}
	var list conversationList
	call("list_conversations", map[string]any{}, &list)
	if list.Total != 2 {
		t.Fatalf("list %+v", list)
	}
	var found conversationList
	call("search_titles", map[string]any{"query": "parser"}, &found)
	if len(found.Conversations) != 1 || found.Conversations[0].ID != "c-bug" {
		t.Fatalf("search_titles %+v", found)
	}
	var hits struct {
		Hits []struct {
			Conversation string `json:"conversation"`
			Entry        string `json:"entry"`
			Snippet      []struct {
				Text string `json:"text"`
				Hit  bool   `json:"hit"`
			} `json:"snippet"`
		} `json:"hits"`
	}
	call("search", map[string]any{"query": `"answer 3"`}, &hits)
	if len(hits.Hits) != 1 || hits.Hits[0].Conversation != "c-trip" || hits.Hits[0].Entry != "a3" ||
		len(hits.Hits[0].Snippet) != 1 || hits.Hits[0].Snippet[0].Text != "answer 3" || !hits.Hits[0].Snippet[0].Hit {
		t.Fatalf("search %+v", hits)
	}
	var page struct {
		Total   int `json:"total"`
		Entries []struct {
			ID string `json:"id"`
		} `json:"entries"`
	}
	call("read_conversation", map[string]any{"id": hits.Hits[0].Conversation, "offset": 7, "limit": 1}, &page)
	if page.Total != 10 || len(page.Entries) != 1 || page.Entries[0].ID != "a3" {
		t.Fatalf("read_conversation %+v", page)
	}
	// The index lives in the store's database; the data folder has none.
	if _, err := os.Stat(data + "/search"); err == nil {
		t.Fatal("the data folder got a search index")
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "search", Arguments: map[string]any{"query": "colour:red"}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatalf("a malformed query was answered: %+v", res)
	}
	if err == nil {
		b, _ := json.Marshal(res.Content)
		if !strings.Contains(string(b), "unknown filter") {
			t.Fatalf("error %s", b)
		}
	}
}
