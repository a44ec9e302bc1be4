package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/foliodev/folio/transcript"
)

// This file is the way of a command from a client's frame to the engine:
// checked (onCommand), queued behind the connection's earlier commands on
// the same conversation (inOrder), and handed to the engine (Server.do),
// whose receipt is the answer.

type commandFrame struct {
	envelope
	Conversation string   `json:"conversation"`
	CommandID    string   `json:"commandId"`
	Text         *string  `json:"text"`
	Attachments  []string `json:"attachments"`
	Head         string   `json:"head"`
	Turn         string   `json:"turn"`
	Reply        string   `json:"reply"`
	InvocationID string   `json:"invocationId"`
	Allow        *bool    `json:"allow"`
	Scope        string   `json:"scope"`
	FailureID    string   `json:"failureId"`
	EntryID      string   `json:"entryId"`
	Model        string   `json:"model"`
	Draft        string   `json:"draft"`
}

// needs lists, per command, the members it requires and allows.
var needs = map[string]struct{ required, allowed string }{
	cmdSend:         {"text", "text attachments head model"},
	cmdSteer:        {"text", "text"},
	cmdStop:         {"turn", "turn reply"},
	cmdApprove:      {"invocationId allow", "invocationId allow scope"},
	cmdRetry:        {"failureId", "failureId"},
	cmdEdit:         {"entryId text", "entryId text"},
	cmdSelectBranch: {"head", "head"},
	cmdDismiss:      {"draft", "draft"},
}

func (m *commandFrame) present() map[string]bool {
	return map[string]bool{
		"text": m.Text != nil, "attachments": m.Attachments != nil, "head": m.Head != "", "turn": m.Turn != "",
		"reply": m.Reply != "", "invocationId": m.InvocationID != "", "allow": m.Allow != nil,
		"scope":     m.Scope != "",
		"failureId": m.FailureID != "", "entryId": m.EntryID != "", "model": m.Model != "",
		"draft": m.Draft != "",
	}
}

func (c *conn) onCommand(env envelope, frame []byte) {
	var m commandFrame
	if !c.decode(env, frame, &m) {
		return
	}
	if err := validConversationID(m.Conversation); err != nil {
		c.protoError(env.ID, "invalid-id", err.Error(), false)
		return
	}
	if err := validCommandID(m.CommandID); err != nil {
		c.protoError(env.ID, "invalid-id", err.Error(), false)
		return
	}
	rule := needs[env.Type]
	have := m.present()
	for _, f := range strings.Fields(rule.required) {
		if !have[f] {
			c.protoError(env.ID, "bad-request", fmt.Sprintf("%s: %s is required", env.Type, f), false)
			return
		}
	}
	for f, ok := range have {
		if ok && !strings.Contains(" "+rule.allowed+" ", " "+f+" ") {
			c.protoError(env.ID, "bad-request", fmt.Sprintf("%s: %s is not allowed", env.Type, f), false)
			return
		}
	}
	if m.Text != nil && len(*m.Text) > maxText {
		c.protoError(env.ID, "too-large", fmt.Sprintf("text is %d bytes; the limit is %d", len(*m.Text), maxText), false)
		return
	}
	if len(m.Attachments) > maxAttachments {
		c.protoError(env.ID, "bad-request", fmt.Sprintf("at most %d attachments", maxAttachments), false)
		return
	}
	switch m.Scope {
	case "", scopeOnce, scopeConversation:
	default:
		c.protoError(env.ID, "bad-request", fmt.Sprintf("approve: scope must be %q or %q", scopeOnce, scopeConversation), false)
		return
	}
	if m.Model != "" {
		if err := c.srv.checkModel(m.Model); err != nil {
			c.protoError(env.ID, "unknown-model", err.Error(), false)
			return
		}
	}
	cmd := Command{Kind: env.Type, Conversation: m.Conversation, CommandID: m.CommandID, Head: m.Head,
		Turn: m.Turn, Reply: m.Reply, InvocationID: m.InvocationID, FailureID: m.FailureID, EntryID: m.EntryID,
		Model: m.Model, Scope: m.Scope, Draft: m.Draft}
	if m.Text != nil {
		cmd.Text = *m.Text
	}
	if m.Allow != nil {
		cmd.Allow = *m.Allow
	}
	for _, id := range m.Attachments {
		cmd.Attachments = append(cmd.Attachments, Attachment{ID: id})
	}
	// The command runs off the read loop (opening a conversation's engine
	// may read a long log), after the connection's earlier commands on the
	// same conversation, so pages, pings and other conversations' commands
	// never wait for it.
	if !c.inOrder(cmd.Conversation, func() {
		rc := c.srv.do(c.person(), cmd)
		c.reply(receiptFrame{"receipt", env.ID, rc})
	}) {
		c.protoError(env.ID, "too-many", fmt.Sprintf("at most %d commands may wait on one connection", maxCommands), false)
	}
}

