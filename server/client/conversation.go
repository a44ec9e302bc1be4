package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/transcript"
)

// PageBudget is how many bytes of the conversation's end an Open reads
// (the owner's page budget): more than a screen of the largest terminal
// holds, and no more, since the first screen waits for the owner to read
// and the client to decode all of it. Earlier entries are the viewer's to
// page (from the log, or from the owner).
const PageBudget = 64 << 10

// keepEntries is how many entries at the end of the document a mirror
// keeps in its store in a long live session, as the owner's engine does
// (engine.WithDocumentWindow): once it holds twice as many, the settled
// entries of earlier turns are dropped from the store (the document's
// Elided counts them). They are in the owner's log, from which the
// mirror's readers page them.
const keepEntries = 256

// Conversation is one conversation opened on a Conn: its live events keep
// a transcript.Store equal to the owner's (entries, turn, queue, approvals),
// and its commands go to the owner.
type Conversation struct {
	c     *Conn
	id    string
	store *transcript.Store
	// lease is the store's lifetime this mirror writes in; a reopen takes
	// a new one.
	lease transcript.Lease

	mu       sync.Mutex
	gen, seq int64
	revs     map[string]int64 // each entry's revision, as the owner numbered it
	opening  bool             // between open and its pages: events are held
	held     []frame
	receipts map[string]server.Receipt
	changed  chan struct{} // closed and replaced when a receipt arrives
	// OnEvent, when set before Open returns any event, sees every applied
	// event's op (tests and benchmarks measure with it).
	onEvent func(server.ChangeOp)
	// allowed is the tools the owner's engine allows, as it last said.
	// It is read without mu: a server relaying this owner reads it while
	// holding its conversation's lock, which a receipt told under mu takes.
	allowed atomic.Pointer[[]string]
	// onReceipt is told every receipt that moves (OnReceipt).
	onReceipt func(server.Receipt)
}

// Open opens conversation id and mirrors it into store: the store's
// document is replaced by the conversation's end (PageBudget bytes of it,
// with the count of earlier entries, which a viewer pages from the log),
// its live state set to the owner's turn, queue and approvals, and from
// then on every live event is applied as it arrives.
func (c *Conn) Open(ctx context.Context, id string, store *transcript.Store) (*Conversation, error) {
	cv := &Conversation{c: c, id: id, store: store, revs: map[string]int64{}, receipts: map[string]server.Receipt{}, changed: make(chan struct{})}
	c.mu.Lock()
	if c.convs[id] != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("client: conversation %s is already open on this connection", id)
	}
	c.convs[id] = cv
	c.mu.Unlock()
	if err := cv.open(ctx); err != nil {
		c.mu.Lock()
		delete(c.convs, id)
		c.mu.Unlock()
		return nil, err
	}
	return cv, nil
}

// OpenWithModel opens conversation id into store as Open does, and reads
// the owner's model for it (Model) meanwhile, on a connection of its own:
// the two answers a terminal waits for before its first screen attached.
// The model is "" when the owner did not say.
func (c *Conn) OpenWithModel(ctx context.Context, id string, store *transcript.Store) (*Conversation, string, error) {
	model := make(chan string, 1)
	go func() {
		m, _ := c.Model(ctx, id)
		model <- m
	}()
	cv, err := c.Open(ctx, id, store)
	m := <-model
	if err != nil {
		return nil, "", err
	}
	return cv, m, nil
}

// OnEvent sets a function told the op of every live event applied from
// now on (nil: none).
func (cv *Conversation) OnEvent(f func(server.ChangeOp)) {
	cv.mu.Lock()
	cv.onEvent = f
	cv.mu.Unlock()
}

// OnReceipt sets a function told every receipt the owner sends or
// answers from now on, as it moves (nil: none). It runs on the
// connection's reading goroutine and must not block.
func (cv *Conversation) OnReceipt(f func(server.Receipt)) {
	cv.mu.Lock()
	cv.onReceipt = f
	cv.mu.Unlock()
}

// ID is the conversation's ID.
func (cv *Conversation) ID() string { return cv.id }

