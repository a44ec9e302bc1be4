package mcp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// writeTitledAt writes a conversation whose first prompt and title are at
// start, and, when later is after start, a second prompt then.
func writeTitledAt(t *testing.T, data, id string, start, later time.Time) {
	t.Helper()
	now := start
	l, err := history.Open(filepath.Join(data, "conversations", id+".jsonl"), history.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	es := []transcript.Entry{{ID: id + "-u1", Content: transcript.User{Text: "help"}, Timestamp: now}}
	msgs := []message.Message{message.Text(message.User, "help")}
	if err := l.SaveEntries(es, msgs); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle(id); err != nil {
		t.Fatal(err)
	}
	if !later.After(start) {
		return
	}
	now = later
	es = append(es, transcript.Entry{ID: id + "-u2", Content: transcript.User{Text: "more"}, Timestamp: now})
	if err := l.SaveEntries(es, append(msgs, message.Text(message.User, "more"))); err != nil {
		t.Fatal(err)
	}
}

// list_conversations dates each conversation by its last change and lists
// the one changed last first, though its title was set before the other
// conversation began.
func TestListConversationsUpdatedIsTheLastChange(t *testing.T) {
	data := t.TempDir()
	t0 := time.Date(2026, 12, 3, 7, 48, 56, 0, time.UTC)
	writeTitledAt(t, data, "continued", t0, t0.Add(37*time.Minute))
	writeTitledAt(t, data, "between", t0.Add(10*time.Minute), time.Time{})

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
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "list_conversations", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_conversations: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got struct {
		Conversations []struct {
			ID        string    `json:"id"`
			UpdatedAt time.Time `json:"updatedAt"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Conversations) != 2 || got.Conversations[0].ID != "continued" ||
		!got.Conversations[0].UpdatedAt.Equal(t0.Add(37*time.Minute)) || !got.Conversations[1].UpdatedAt.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("list_conversations: %s\nwant continued (updated %v) before between (%v)", b, t0.Add(37*time.Minute), t0.Add(10*time.Minute))
	}
}
