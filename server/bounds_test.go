package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/transcript"
)

// TestUnknownConversationsLeaveNoState asks for receipts and sends
// commands naming conversations that do not exist: the server's map of
// live conversations stays empty.
func TestUnknownConversationsLeaveNoState(t *testing.T) {
	ts := newTestServer(t, Options{Engine: &recordingEngine{}})
	for _, id := range []string{"nope1", "nope2", "nope3"} {
		resp, err := http.Get(ts.url + "/api/v2/conversations/" + id + "/commands/k1")
		must(t, err)
		resp.Body.Close()
	}
	c := ts.dial(t)
	f := c.call(map[string]any{"type": "send", "conversation": "nope4", "commandId": "k", "text": "hi"})
	if f.Receipt == nil || f.Receipt.Code != "not-found" {
		t.Fatalf("send to a missing conversation: %s", f.raw)
	}
	ts.mu.Lock()
	n := len(ts.convs)
	ts.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d conversations have live state", n)
	}
}

// TestIdleConversationsAreEvicted follows a conversation and stops: its
// live state goes (here at once; convIdle later in a real server).
func TestIdleConversationsAreEvicted(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.convIdle = 0
	ts.writeGen(t, "c", 10, 1)
	c := ts.dial(t)
	c.open("c")
	if ts.lookupConv("c") == nil {
		t.Fatal("a followed conversation has no live state")
	}
	if f := c.call(map[string]any{"type": "unfollow", "conversation": "c"}); f.Type == "error" {
		t.Fatalf("unfollow: %s", f.raw)
	}
	if ts.lookupConv("c") != nil {
		t.Fatal("an unfollowed conversation kept its live state")
	}
	// Opening it again reads the log again, under a new generation.
	if s := c.open("c"); s.Entries == 0 {
		t.Fatalf("reopen: %s", s.raw)
	}
}

// TestOutgoingQueueIsBoundedInBytes: a client that stops reading while
// large events pile up is closed with 4008 once its queue passes 16 MiB,
// long before the queue's frame bound.
func TestOutgoingQueueIsBoundedInBytes(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "c", 10, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.url, "http")+"/api/v2/ws", nil)
	must(t, err)
	defer ws.CloseNow()
	ws.SetReadLimit(64 << 20)
	must(t, ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","id":"h","protocol":`+itoa(ProtocolVersion)+`}`)))
	must(t, ws.Write(ctx, websocket.MessageText, []byte(`{"type":"open","id":"o","conversation":"c"}`)))
	// Wait for the open's answer, so the connection follows c.
	for {
		_, b, err := ws.Read(ctx)
		must(t, err)
		if strings.Contains(string(b), `"re":"o"`) {
			break
		}
	}
	big := strings.Repeat("x", 1<<20)
	for i := range 40 { // 40 MiB, 40 frames
		e := transcript.Entry{ID: "big-" + itoa(i), Content: transcript.Agent{Markdown: big}, Timestamp: tsAt(i)}
		must(t, ts.Publish("c", Change{Op: OpSettle, Entry: e}))
	}
	for {
		_, _, err := ws.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != 4008 {
				t.Fatalf("closed with %v, want 4008", err)
			}
			return
		}
	}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