func (cv *Conversation) open(ctx context.Context) error {
	cv.mu.Lock()
	cv.opening, cv.held = true, nil
	cv.mu.Unlock()
	snap, err := cv.c.call(ctx, map[string]any{"type": "open", "conversation": cv.id})
	if err != nil {
		return err
	}
	page, err := cv.c.call(ctx, map[string]any{"type": "page", "token": snap.Token, "conversation": cv.id,
		"head": headOf(snap), "anchor": "latest", "direction": "before", "budgetBytes": PageBudget})
	if err != nil {
		return err
	}
	groups, err := page.groups()
	if err != nil {
		return err
	}
	var entries []transcript.Entry
	for _, g := range groups {
		for _, raw := range g.Entries {
			e, err := transcript.DecodeEntry(raw)
			if err != nil {
				return fmt.Errorf("client: conversation %s, group %d: %w", cv.id, g.Index, err)
			}
			entries = append(entries, e)
		}
	}
	first := ""
	if page.HasMoreBefore {
		// The first entry's ID, which a window of the end names.
		ep, err := cv.c.call(ctx, map[string]any{"type": "page", "token": snap.Token, "conversation": cv.id,
			"head": headOf(snap), "anchor": "earliest", "direction": "after", "budgetBytes": 4096})
		if err != nil {
			return err
		}
		if gs, _ := ep.groups(); len(gs) > 0 && len(gs[0].Entries) > 0 {
			if e, err := transcript.DecodeEntry(gs[0].Entries[0]); err == nil {
				first = e.ID
			}
		}
	}
	_, _ = cv.c.call(ctx, map[string]any{"type": "release", "token": snap.Token})
	// An entry the owner saved while it was still open (a tool call
	// waiting, a reply mid-stream) is on the page as the log holds it, and
	// open in the checkpoint: it joins the mirror open, from the
	// checkpoint, so a settled copy never stands in for it.
	if cp := snap.Checkpoint; cp != nil {
		open := map[string]bool{}
		for _, ce := range cp.Entries {
			if ce.Open {
				open[entryID(ce.Entry)] = true
			}
		}
		if len(open) > 0 {
			kept := entries[:0:0]
			for _, e := range entries {
				if !open[e.ID] {
					kept = append(kept, e)
				}
			}
			entries = kept
		}
	}
	doc := transcript.NewCheckedWindow(cv.id, max(snap.Entries-len(entries), 0), first, entries)
	if _, err := transcript.NewDocument(cv.id, entries); err != nil {
		return fmt.Errorf("client: conversation %s: %w", cv.id, err)
	}

	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.store.Replace(doc)
	cv.lease = cv.store.Lease()
	cv.gen, cv.seq = snap.Generation, snap.Seq
	clear(cv.revs)
	for _, e := range entries {
		cv.revs[e.ID] = snap.Seq
	}
	var state struct {
		Turn      *server.TurnState     `json:"turn"`
		Queue     []server.QueueItem    `json:"queue"`
		Steers    []server.QueueItem    `json:"steers"`
		Approvals []server.ApprovalItem `json:"approvals"`
	}
	if len(snap.State) > 0 {
		_ = json.Unmarshal(snap.State, &state, loose)
	}
	err = cv.lease.Do(func(tx *transcript.Tx) error {
		if cp := snap.Checkpoint; cp != nil {
			for _, ce := range cp.Entries {
				e, err := transcript.DecodeEntry(ce.Entry)
				if err != nil {
					return fmt.Errorf("client: conversation %s, checkpoint: %w", cv.id, err)
				}
				if err := tx.Put(e, ce.Open); err != nil {
					return err
				}
				cv.revs[e.ID] = ce.Revision
			}
		}
		if state.Turn != nil {
			setTurn(tx, *state.Turn)
			cv.allowed.Store(&state.Turn.Allowed)
		}
		setQueue(tx, state.Queue, state.Steers)
		setApprovals(tx, state.Approvals)
		return nil
	})
	if err != nil {
		return err
	}
	held := cv.held
	cv.opening, cv.held = false, nil
	for _, f := range held {
		switch {
		case f.Generation > cv.gen:
			// The document was replaced after this snapshot: the events
			// of the new generation apply to no window held here.
			cv.reopenLocked()
			return nil
		case f.Op == server.OpReceipt && f.Receipt != nil:
			cv.receiptLocked(*f.Receipt)
		case f.Generation == cv.gen && f.Seq > cv.seq:
			cv.applyLocked(f)
		}
	}
	return nil
}

func headOf(f frame) string { return f.Head }

// event applies one live event (on the reading goroutine).
func (cv *Conversation) event(f frame) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.opening {
		cv.held = append(cv.held, f)
		return
	}
	if f.Op == server.OpReceipt && f.Receipt != nil {
		cv.receiptLocked(*f.Receipt)
		return
	}
	if f.Generation != cv.gen || f.Seq <= cv.seq {
		// An event of a later generation (its replaced event was missed,
		// or held while opening) means the window is stale.
		if f.Generation > cv.gen {
			cv.reopenLocked()
		}
		return
	}
	cv.applyLocked(f)
}

