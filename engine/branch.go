package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// Brancher is a Saver that keeps a conversation's branches (see
// docs/log-format.md); *history.Log implements it. EditAndResend and
// SelectBranch need the engine's saver to be one.
type Brancher interface {
	Saver
	TailLoader
	// Head is the branch saves go to.
	Head() (string, error)
	// Fork writes a new branch of parent sharing its entries through
	// afterEntry ("" for none) and its first afterMessage messages.
	Fork(parent, afterEntry string, afterMessage int, title string) (string, error)
	// SetHeadTail makes branch current and returns the end of its
	// conversation read afresh, as LoadTail does.
	SetHeadTail(branch string, n int, widen *history.TailStart) (*history.Conversation, error)
}

// Branch switches refuse while anything runs rather than stopping it: a
// stop is an action of its own with its own record (the stopped entry), and
// quietly ending a turn the person may still be watching, to leave the
// branch it belongs to, would lose work they did not ask to lose. The
// caller stops first (Stop) and then edits or switches.

// EditAndResend edits an earlier user message and sends it again: a branch
// forks just before the user entry userEntryID (sharing every entry before
// it and the model messages before its turn), becomes the head, the engine
// continues on it (the store is hydrated: a new generation, so late work of
// the old branch is dropped with its lease), and text is queued as that
// branch's next turn under commandID. The old branch stays in the log,
// unchanged.
//
// It returns ErrBusy while a turn runs or commands wait, ErrNoBranches when
// the saver keeps no branches, ErrNotUserEntry when userEntryID is not a
// user entry of the current branch, and ErrCompacted when the model no
// longer holds that turn's message verbatim. A repeated commandID returns
// the first receipt with Duplicate set and forks nothing.
func (e *Engine) EditAndResend(ctx context.Context, commandID, userEntryID, text string, opts ...CommandOption) (Receipt, error) {
	tag, r, done, err := e.admit(ctx, commandID, &text, opts)
	defer e.mu.Unlock()
	if done {
		return r, err
	}
	b, err := e.brancherLocked()
	if err != nil {
		return Receipt{}, err
	}
	doc := e.store.Snapshot().Document
	i, ok := doc.Index(userEntryID)
	head, err := b.Head()
	if err != nil {
		return Receipt{}, err
	}
	// The message count comes from the log, which is what the fork is
	// checked against; the engine's own list may hold answers to dangling
	// tool calls not saved yet. The log's tail reaches back to the edited
	// entry and the one before it.
	cur, err := b.LoadTail(tailEntries, reachStart(userEntryID))
	if err != nil {
		return Receipt{}, err
	}
	if !ok && doc.Elided() > 0 {
		// An engine opened on the log's tail (Open) holds only the end of
		// the document; the log's tail read back to the entry has it.
		doc = cur.Document
		i, ok = doc.Index(userEntryID)
	}
	if !ok || doc.At(i).Content.Kind() != transcript.KindUser {
		return Receipt{}, fmt.Errorf("%w: %q", ErrNotUserEntry, userEntryID)
	}
	after := ""
	if i > 0 {
		after = doc.At(i - 1).ID
	}
	n, err := turnStart(doc, i, cur.Messages)
	if err != nil {
		return Receipt{}, err
	}
	id, err := b.Fork(head, after, n, clipTitle(text))
	if err != nil {
		return Receipt{}, fmt.Errorf("engine: fork: %w", err)
	}
	conv, err := b.SetHeadTail(id, tailEntries, nil)
	if err != nil {
		return Receipt{}, fmt.Errorf("engine: switch to the new branch: %w", err)
	}
	if err := e.resumeLocked(conv.Document, conv.Messages); err != nil {
		return Receipt{}, err
	}
	c := &command{id: commandID, text: text, state: Queued, done: make(chan struct{})}
	if err := e.acceptLocked(c, tag); err != nil {
		return Receipt{}, err
	}
	e.commands[commandID] = c
	e.order = append(e.order, c)
	e.queue = append(e.queue, c)
	e.signalLocked()
	return e.receiptLocked(c), nil
}

// SelectBranch makes branch the head and continues the conversation on it:
// the store is hydrated with its document (a new generation) and its
// messages become the model's history. It returns ErrBusy while a turn runs
// or commands wait, ErrNoBranches when the saver keeps no branches, and
// history.ErrUnknownBranch for a branch the log does not have.
func (e *Engine) SelectBranch(branch string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	b, err := e.brancherLocked()
	if err != nil {
		return err
	}
	conv, err := b.SetHeadTail(branch, tailEntries, nil)
	if err != nil {
		return err
	}
	return e.resumeLocked(conv.Document, conv.Messages)
}

// reachStart is a TailStart that starts the window at the entry before
// entry id (a user entry), wherever it is, so an edit can fork there.
func reachStart(id string) *history.TailStart {
	return &history.TailStart{Kinds: []transcript.Kind{transcript.KindUser}, Start: func(picked []history.Picked, from int, _ []message.Message) (int, bool) {
		for _, p := range picked {
			if p.Entry.ID == id {
				return max(0, p.Index-1), false
			}
		}
		return 1 << 62, from > 0
	}}
}

func (e *Engine) brancherLocked() (Brancher, error) {
	if e.turn != nil || len(e.queue) > 0 {
		return nil, ErrBusy
	}
	b, ok := e.saver.(Brancher)
	if !ok {
		return nil, ErrNoBranches
	}
	return b, nil
}

// turnStart finds how many model messages come before the turn of the user
// entry at doc index i. Counting from the end is what survives a compacted
// context (the summary replaces the oldest messages) and a resumed one
// (the engine no longer knows which entry each message came with): every
// user and steering entry from i on has one user message, in order.
func turnStart(doc transcript.Document, i int, msgs []message.Message) (int, error) {
	want := 0
	for j := i; j < doc.Len(); j++ {
		if k := doc.At(j).Content.Kind(); k == transcript.KindUser || k == transcript.KindSteering {
			want++
		}
	}
	text := doc.At(i).Content.(transcript.User).Text
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role != message.User {
			continue
		}
		if want--; want == 0 {
			if !strings.HasPrefix(msgs[j].Content, text) {
				break
			}
			return j, nil
		}
	}
	return 0, ErrCompacted
}

// clipTitle names a branch after the first line of its edited message.
func clipTitle(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 60 {
		line = string(r[:59]) + "…"
	}
	return line
}
