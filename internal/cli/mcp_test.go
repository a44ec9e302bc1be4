package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

var (
	buildOnce sync.Once
	builtDir  string
	buildErr  error
)

// builtBinaries builds folio and examples/mcpdemo once for the package.
func builtBinaries(t *testing.T) (folio, demo string) {
	t.Helper()
	buildOnce.Do(func() {
		builtDir, buildErr = os.MkdirTemp("", "folio-mcp-test")
		if buildErr != nil {
			return
		}
		for _, b := range [][2]string{{"folio", "github.com/foliodev/folio/cmd/folio"}, {"mcpdemo", "github.com/foliodev/folio/examples/mcpdemo"}} {
			if out, err := exec.Command("go", "build", "-o", filepath.Join(builtDir, b[0]), b[1]).CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(builtDir, "folio"), filepath.Join(builtDir, "mcpdemo")
}

// writeConversation saves a titled conversation of n user/agent pairs.
func writeConversation(t *testing.T, data, id, title string, n int) {
	t.Helper()
	path, err := history.Path(data, id)
	if err != nil {
		t.Fatal(err)
	}
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var es []transcript.Entry
	var msgs []message.Message
	for i := range n {
		q, a := fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i)
		es = append(es, transcript.Entry{ID: fmt.Sprintf("u%d", i), Content: transcript.User{Text: q}, Timestamp: time.Unix(1e9, 0)},
			transcript.Entry{ID: fmt.Sprintf("a%d", i), Content: transcript.Agent{Markdown: a}, Timestamp: time.Unix(1e9, 0)})
		msgs = append(msgs, message.Message{Role: message.User, Content: q}, message.Message{Role: message.Assistant, Content: a})
	}
	doc, err := transcript.NewDocument(id, es)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(doc, msgs); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle(title); err != nil {
		t.Fatal(err)
	}
}

// The real binary's `folio mcp serve`, driven by the SDK's client over
// stdio: it lists the conversations, finds one by title and pages it.
func TestMCPServeWithTheSDKClient(t *testing.T) {
	folio, _ := builtBinaries(t)
	data := t.TempDir()
	writeConversation(t, data, "c-trip", "Trip plans for June", 5)
	writeConversation(t, data, "c-bug", "Fix the parser bug", 1)

	cmd := exec.Command(folio, "mcp", "serve", "--data", data)
	client := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
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
	// What the tools answer, as a client decodes it.
	type conversationList struct {
		Conversations []struct {
			ID      string `json:"id"`
			Entries int    `json:"entries"`
		} `json:"conversations"`
		Total int `json:"total"`
	}
	type entryPage struct {
		Title   string `json:"title"`
		Total   int    `json:"total"`
		Offset  int    `json:"offset"`
		Next    int    `json:"next"`
		Entries []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"entries"`
	}
	var list conversationList
	call("list_conversations", map[string]any{}, &list)
	if list.Total != 2 || len(list.Conversations) != 2 {
		t.Fatalf("list %+v", list)
	}
	var found conversationList
	call("search_titles", map[string]any{"query": "TRIP june"}, &found)
	if len(found.Conversations) != 1 || found.Conversations[0].ID != "c-trip" || found.Conversations[0].Entries != 10 {
		t.Fatalf("search %+v", found)
	}
	var page entryPage
	call("read_conversation", map[string]any{"id": "c-trip", "offset": 2, "limit": 4}, &page)
	if page.Total != 10 || page.Offset != 2 || page.Next != 6 || len(page.Entries) != 4 || page.Title != "Trip plans for June" {
		t.Fatalf("page %+v", page)
	}
	if e := page.Entries[0]; e.Kind != "user" || e.Text != "question 1" || page.Entries[1].Text != "answer 1" {
		t.Fatalf("entries %+v", page.Entries)
	}
	var last entryPage
	call("read_conversation", map[string]any{"id": "c-trip", "offset": page.Next, "limit": 200}, &last)
	if len(last.Entries) != 4 || last.Next != 0 {
		t.Fatalf("last page %+v", last)
	}
	// A bad ID is an error the client sees, not a crash.
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "read_conversation", Arguments: map[string]any{"id": "../etc"}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatalf("a bad ID was answered: %+v", res)
	}
	// Read-only: nothing was written to the logs.
	for _, id := range []string{"c-trip", "c-bug"} {
		p, _ := history.Path(data, id)
		c, err := history.ReadFile(p)
		if err != nil || len(c.Document.Entries()) == 0 {
			t.Fatalf("%s: %v", id, err)
		}
	}
}

// folio mcp ls starts each server and lists its tools; it names the
// variables a server reads, never their values.
func TestMCPList(t *testing.T) {
	_, demo := builtBinaries(t)
	data := t.TempDir()
	cfg := fmt.Sprintf(`{"mcpServers":{"demo":{"command":%q,"env":{"API_KEY":"${MCPLS_SECRET}"}},"down":{"command":"/nonexistent/server"}}}`, demo)
	if err := os.WriteFile(filepath.Join(data, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPLS_SECRET", "topsecret-value")
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), []string{"mcp", "ls", "--data", data}, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	got := out.String()
	for _, w := range []string{"demo", "stdio", "running", "demo__progress", "demo__fail", "MCPLS_SECRET", "down", "failed"} {
		if !strings.Contains(got, w) {
			t.Errorf("mcp ls lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got+errOut.String(), "topsecret") {
		t.Fatalf("mcp ls printed a secret:\n%s", got)
	}
	out.Reset()
	if err := Run(context.Background(), []string{"mcp", "ls", "--json", "--data", data}, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var infos []mcpServerInfo
	if err := json.Unmarshal(out.Bytes(), &infos); err != nil || len(infos) != 2 || len(infos[0].Tools) != 2 {
		t.Fatalf("%v %+v", err, infos)
	}
	// A literal secret in the file is refused, without quoting it.
	bad := `{"mcpServers":{"gh":{"url":"https://example.test/mcp","headers":{"Authorization":"Bearer ghp_literal"}}}}`
	if err := os.WriteFile(filepath.Join(data, "config.json"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), []string{"mcp", "ls", "--data", data}, strings.NewReader(""), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "Authorization") || strings.Contains(err.Error(), "ghp_literal") {
		t.Fatalf("err = %v", err)
	}
}
