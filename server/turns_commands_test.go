package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// These tests run each command kind on the real engine: steer, send with
// an attachment, approve and deny, retry, stop a retry.

func TestSteerAppliesInsideTheRunningTurn(t *testing.T) {
	ts, _ := newTurnsServer(t, 300, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	if rc := c.call(map[string]any{"type": "steer", "conversation": id, "commandId": "s0", "text": "shorter"}).Receipt; rc.Code != "not-running" {
		t.Fatalf("steer with no turn: %+v", rc)
	}
	c.send(id, "k1", "write a long essay")
	c.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "upsert" && f.Open && bytes.Contains(f.Entry, []byte(`"kind":"agent"`))
	})
	if rc := c.call(map[string]any{"type": "steer", "conversation": id, "commandId": "s1", "text": "hello instead"}).Receipt; rc.State != transcript.CommandRunning {
		t.Fatalf("steer: %+v", rc)
	}
	if rc := c.finished("s1"); rc.State != transcript.CommandApplied {
		t.Fatalf("steer receipt: %+v", rc)
	}
	if rc := c.finished("k1"); rc.State != transcript.CommandDone || rc.Code != "" {
		t.Fatalf("turn: %+v", rc)
	}
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	k := kinds(conv.Document.Entries())
	if !strings.Contains(k, "agent steering") || strings.Count(k, "user") != 1 {
		t.Fatalf("the steer is not between the reply's parts: %s", k)
	}
}

func TestSendWithAttachment(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "", testToken)
	id := ts.create(t)
	req, _ := http.NewRequest(http.MethodPost, ts.url+"/api/v2/conversations/"+id+"/attachments?name=notes.txt", strings.NewReader("the word is plum"))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var up struct {
		Attachment Attachment `json:"attachment"`
	}
	err = json.UnmarshalRead(resp.Body, &up, json.RejectUnknownMembers(false))
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %v", resp.StatusCode, err)
	}
	c := ts.dial(t)
	c.open(id)
	bad := c.call(map[string]any{"type": "send", "conversation": id, "commandId": "k0", "text": "hi", "attachments": []string{"a-nope"}})
	if bad.Receipt.Code != "not-found" {
		t.Fatalf("unknown attachment: %s", bad.raw)
	}
	f := c.call(map[string]any{"type": "send", "conversation": id, "commandId": "k1", "text": "read this", "attachments": []string{up.Attachment.ID}})
	if f.Receipt.State == transcript.CommandRejected {
		t.Fatalf("send: %s", f.raw)
	}
	c.finished("k1")
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Messages) == 0 || !strings.Contains(conv.Messages[0].Content, "the word is plum") || !strings.Contains(conv.Messages[0].Content, "notes.txt") {
		t.Fatalf("the model did not get the attachment: %+v", conv.Messages)
	}
}

func TestDenyAndRetryOnce(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "a1", "list the files in this folder")
	ap := c.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "approvals" && bytes.Contains(f.raw, []byte(`"shell"`))
	}).control(t)
	inv := ap.Approvals[0].InvocationID
	if rc := c.call(map[string]any{"type": "approve", "conversation": id, "commandId": "d1", "invocationId": inv, "allow": false}).Receipt; rc.State != transcript.CommandDone {
		t.Fatalf("deny: %+v", rc)
	}
	for {
		f := c.await(func(f frame) bool { return f.Type == "event" && f.Op == "settle" })
		if e := f.entry(t); e.ID == inv {
			if st := e.Content.(transcript.Tool).Receipt.Status; st != transcript.ToolDenied {
				t.Fatalf("denied call settled as %s", st)
			}
			break
		}
	}
	c.finished("a1")

	// A failure that happens once: retry runs the turn again and succeeds.
	c.send(id, "f1", "/demo fail transport once")
	if rc := c.finished("f1"); rc.State != transcript.CommandFailed {
		t.Fatalf("first attempt: %+v", rc)
	}
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	failure := lastFailure(conv.Document)
	if failure == "" {
		t.Fatalf("no failure saved: %s", kinds(conv.Document.Entries()))
	}
	if rc := c.call(map[string]any{"type": "retry", "conversation": id, "commandId": "r1", "failureId": failure}).Receipt; rc.State == transcript.CommandRejected {
		t.Fatalf("retry: %+v", rc)
	}
	if rc := c.finished("r1"); rc.State != transcript.CommandDone || rc.Code != "" {
		t.Fatalf("retry: %+v", rc)
	}
}

