package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// This file is the server's side of conversation branches: the edit and
// select-branch commands on the real engine, branch metadata, the graph,
// and reading a branched log for captures and the follower.
//
// Captures and the follower read branched logs like any other, with
// package history's Scanner; its head's document is what they show.

// --- the engine bridge ------------------------------------------------------

var _ engine.Brancher = saver{}

// Head returns the branch the log's saves go to.
func (w saver) Head() (string, error) { return w.c.logHead() }

// logHead is the branch the open log's saves go to.
func (c *conversation) logHead() (head string, err error) {
	err = c.useLog(func(l *history.Log) (err error) {
		head, err = l.Head()
		return err
	})
	return head, err
}

// Fork writes a branch record through the conversation's log.
func (w saver) Fork(parent, afterEntry string, afterMessage int, title string) (branch string, err error) {
	err = w.c.useLog(func(l *history.Log) (err error) {
		branch, err = l.Fork(parent, afterEntry, afterMessage, title)
		return err
	})
	return branch, err
}

// SetHeadTail switches the log's head. It runs under the engine's lock.
// The saved document stays the old branch's until the next save: it only
// decides how long a failure entry waits, and waiting for a save is the
// safe side.
func (w saver) SetHeadTail(branch string, n int, widen *history.TailStart) (conv *history.Conversation, err error) {
	err = w.c.useLog(func(l *history.Log) (err error) {
		conv, err = l.SetHeadTail(branch, n, widen)
		return err
	})
	return conv, err
}

// LoadTail reads the end of the conversation through its log.
func (w saver) LoadTail(n int, widen *history.TailStart) (conv *history.Conversation, err error) {
	err = w.c.useLog(func(l *history.Log) (err error) {
		conv, err = l.LoadTail(n, widen)
		return err
	})
	return conv, err
}