func (cv *Conversation) applyLocked(f frame) {
	cv.seq = f.Seq
	if cv.onEvent != nil {
		defer cv.onEvent(f.Op)
	}
	switch f.Op {
	case server.OpReplaced, server.OpHead, "deleted":
		cv.reopenLocked()
		return
	case server.OpReceipt:
		if f.Receipt != nil {
			cv.receiptLocked(*f.Receipt)
		}
		return
	}
	err := cv.lease.Do(func(tx *transcript.Tx) error {
		switch f.Op {
		case server.OpUpsert, server.OpSettle:
			id := entryID(f.Entry)
			if f.Revision <= cv.revs[id] {
				return nil
			}
			// An upsert of an entry the mirror does not hold, placed
			// after one it does not hold either (or first), lies before
			// the mirror's window: readers page it from the log.
			d := tx.Document()
			if _, ok := d.Index(id); !ok && f.Op == server.OpUpsert && d.Elided() > 0 {
				if _, ok := d.Index(f.After); !ok {
					return nil
				}
			}
			e, err := transcript.DecodeEntry(f.Entry)
			if err != nil {
				return err
			}
			cv.revs[e.ID] = f.Revision
			open := f.Op == server.OpUpsert && f.Open
			if err := tx.Put(e, open); err != nil || open {
				return err
			}
			return cv.trimLocked(tx)
		case server.OpAppend:
			return cv.appendLocked(tx, f)
		case server.OpPresentation:
			i, ok := tx.Document().Index(f.EntryID)
			if !ok || f.Revision <= cv.revs[f.EntryID] {
				return nil
			}
			e := tx.Document().At(i)
			t, isTool := e.Content.(transcript.Tool)
			if !isTool {
				return nil
			}
			var p transcript.Presentation
			if err := json.Unmarshal(f.Presentation, &p, loose); err != nil {
				return err
			}
			t.Presentation = &p
			e.Content = t
			cv.revs[f.EntryID] = f.Revision
			return tx.Put(e, tx.Document().IsOpen(i))
		case server.OpTurn:
			var st string
			_ = json.Unmarshal(f.State, &st)
			t := server.TurnState{State: st, Turn: f.Turn, Reply: f.Reply, Activity: f.Activity, Retry: f.Retry, Context: f.Context,
				Totals: f.Totals, Children: f.Children, Allowed: f.Allowed}
			setTurn(tx, t)
			cv.allowed.Store(&t.Allowed)
		case server.OpQueue:
			setQueue(tx, f.Items, f.Steers)
		case server.OpApprovals:
			setApprovals(tx, f.Approvals)
		}
		return nil
	})
	if err != nil {
		// The mirror and the owner disagree: start again from a snapshot.
		cv.reopenLocked()
	}
}

// trimLocked drops the settled entries of earlier turns from the mirror's
// store once it holds twice keepEntries: the cut keeps the last
// keepEntries at least and falls on a user entry, so what it drops
// belongs to turns that ended, which the owner saved when they did.
func (cv *Conversation) trimLocked(tx *transcript.Tx) error {
	d := tx.Document()
	if d.Len() < 2*keepEntries {
		return nil
	}
	cut := 0
	for i := min(d.Len()-keepEntries, d.Settled()); i > 0; i-- {
		if d.At(i).Content.Kind() == transcript.KindUser {
			cut = i
			break
		}
	}
	if cut == 0 {
		return nil
	}
	for i := range cut {
		delete(cv.revs, d.At(i).ID)
	}
	return tx.Trim(cut)
}

// appendLocked applies streamed text, or, when the mirror holds another
// revision or length of the entry, asks the owner for it whole.
func (cv *Conversation) appendLocked(tx *transcript.Tx, f frame) error {
	doc := tx.Document()
	i, ok := doc.Index(f.EntryID)
	if ok && cv.revs[f.EntryID] == f.Base && doc.IsOpen(i) {
		e := doc.At(i)
		switch c := e.Content.(type) {
		case transcript.Agent:
			if utf16Len(c.Markdown) == f.Offset {
				c.Markdown += f.Text
				e.Content = c
				cv.revs[e.ID] = f.Revision
				return tx.Put(e, true)
			}
		case transcript.Reasoning:
			if utf16Len(c.Text) == f.Offset {
				c.Text += f.Text
				e.Content = c
				cv.revs[e.ID] = f.Revision
				return tx.Put(e, true)
			}
		}
	}
	go cv.fetchEntry(f.EntryID)
	return nil
}

