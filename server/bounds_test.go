package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/server/pager"
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
	gone := ts.lookupConv("c")
	if gone == nil {
		t.Fatal("a followed conversation has no live state")
	}
	if f := c.call(map[string]any{"type": "unfollow", "conversation": "c"}); f.Type == "error" {
		t.Fatalf("unfollow: %s", f.raw)
	}
	if ts.lookupConv("c") != nil {
		t.Fatal("an unfollowed conversation kept its live state")
	}
	// Whoever found it just before it went must look it up again: a
	// follower or an engine on it would be on a conversation nobody
	// publishes to.
	if gone.subscribe(&conn{}) {
		t.Fatal("an evicted conversation took a subscriber")
	}
	if _, err := gone.engine(nil); !errors.Is(err, errEvicted) {
		t.Fatalf("an evicted conversation opened an engine: %v", err)
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
	// The close frame can only follow the frame being written, and this
	// client reads nothing until the publishing is done, so under load the
	// server may give up waiting and drop the TCP connection instead: what
	// must hold is that the server closed it for lagging (4008).
	closedWith := make(chan websocket.StatusCode, 1)
	ts.setOnConnClosed(func(code websocket.StatusCode) { closedWith <- code })
	big := strings.Repeat("x", 1<<20)
	for i := range 40 { // 40 MiB, 40 frames
		e := transcript.Entry{ID: "big-" + itoa(i), Content: transcript.Agent{Markdown: big}, Timestamp: tsAt(i)}
		must(t, ts.Publish("c", Change{Op: OpSettle, Entry: e}))
	}
	for {
		_, _, err := ws.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == 4008 {
				return
			}
			select {
			case code := <-closedWith:
				if code != 4008 {
					t.Fatalf("server closed the connection with %d (client saw %v), want 4008", code, err)
				}
			case <-ctx.Done():
				t.Fatalf("client saw %v and the server never closed the connection", err)
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

// blockingEngine holds every command until released.
type blockingEngine struct{ release chan struct{} }

func (e *blockingEngine) Receipt(conversation, commandID string) Receipt {
	return Receipt{CommandID: commandID, Conversation: conversation, State: transcript.CommandUnknown}
}

func (e *blockingEngine) Do(ctx context.Context, cmd Command) (Receipt, error) {
	<-e.release
	return Receipt{State: transcript.CommandDone}, nil
}

// TestCommandsDoNotStallTheConnection: while a command is held in the
// engine (as the first command of a huge conversation is while its log
// loads), the same connection's pings, pages and commands on another
// conversation are answered.
func TestCommandsDoNotStallTheConnection(t *testing.T) {
	eng := &blockingEngine{release: make(chan struct{})}
	ts := newTestServer(t, Options{Engine: eng})
	ts.writeGen(t, "big", 50, 1)
	ts.writeGen(t, "other", 5, 2)
	c := ts.dial(t)
	snap := c.open("big")
	c.write([]byte(`{"type":"send","id":"s1","conversation":"big","commandId":"k1","text":"hi"}`))
	c.write([]byte(`{"type":"send","id":"s2","conversation":"big","commandId":"k2","text":"next"}`))
	if f := c.call(map[string]any{"type": "ping"}); f.Type != "pong" {
		t.Fatalf("ping: %s", f.raw)
	}
	if f := c.page(snap.Token, "big", "latest", "before", 4096); f.Type != "page" {
		t.Fatalf("page: %s", f.raw)
	}
	for _, f := range c.held {
		if f.Re == "s1" || f.Re == "s2" {
			t.Fatalf("a held command answered: %s", f.raw)
		}
	}
	close(eng.release)
	// The conversation's commands answer in the order they were sent.
	first := c.await(func(f frame) bool { return f.Re == "s1" || f.Re == "s2" })
	if first.Re != "s1" {
		t.Fatalf("commands answered out of order: %s first", first.Re)
	}
	c.await(func(f frame) bool { return f.Re == "s2" })
}

// TestLargeCatchUpIsPagedNotSent: after 5,000 appends since the shared
// capture, a new open does not carry them all in its answer (it would be
// megabytes): it gets a fresh capture and pages them, and no frame is
// larger than the largest page.
func TestLargeCatchUpIsPagedNotSent(t *testing.T) {
	ts := newTestServer(t, Options{FollowInterval: 1 << 40})
	path := ts.writeGen(t, "c", 10, 1)
	a := ts.dial(t)
	a.open("c")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	pad := strings.Repeat("p", 1000)
	var buf strings.Builder
	for i := range 5000 {
		buf.WriteString(appendRecord(t, userEntry("n-"+itoa(i), pad)) + "\n")
	}
	_, err = f.WriteString(buf.String())
	must(t, err)
	f.Close()
	cv := ts.conv("c")
	cv.mu.Lock()
	cv.pollLocked()
	cv.mu.Unlock()
	b := ts.dial(t)
	s := b.open("c")
	if len(s.raw) > pager.MaxBudget {
		t.Fatalf("the open's answer is %d bytes, over the %d page maximum", len(s.raw), pager.MaxBudget)
	}
	if s.Entries < 5010 {
		t.Fatalf("the snapshot holds %d entries; the appends should be in its pages", s.Entries)
	}
	for _, fr := range a.held {
		if len(fr.raw) > pager.MaxBudget {
			t.Fatalf("a %d-byte frame", len(fr.raw))
		}
	}
}
