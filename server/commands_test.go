package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// recordingEngine is a stand-in for the turn engine (which lands later): it
// records commands and implements stop's compare-and-set on a turn it is told
// is running.
type recordingEngine struct {
	mu      sync.Mutex
	cmds    []Command
	running string // user entry ID of the running top-level turn
	reply   string
}

func (e *recordingEngine) Receipt(conversation, commandID string) Receipt {
	return Receipt{CommandID: commandID, Conversation: conversation, State: transcript.CommandUnknown}
}

func (e *recordingEngine) Do(ctx context.Context, cmd Command) (Receipt, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cmds = append(e.cmds, cmd)
	switch cmd.Kind {
	case cmdSend:
		if e.running != "" {
			return Receipt{State: transcript.CommandQueued}, nil
		}
		return Receipt{State: transcript.CommandRunning, EntryID: "u-" + cmd.CommandID}, nil
	case cmdStop:
		if e.running == "" {
			return Receipt{}, ErrNotRunning
		}
		if cmd.Turn != e.running || (cmd.Reply != "" && cmd.Reply != e.reply) {
			return Receipt{}, fmt.Errorf("turn %s is running: %w", e.running, ErrStopConflict)
		}
		e.running = ""
		return Receipt{State: transcript.CommandDone}, nil
	}
	return Receipt{State: transcript.CommandDone}, nil
}

func (e *recordingEngine) count(kind string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, c := range e.cmds {
		if c.Kind == kind {
			n++
		}
	}
	return n
}

// TestServerKeepsNoReceipts: the server hands every delivery of a command
// to the engine, which alone makes it idempotent, and answers receipt
// requests with what the engine says, not with a book of its own.
func TestServerKeepsNoReceipts(t *testing.T) {
	eng := &recordingEngine{running: "u-0"}
	ts := newTestServer(t, Options{Engine: eng})
	ts.writeGen(t, "c", 10, 1)
	c := ts.dial(t)
	send := map[string]any{"type": "send", "conversation": "c", "commandId": "k-1", "text": "hello"}
	if first := c.call(send); first.Type != "receipt" || first.Receipt.State != transcript.CommandQueued {
		t.Fatalf("first send: %s", first.raw)
	}
	c.call(send)
	if n := eng.count(cmdSend); n != 2 {
		t.Fatalf("the engine saw %d deliveries of k-1; want both", n)
	}
	// This engine remembers nothing: the server must not answer from
	// memory of its own.
	resp, err := http.Get(ts.url + "/api/v2/conversations/c/commands/k-1")
	must(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"state":"unknown"`) {
		t.Fatalf("a receipt the engine does not have: %s", b)
	}
}

func TestStopIsCompareAndSet(t *testing.T) {
	eng := &recordingEngine{running: "u-7", reply: "a-7"}
	ts := newTestServer(t, Options{Engine: eng})
	ts.writeGen(t, "c", 2, 1)
	c := ts.dial(t)
	stale := c.call(map[string]any{"type": "stop", "conversation": "c", "commandId": "s-1", "turn": "u-6"})
	if stale.Receipt.State != transcript.CommandRejected || stale.Receipt.Code != "stop-conflict" {
		t.Fatalf("stop of an older turn: %s", stale.raw)
	}
	ok := c.call(map[string]any{"type": "stop", "conversation": "c", "commandId": "s-2", "turn": "u-7", "reply": "a-7"})
	if ok.Receipt.State != transcript.CommandDone {
		t.Fatalf("stop of the running turn: %s", ok.raw)
	}
	idle := c.call(map[string]any{"type": "stop", "conversation": "c", "commandId": "s-3", "turn": "u-7"})
	if idle.Receipt.Code != "not-running" {
		t.Fatalf("stop when idle: %s", idle.raw)
	}
}

func TestCommandsWithoutEngineAndBadCommands(t *testing.T) {
	ts := newTestServer(t, Options{})
	c := ts.dial(t)
	f := c.call(map[string]any{"type": "send", "conversation": "c", "commandId": "k", "text": "hi"})
	if f.Receipt == nil || f.Receipt.Code != "engine-unavailable" {
		t.Fatalf("no engine: %s", f.raw)
	}
	for name, m := range map[string]map[string]any{
		"missing text":      {"type": "send", "conversation": "c", "commandId": "k2"},
		"member of another": {"type": "steer", "conversation": "c", "commandId": "k3", "text": "x", "turn": "u"},
		"bad command id":    {"type": "send", "conversation": "c", "commandId": "k 4", "text": "x"},
		"path traversal":    {"type": "send", "conversation": "../etc", "commandId": "k5", "text": "x"},
		"too long text":     {"type": "send", "conversation": "c", "commandId": "k6", "text": strings.Repeat("x", maxText+1)},
		"approve w/o allow": {"type": "approve", "conversation": "c", "commandId": "k7", "invocationId": "i"},
	} {
		f := c.call(m)
		if f.Type != "error" {
			t.Errorf("%s: %s", name, f.raw[:min(len(f.raw), 200)])
		}
	}
}
