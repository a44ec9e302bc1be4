package server

import (
	"fmt"
	"os"
	"slices"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// This file is the server's side of conversation branches: the engine's
// way to branch the log (the edit and select-branch commands are in
// turns_dispatch.go), branch metadata, the graph,
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

// branchAlternative is a place in the selected head where the conversation
// branched: the entry at that position in the selected head, every head
// with an entry of its own there (the branch it was first forked from,
// then the forks in creation order) and which of them the selected head
// shows. A client draws ‹ index+1/len(heads) › on that entry and selects
// heads[index±1] to move between them.
type branchAlternative struct {
	EntryID string   `json:"entryId"`
	Heads   []string `json:"heads"`
	Index   int      `json:"index"`
}

// branchesOf describes a conversation's branches.
func branchesOf(branches []history.Branch) []listedBranch {
	out := make([]listedBranch, 0, len(branches))
	for _, b := range branches {
		label := b.Title
		if label == "" {
			label = b.ID
		}
		br := listedBranch{Head: b.ID, Label: label, ForkedFrom: b.Parent, After: b.AfterEntry}
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
func alternativesOf(c *history.Conversation) []branchAlternative {
	return alternatives(c.Branches, c.Head, func(head string) (branchDoc, error) {
		d, _, err := c.Branch(head)
		if err != nil {
			return nil, err
		}
		return convDoc{d}, nil
	})
}

// branchDoc is a branch's document as alternatives reads it: where an
// entry is, and which entry is at a position.
type branchDoc interface {
	find(id string) (int, bool)
	idAt(i int) (string, bool)
}

// alternatives is alternativesOf for branches whose documents doc gives.
func alternatives(branches []history.Branch, head string, doc func(head string) (branchDoc, error)) []branchAlternative {
	type group struct {
		after string
		fork  int // where the first fork put it: after's index + 1 in its parent
		heads []string
	}
	var groups []*group
	byAfter := map[string]*group{}
	for _, b := range branches[1:] {
		g := byAfter[b.AfterEntry]
		if g == nil {
			g = &group{after: b.AfterEntry, fork: b.ForkIndex, heads: []string{b.Parent}}
			byAfter[b.AfterEntry] = g
			groups = append(groups, g)
		}
		if !slices.Contains(g.heads, b.ID) {
			g.heads = append(g.heads, b.ID)
		}
	}
	out := []branchAlternative{}
	cur, err := doc(head)
	if err != nil {
		return out
	}
	for _, g := range groups {
		p := 0
		if g.after != "" {
			// Where the fork point is in the head's document: where the
			// fork found it in its parent, unless a snapshot moved it.
			i := g.fork - 1
			at, found := cur.idAt(i)
			ok := found && at == g.after
			if !ok {
				i, ok = cur.find(g.after)
			}
			if !ok {
				continue // this head does not pass through the fork point
			}
			p = i + 1
		}
		id, ok := cur.idAt(p)
		if !ok {
			continue
		}
		for i, h := range g.heads {
			d, err := doc(h)
			if err != nil {
				continue
			}
			if at, ok := d.idAt(p); ok && at == id {
				out = append(out, branchAlternative{EntryID: id, Heads: g.heads, Index: i})
				break
			}
		}
	}
	return out
}

// convDoc is a branch's document read whole.
type convDoc struct{ d transcript.Document }

func (c convDoc) find(id string) (int, bool) { return c.d.Index(id) }
func (c convDoc) idAt(i int) (string, bool) {
	if i < 0 || i >= c.d.Len() {
		return "", false
	}
	return c.d.At(i).ID, true
}

// indexDoc is a branch's document in the log's page index. A read that
// fails is kept in fail, so the caller can read the log instead.
type indexDoc struct {
	d    *history.IndexDoc
	fail *error
}

func (x indexDoc) find(id string) (int, bool) {
	i, err := x.d.Find(id)
	if err != nil {
		*x.fail = err
	}
	return i, err == nil && i >= 0
}
func (x indexDoc) idAt(i int) (string, bool) {
	if i < 0 || i >= x.d.Len() {
		return "", false
	}
	refs, err := x.d.Refs(i, i+1)
	if err == nil && len(refs) != 1 {
		err = fmt.Errorf("%d refs at %d", len(refs), i)
	}
	if err != nil {
		*x.fail = err
		return "", false
	}
	return refs[0].ID, true
}

// branchInfo is a branched log's metadata, cached by file identity and size.
type branchInfo struct {
	fi           os.FileInfo
	size         int64
	head         string
	branches     []listedBranch
	alternatives []branchAlternative
}

// branchMeta gives a branched log's metadata: from its page index, which
// holds every branch and each branch's entry IDs, else by reading the log
// whole; the cached answer while the file and its size are the same.
func (me *metaEntry) branchMeta(path string, fi os.FileInfo) (*branchInfo, error) {
	if bi := me.branched; bi != nil && os.SameFile(bi.fi, fi) && bi.size == fi.Size() {
		return bi, nil
	}
	bi, err := branchMetaIndexed(path, fi)
	if err != nil {
		c, err := history.ReadFile(path)
		if err != nil {
			return nil, err
		}
		bi = &branchInfo{fi: fi, size: fi.Size(), head: c.Head, branches: branchesOf(c.Branches), alternatives: alternativesOf(c)}
	}
	me.branched = bi
	return bi, nil
}

// indexAt opens the log at path, which must still be the file fi
// describes, and its page index as of fi's size (OpenIndex: extended or
// rebuilt as needed). The caller closes both.
func indexAt(path string, fi os.FileInfo) (*os.File, *history.Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if ffi, err := f.Stat(); err != nil || !os.SameFile(ffi, fi) || ffi.Size() < fi.Size() {
		f.Close()
		return nil, nil, fmt.Errorf("%s changed while it was read", path)
	}
	ix, err := history.OpenIndex(path, f, fi.Size())
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if ix.LogSize() != fi.Size() {
		ix.Close()
		f.Close()
		return nil, nil, fmt.Errorf("the index of %s describes %d bytes of %d", path, ix.LogSize(), fi.Size())
	}
	return f, ix, nil
}

// branchMetaIndexed is branchMeta through the log's page index (an error
// when the index cannot describe fi's first fi.Size() bytes).
func branchMetaIndexed(path string, fi os.FileInfo) (*branchInfo, error) {
	f, ix, err := indexAt(path, fi)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer ix.Close()
	head, branches := ix.Head(), ix.Branches()
	docs := map[string]branchDoc{}
	var failed error
	alts := alternatives(branches, head, func(h string) (branchDoc, error) {
		if d, ok := docs[h]; ok {
			return d, nil
		}
		d, err := ix.Document(h)
		if err != nil {
			failed = err
			return nil, err
		}
		docs[h] = indexDoc{d, &failed}
		return docs[h], nil
	})
	if failed != nil {
		return nil, failed // a document derived from messages, a damaged index: read it whole
	}
	bi := &branchInfo{fi: fi, size: fi.Size(), head: head, branches: branchesOf(branches), alternatives: alts}
	return bi, nil
}

// graphOf is the whole graph of a log read with package history: its
// branches, what each compaction covers in the selected head, and the
// child conversations it links to.
func graphOf(id string, c *history.Conversation) branchGraph {
	g := branchGraph{ID: id, Head: c.Head, Branches: branchesOf(c.Branches), Compactions: []graphCover{}, Links: []graphLink{}}
	for _, e := range c.Document.All() {
		if cp, ok := e.Content.(transcript.Compaction); ok {
			g.Compactions = append(g.Compactions, graphCover{EntryID: e.ID, FromID: cp.Covers.FromID, ToID: cp.Covers.ToID})
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
				g.Compactions = append(g.Compactions, graphCover{EntryID: r.Summary, FromID: r.Entries.FromID, ToID: r.Entries.ToID})
			}
		case "child":
			var r struct {
				Conversation string `json:"conversationId"`
				ParentEntry  string `json:"parentEntry"`
			}
			if json.Unmarshal(u.Bytes, &r) == nil && r.Conversation != "" {
				g.Links = append(g.Links, graphLink{From: r.ParentEntry, Kind: "spawn", Conversation: r.Conversation})
			}
		}
	}
	return g
}