// branchErr turns the engine's branch refusals into the server's.
func branchErr(err error) error {
	switch {
	case errors.Is(err, engine.ErrBusy):
		return fmt.Errorf("%w: %v", ErrBusy, err)
	case errors.Is(err, engine.ErrNotUserEntry), errors.Is(err, history.ErrUnknownBranch):
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	case errors.Is(err, engine.ErrCompacted), errors.Is(err, engine.ErrNoBranches):
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return err
}

// edit runs an edit command: edit-and-resend on a new branch.
func (c *conversation) edit(ctx context.Context, e *engine.Engine, cmd Command, tag []engine.CommandOption) (Receipt, error) {
	r, err := e.EditAndResend(ctx, cmd.CommandID, cmd.EntryID, cmd.Text, tag...)
	if errors.Is(err, engine.ErrEmpty) {
		return Receipt{State: transcript.CommandRejected, Code: "bad-request", Reason: "edit: the text is empty"}, nil
	}
	if errors.Is(err, engine.ErrConflict) {
		return Receipt{}, fmt.Errorf("%w: %v", ErrConflict, err)
	}
	if err != nil {
		return Receipt{}, branchErr(err)
	}
	head, err := c.logHead()
	if err != nil {
		return Receipt{}, err
	}
	if !r.Duplicate {
		c.catchUp() // the new branch's generation, before its head event
		_ = c.srv.Publish(c.id, Change{Op: OpHead, Head: head})
	}
	rc := receiptOf(c.id, r)
	rc.Head = head
	return rc, nil
}

// selectBranch runs a select-branch command.
func (c *conversation) selectBranch(e *engine.Engine, cmd Command, tag []engine.CommandOption) (Receipt, error) {
	r, err := e.Once(cmd.CommandID, func() error {
		cur, err := c.logHead()
		if err != nil || cmd.Head == cur {
			return err
		}
		if err := e.SelectBranch(cmd.Head); err != nil {
			return branchErr(err)
		}
		// The new generation goes out before the head event and the
		// receipt, not after them from the publisher's own pace.
		c.catchUp()
		_ = c.srv.Publish(c.id, Change{Op: OpHead, Head: cmd.Head})
		return nil
	}, tag...)
	if errors.Is(err, engine.ErrConflict) {
		return Receipt{}, fmt.Errorf("%w: %v", ErrConflict, err)
	}
	if err != nil {
		return Receipt{}, err
	}
	rc := receiptOf(c.id, r)
	rc.Head = cmd.Head
	return rc, nil
}

// --- metadata and the graph ---------------------------------------------

// Alternative is a place in the selected head where the conversation
// branched: the entry at that position in the selected head, every head
// with an entry of its own there (the branch it was first forked from,
// then the forks in creation order) and which of them the selected head
// shows. A client draws ‹ index+1/len(heads) › on that entry and selects
// heads[index±1] to move between them.
type Alternative struct {
	EntryID string   `json:"entryId"`
	Heads   []string `json:"heads"`
	Index   int      `json:"index"`
}

// branchesOf describes a conversation's branches.
func branchesOf(c *history.Conversation) []Branch {
	out := make([]Branch, 0, len(c.Branches))
	for _, b := range c.Branches {
		label := b.Title
		if label == "" {
			label = b.ID
		}
		br := Branch{Head: b.ID, Label: label, ForkedFrom: b.Parent, After: b.AfterEntry}
		if b.ID != history.Main {
			br.CreatedAt = string(transcript.AppendInstant(nil, b.Created))
		}
		out = append(out, br)
	}
	return out
}

// alternativesOf lists the selected head's alternatives: per fork point
// (the entry branches forked after), the heads with their own entry at the
// position that follows it.
func alternativesOf(c *history.Conversation) []Alternative {
	type group struct {
		after string
		heads []string
	}
	var groups []*group
	byAfter := map[string]*group{}
	for _, b := range c.Branches[1:] {
		g := byAfter[b.AfterEntry]
		if g == nil {
			g = &group{after: b.AfterEntry, heads: []string{b.Parent}}
			byAfter[b.AfterEntry] = g
			groups = append(groups, g)
		}
		if !slices.Contains(g.heads, b.ID) {
			g.heads = append(g.heads, b.ID)
		}
	}
	out := []Alternative{}
	for _, g := range groups {
		p := 0
		if g.after != "" {
			i, ok := c.Document.Index(g.after)
			if !ok {
				continue // this head does not pass through the fork point
			}
			p = i + 1
		}
		if p >= c.Document.Len() {
			continue
		}
		id := c.Document.At(p).ID
		for i, h := range g.heads {
			d, _, err := c.Branch(h)
			if err == nil && p < d.Len() && d.At(p).ID == id {
				out = append(out, Alternative{EntryID: id, Heads: g.heads, Index: i})
				break
			}
		}
	}
	return out
}

// branchInfo is a branched log's metadata, cached by file identity and size.
type branchInfo struct {
	fi           os.FileInfo
	size         int64
	head         string
	branches     []Branch
	alternatives []Alternative
}

// branchMeta reads a branched log whole for its metadata, unless the cached
// reading is still of the same file at the same size.
func (me *metaEntry) branchMeta(path string, fi os.FileInfo) (*branchInfo, error) {
	if bi := me.branched; bi != nil && os.SameFile(bi.fi, fi) && bi.size == fi.Size() {
		return bi, nil
	}
	c, err := history.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bi := &branchInfo{fi: fi, size: fi.Size(), head: c.Head, branches: branchesOf(c), alternatives: alternativesOf(c)}
	me.branched = bi
	return bi, nil
}

// graphOf is the whole graph of a log read with package history: its
// branches, what each compaction covers in the selected head, and the
// child conversations it links to.
func graphOf(id string, c *history.Conversation) Graph {
	g := Graph{ID: id, Head: c.Head, Branches: branchesOf(c), Compactions: []GraphCover{}, Links: []GraphLink{}}
	for _, e := range c.Document.All() {
		if cp, ok := e.Content.(transcript.Compaction); ok {
			g.Compactions = append(g.Compactions, GraphCover{EntryID: e.ID, FromID: cp.Covers.FromID, ToID: cp.Covers.ToID})
		}
	}
	covered := map[string]bool{}
	for _, gc := range g.Compactions {
		covered[gc.EntryID] = true
	}
	for _, u := range c.Unknown {
		switch u.Type {
		case "coverage":
			var r struct {
				Summary string `json:"summaryEntry"`
				Entries struct {
					FromID string `json:"fromId"`
					ToID   string `json:"toId"`
				} `json:"entries"`
			}
			if json.Unmarshal(u.Bytes, &r) == nil && r.Summary != "" && !covered[r.Summary] {
				covered[r.Summary] = true
				g.Compactions = append(g.Compactions, GraphCover{EntryID: r.Summary, FromID: r.Entries.FromID, ToID: r.Entries.ToID})
			}
		case "child":
			var r struct {
				Conversation string `json:"conversationId"`
				ParentEntry  string `json:"parentEntry"`
			}
			if json.Unmarshal(u.Bytes, &r) == nil && r.Conversation != "" {
				g.Links = append(g.Links, GraphLink{From: r.ParentEntry, Kind: "spawn", Conversation: r.Conversation})
			}
		}
	}
	return g
}