// fetchEntry asks for an entry's current value after a gap and applies it
// as an upsert; its answer is ordered among the events, so what arrived
// meanwhile is dropped by revision.
func (cv *Conversation) fetchEntry(id string) {
	f, err := cv.c.call(cv.c.ctx, map[string]any{"type": "entry", "conversation": cv.id, "entryId": id})
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Rebuild {
			cv.reopenLocked()
		}
		return
	}
	if f.Generation != cv.gen {
		cv.reopenLocked()
		return
	}
	_ = cv.lease.Do(func(tx *transcript.Tx) error {
		if f.Revision <= cv.revs[id] {
			return nil
		}
		e, err := transcript.DecodeEntry(f.Entry)
		if err != nil {
			return err
		}
		cv.revs[id] = f.Revision
		return tx.Put(e, f.Open)
	})
}

// reopenLocked opens the conversation again, off the reading goroutine
// (which must go on delivering the answers).
func (cv *Conversation) reopenLocked() {
	if cv.opening {
		return
	}
	cv.opening = true
	go func() {
		if err := cv.open(cv.c.ctx); err != nil {
			cv.mu.Lock()
			cv.opening = false
			cv.mu.Unlock()
		}
	}()
}

func (cv *Conversation) receiptLocked(r server.Receipt) {
	if old, ok := cv.receipts[r.CommandID]; ok && final(old.State) {
		return // a receipt only moves forward
	}
	cv.receipts[r.CommandID] = r
	if cv.onReceipt != nil {
		cv.onReceipt(r)
	}
	close(cv.changed)
	cv.changed = make(chan struct{})
}

func final(s transcript.CommandState) bool {
	switch s {
	case transcript.CommandApplied, transcript.CommandDone, transcript.CommandFailed,
		transcript.CommandStopped, transcript.CommandRejected, transcript.CommandRemoved:
		return true
	}
	return false
}

func entryID(raw []byte) string {
	var e struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &e, loose)
	return e.ID
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// setTurn sets the mirror's turn and the footer's facts of it (activity,
// a pending retry, the prompt's context, the session's usage, the running
// sub-agents' regions) to the owner's.
func setTurn(tx *transcript.Tx, t server.TurnState) {
	_ = tx.SetPromptContext(max(t.Context, 0))
	_ = tx.SetTotals(usageOf(t.Totals))
	children := make([]transcript.ChildRegion, 0, len(t.Children))
	for _, c := range t.Children {
		r := transcript.ChildRegion{ID: c.ID, Label: c.Label, Activity: transcript.Activity(c.Activity), Model: c.Model,
			PromptContext: max(c.Context, 0), Usage: usageOf(c.Usage)}
		// The feed holds the one line the owner's readers see last, all
		// a terminal shows of a running sub-agent's feed.
		var entries []transcript.Entry
		if c.Last != "" {
			entries = []transcript.Entry{{ID: c.ID + "-last", Timestamp: tx.Now(), Content: transcript.Agent{Markdown: c.Last}}}
		}
		r.Feed, _ = transcript.NewDocument(c.ID, entries)
		children = append(children, r)
	}
	_ = tx.SetChildren(children)
	var rt transcript.Retry
	if r := t.Retry; r != nil && r.Attempt > 0 {
		rt = transcript.Retry{Attempt: r.Attempt, Reason: r.Reason, At: time.UnixMilli(r.At)}
	}
	tx.SetRetry(rt)
	if t.State != "running" {
		tx.SetTurn(nil)
		tx.SetActivity(transcript.ActivityIdle)
		return
	}
	tx.SetTurn(&transcript.Turn{Entry: t.Turn, Reply: t.Reply})
	switch {
	case t.Activity != "":
		tx.SetActivity(transcript.Activity(t.Activity))
	case tx.Live().Activity == transcript.ActivityIdle:
		// An owner that does not say what the turn does.
		tx.SetActivity(transcript.ActivityResponding)
	}
}

// usageOf is u as a store counts it; negative counts are taken as none.
func usageOf(u server.Usage) transcript.Usage {
	return transcript.Usage{InputTokens: max(u.InputTokens, 0), OutputTokens: max(u.OutputTokens, 0),
		CacheReadTokens: max(u.CacheReadTokens, 0), CostUSD: max(u.CostUSD, 0)}
}

// setQueue sets the mirror's sends waiting behind the running turn and
// the steers accepted for it.
func setQueue(tx *transcript.Tx, items, steers []server.QueueItem) {
	cs := make([]transcript.Command, len(items))
	for i, q := range items {
		cs[i] = transcript.Command{ID: q.CommandID, Preview: q.Text, State: q.State}
	}
	ss := make([]transcript.Command, len(steers))
	for i, q := range steers {
		ss[i] = transcript.Command{ID: q.CommandID, Preview: q.Text, State: q.State, Steer: true}
	}
	tx.SetCommands(transcript.NewCommands(cs...), transcript.NewCommands(ss...))
}