// receiptFrame answers a command.
type receiptFrame struct {
	Type    string  `json:"type"`
	Re      string  `json:"re"`
	Receipt Receipt `json:"receipt"`
}

// lane holds one conversation's commands waiting behind the running one.
type lane struct{ waiting []func() }

// inOrder runs fn on its own goroutine after the connection's earlier
// commands on conversation. It reports false, running nothing, when
// maxCommands are already waiting or running.
func (c *conn) inOrder(conversation string, fn func()) bool {
	c.mu.Lock()
	if c.running >= maxCommands {
		c.mu.Unlock()
		return false
	}
	c.running++
	if c.lanes == nil {
		c.lanes = map[string]*lane{}
	}
	if l := c.lanes[conversation]; l != nil {
		l.waiting = append(l.waiting, fn)
		c.mu.Unlock()
		return true
	}
	l := &lane{}
	c.lanes[conversation] = l
	c.mu.Unlock()
	c.cmds.Add(1)
	go func() {
		defer c.cmds.Done()
		for {
			fn()
			c.mu.Lock()
			c.running--
			if len(l.waiting) == 0 {
				delete(c.lanes, conversation)
				c.mu.Unlock()
				return
			}
			fn, l.waiting = l.waiting[0], l.waiting[1:]
			c.mu.Unlock()
		}
	}()
	return true
}

// do hands a command to the engine, which makes it idempotent by command
// ID. A conversation that does not exist is not opened: the command is
// refused.
func (s *Server) do(ctx context.Context, cmd Command) Receipt {
	if s.eng == nil {
		return Receipt{CommandID: cmd.CommandID, Conversation: cmd.Conversation, Kind: cmd.Kind, State: transcript.CommandRejected,
			Code: "engine-unavailable", Reason: "this server has no engine; it only reads conversations"}
	}
	// A command from a person (the context carries who) on a conversation
	// that is not theirs is refused as if it did not exist; a command
	// forwarded by another replica was checked there.
	if viaLink(ctx) {
		return Receipt{CommandID: cmd.CommandID, Conversation: cmd.Conversation, Kind: cmd.Kind, State: transcript.CommandRejected,
			Code: "read-only", Reason: "a share link only shows the conversation"}
	}
	_, fromPerson := identityOf(ctx)
	if _, err := os.Stat(s.logPath(cmd.Conversation)); err != nil || (fromPerson && !s.mayAccess(ctx, cmd.Conversation)) {
		return rejection(cmd, fmt.Errorf("%w: no conversation %s", ErrNotFound, cmd.Conversation))
	}
	for i, a := range cmd.Attachments {
		full, err := s.attachment(cmd.Conversation, a.ID)
		if errors.Is(err, ErrNotFound) {
			return rejection(cmd, fmt.Errorf("attachment %q: %w", clip(a.ID), ErrNotFound))
		}
		if err != nil {
			if down := s.storeReachable(); down != nil {
				return rejection(cmd, down)
			}
			s.opts.Logger.Error("cannot read an attachment from the database", "conversation", cmd.Conversation, "err", err)
			return rejection(cmd, fmt.Errorf("attachment %q cannot be read", clip(a.ID)))
		}
		cmd.Attachments[i] = full
	}
	if err := s.storeReachable(); err != nil {
		return rejection(cmd, err)
	}
	rc, err := s.eng.Do(ctx, cmd)
	if errors.Is(err, ErrLocked) && s.rep.inbox != nil {
		rc, err = s.forward(ctx, cmd) // another replica's engine holds it
	}
	if err != nil {
		if down := s.storeReachable(); down != nil {
			err = fmt.Errorf("%w (%v)", down, err)
		}
		return rejection(cmd, err)
	}
	rc.CommandID, rc.Conversation, rc.Kind = cmd.CommandID, cmd.Conversation, cmd.Kind
	if rc.State == "" {
		rc.State = transcript.CommandRunning
	}
	return rc
}