// An ephemeral presentation shows only while its invocation is open: the
// settle drops it, and a late value cannot bring it back.
func TestEphemeralPresentationEndsWithItsInvocation(t *testing.T) {
	ts := newTestServer(t, Options{})
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	open := transcript.Entry{ID: "t-1", Timestamp: tsAt(1), Content: transcript.Tool{InvocationID: "t-1",
		Receipt: transcript.ToolReceipt{App: "shell", Summary: "shell", Status: transcript.ToolFailed, Reason: "running", NotDone: "the call did not complete"}}}
	if err := ts.Publish(id, Change{Op: OpUpsert, Entry: open}); err != nil {
		t.Fatal(err)
	}
	spin := &transcript.Presentation{Schema: "spinner", Version: 1, Revision: 1, Payload: transcript.RawJSON(`{"frame":1}`)}
	if err := ts.Publish(id, Change{Op: OpPresentation, EntryID: "t-1", InvocationID: "t-1", Presentation: spin, Ephemeral: true}); err != nil {
		t.Fatal(err)
	}
	c.event("presentation")
	mid := ts.dial(t).open(id)
	if mid.Checkpoint == nil || len(mid.Checkpoint.Presentations) != 1 {
		t.Fatalf("an open invocation's ephemeral value is not in the checkpoint: %s", mid.raw)
	}

	done := open
	done.Content = transcript.Tool{InvocationID: "t-1", Receipt: transcript.ToolReceipt{App: "shell", Summary: "shell", Status: transcript.ToolOK}}
	if err := ts.Publish(id, Change{Op: OpSettle, Entry: done}); err != nil {
		t.Fatal(err)
	}
	f := c.event("settle")
	if bytes.Contains(f.Entry, []byte("spinner")) {
		t.Fatalf("the ephemeral value outlived its invocation: %s", f.Entry)
	}
	late := &transcript.Presentation{Schema: "spinner", Version: 1, Revision: 9, Payload: transcript.RawJSON(`{"frame":9}`)}
	ts.Publish(id, Change{Op: OpPresentation, EntryID: "t-1", InvocationID: "t-1", Presentation: late, Ephemeral: true})
	after := ts.dial(t).open(id)
	if bytes.Contains(after.raw, []byte("spinner")) {
		t.Fatalf("a closed invocation's ephemeral value reached a new tab: %s", after.raw)
	}
	if r := c.call(map[string]any{"type": "ping"}); r.Type != "pong" {
		t.Fatal(string(r.raw))
	}
	for _, h := range c.held {
		if h.Op == "presentation" {
			t.Fatalf("a presentation event after closure: %s", h.raw)
		}
	}
}

// A retry writes no user entry: clients see it as the failed turn again,
// and a stop naming that turn stops the retry.
func TestStopARetry(t *testing.T) {
	ts, _ := newTurnsServer(t, 50, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "f1", "/demo fail transport once")
	turn := c.running().Turn
	if rc := c.finished("f1"); rc.State != transcript.CommandFailed {
		t.Fatalf("first attempt: %+v", rc)
	}
	c.held = nil // the first attempt's events
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	if rc := c.call(map[string]any{"type": "retry", "conversation": id, "commandId": "r1", "failureId": lastFailure(conv.Document)}).Receipt; rc.State == transcript.CommandRejected {
		t.Fatalf("retry: %+v", rc)
	}
	c.await(func(f frame) bool {
		if f.Type != "event" || f.Op != "turn" {
			return false
		}
		e := f.control(t)
		return e.State == "running" && e.Turn == turn
	})
	if rc := c.call(map[string]any{"type": "stop", "conversation": id, "commandId": "s1", "turn": turn}).Receipt; rc.State != transcript.CommandDone {
		t.Fatalf("stop the retry: %+v", rc)
	}
	if rc := c.finished("r1"); rc.State != transcript.CommandStopped {
		t.Fatalf("retry: %+v", rc)
	}
}

// TestApprovalForTheConversation allows the shell for the conversation:
// the next turn's shell call runs without asking. A scope the protocol
// does not know is refused.
func TestApprovalForTheConversation(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "a1", "list the files in this folder")
	ap := c.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "approvals" && bytes.Contains(f.raw, []byte(`"shell"`))
	}).control(t)
	inv := ap.Approvals[0].InvocationID
	bad := c.call(map[string]any{"type": "approve", "conversation": id, "commandId": "ap0", "invocationId": inv, "allow": true, "scope": "forever"})
	if bad.Type != "error" || bad.Code != "bad-request" {
		t.Fatalf("unknown scope: %s", bad.raw)
	}
	ok := c.call(map[string]any{"type": "approve", "conversation": id, "commandId": "ap1", "invocationId": inv, "allow": true, "scope": "conversation"})
	if ok.Receipt.State != transcript.CommandDone {
		t.Fatalf("approve: %s", ok.raw)
	}
	if rc := c.finished("a1"); rc.Code != "" {
		t.Fatalf("turn: %+v", rc)
	}
	c.held = nil
	c.send(id, "a2", "list the files in this folder")
	if rc := c.finished("a2"); rc.Code != "" {
		t.Fatalf("second turn: %+v", rc)
	}
	for _, f := range c.held {
		if f.Type == "event" && f.Op == "approvals" && bytes.Contains(f.raw, []byte(`"shell"`)) {
			t.Fatalf("the shell asked again after a conversation-wide allow: %s", f.raw)
		}
	}
}