func setApprovals(tx *transcript.Tx, items []server.ApprovalItem) {
	as := make([]transcript.PendingApproval, len(items))
	for i, a := range items {
		as[i] = transcript.PendingApproval{ID: a.InvocationID, Tool: a.Tool, Args: a.Args, Child: a.Child}
	}
	tx.SetApprovals(transcript.NewApprovals(as...))
}

// Changed is closed when a receipt arrives (then call it again), like
// engine.Engine.Changed.
func (cv *Conversation) Changed() <-chan struct{} {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.changed
}

// Command sends a command frame: kind ("send", "steer", "stop", "approve",
// "retry", …) with the client's commandID and the members the protocol
// names for it, and returns the owner's receipt. Sending the same ID and
// body again returns the first one's current receipt and does nothing
// else.
func (cv *Conversation) Command(ctx context.Context, kind, commandID string, members map[string]any) (server.Receipt, error) {
	m := map[string]any{"type": kind, "conversation": cv.id, "commandId": commandID}
	for k, v := range members {
		m[k] = v
	}
	f, err := cv.c.call(ctx, m)
	if err != nil {
		return server.Receipt{}, err
	}
	if f.Receipt == nil {
		return server.Receipt{}, fmt.Errorf("client: %s answered %q without a receipt", kind, f.Type)
	}
	cv.mu.Lock()
	cv.receiptLocked(*f.Receipt)
	r := cv.receipts[commandID]
	cv.mu.Unlock()
	return r, nil
}

// Send sends text (steer: to the running turn).
func (cv *Conversation) Send(ctx context.Context, commandID, text string, steer bool) (server.Receipt, error) {
	kind := "send"
	if steer {
		kind = "steer"
	}
	return cv.Command(ctx, kind, commandID, map[string]any{"text": text})
}

// Stop stops the running turn whose user entry is turn.
func (cv *Conversation) Stop(ctx context.Context, commandID, turn string) (server.Receipt, error) {
	return cv.Command(ctx, "stop", commandID, map[string]any{"turn": turn})
}

// Approve answers a tool call's approval (allow false denies); scope is
// "once" or "conversation".
func (cv *Conversation) Approve(ctx context.Context, commandID, invocation string, allow bool, scope string) (server.Receipt, error) {
	m := map[string]any{"invocationId": invocation, "allow": allow}
	if scope != "" {
		m["scope"] = scope
	}
	return cv.Command(ctx, "approve", commandID, m)
}

// Retry runs again the turn that failed with failure entry failureID.
func (cv *Conversation) Retry(ctx context.Context, commandID, failureID string) (server.Receipt, error) {
	return cv.Command(ctx, "retry", commandID, map[string]any{"failureId": failureID})
}

// Allowed lists, sorted, the tools the owner's engine runs without asking
// for the rest of its session, as the owner last said.
func (cv *Conversation) Allowed() []string {
	if a := cv.allowed.Load(); a != nil {
		return slices.Clone(*a)
	}
	return nil
}

// Dismiss tells the owner the client took back draft, a send or steer the
// owner's engine gave back, so the engine stops listing it.
func (cv *Conversation) Dismiss(ctx context.Context, commandID, draft string) (server.Receipt, error) {
	return cv.Command(ctx, "dismiss", commandID, map[string]any{"draft": draft})
}

// Status is the receipt of commandID: the latest one this client saw, or
// else the owner's receipt endpoint. engine.ErrUnknownCommand says the
// owner never received it.
func (cv *Conversation) Status(ctx context.Context, commandID string) (server.Receipt, error) {
	cv.mu.Lock()
	r, ok := cv.receipts[commandID]
	cv.mu.Unlock()
	if ok {
		return r, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		cv.c.base+"/api/v2/conversations/"+url.PathEscape(cv.id)+"/commands/"+url.PathEscape(commandID), nil)
	if err != nil {
		return server.Receipt{}, err
	}
	if cv.c.tok != "" {
		req.Header.Set("Authorization", "Bearer "+cv.c.tok)
	}
	resp, err := cv.c.http.Do(req)
	if err != nil {
		return server.Receipt{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return server.Receipt{}, fmt.Errorf("client: receipt of %s: HTTP %d", commandID, resp.StatusCode)
	}
	if err := json.UnmarshalRead(resp.Body, &r, loose); err != nil {
		return server.Receipt{}, err
	}
	if r.State == transcript.CommandUnknown {
		return r, engine.ErrUnknownCommand
	}
	return r, nil
}
