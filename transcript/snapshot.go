package transcript

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"time"
)

// Snapshot is what the store publishes: the source document and the live
// state that goes with it, taken together in one write. A Snapshot never
// changes after it is published, so views may keep and compare them freely.
type Snapshot struct {
	// Document is the durable source. Open entries hold every byte of text
	// the writer accepted, including text the pacer has not revealed yet;
	// this is what a save writes.
	Document Document
	// Generation identifies the lifetime of a mounted view. It advances
	// when the document is replaced, cleared or hydrated, even when the
	// document and entry IDs are the same as before, and never on appends
	// or settlement. Views include it in their identity: a new generation
	// starts at the live edge with nothing marked as seen.
	Generation uint64
	// Live is the state that is shown but not saved.
	Live Live
}

// Visible returns entry i of the main document as a reader should see it
// now: an open streamed entry is cut to the prefix the pacer has revealed;
// a settled one is shown whole.
func (s Snapshot) Visible(i int) Content {
	if !s.Document.IsOpen(i) {
		return s.Document.At(i).Content
	}
	return s.Live.Visible(s.Document.At(i))
}

// Activity is what the agent is doing right now, for the footer.
type Activity string

// Activities the writers in this package set. Producers may use others.
const (
	ActivityIdle       Activity = ""
	ActivityThinking   Activity = "thinking"
	ActivityResponding Activity = "responding"
	ActivityTool       Activity = "tool"
	ActivityWaiting    Activity = "waiting"
)

// Retry describes a model request that failed and will be tried again.
// The zero Retry means no retry is pending.
type Retry struct {
	Attempt int    // the attempt that will run next, from 2 on
	Reason  string // a short, payload-free classification
	// At is the instant that attempt starts: a view counts "retrying in
	// Ns" down from it (see In) without another snapshot.
	At time.Time
}

// In is how long until the retry starts, as of now; never negative.
func (r Retry) In(now time.Time) time.Duration { return max(r.At.Sub(now), 0) }

// Pending reports whether a retry is scheduled.
func (r Retry) Pending() bool { return r.Attempt > 0 }

// Usage is an amount of model usage: tokens and cost.
type Usage struct {
	InputTokens     int64
	OutputTokens    int64
	CacheReadTokens int64
	CostUSD         float64
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:     u.InputTokens + v.InputTokens,
		OutputTokens:    u.OutputTokens + v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens,
		CostUSD:         u.CostUSD + v.CostUSD,
	}
}

func (u Usage) validate() error {
	cost := u.CostUSD
	return firstErr(
		count("/inputTokens", &u.InputTokens),
		count("/outputTokens", &u.OutputTokens),
		count("/cacheReadTokens", &u.CacheReadTokens),
		num("/costUSD", &cost))
}

// Live is the shown-but-not-saved state published with each document. It
// is a value; its sets and lists are read-only views that the store copies
// before it changes them.
type Live struct {
	// Activity, Model and PromptContext feed the main footer. Only writers
	// on the main region set them; children have their own.
	Activity      Activity
	Model         string
	PromptContext int64
	Retry         Retry
	// Expanded holds the IDs of entries whose detail the person opened.
	Expanded IDSet
	// Totals is the session's usage, children included.
	Totals Usage
	// Children are the live regions of sub-agents, in start order.
	Children Children

	// Queue is the person's messages that are not history yet: the
	// running turn's command (CommandRunning) first, then those waiting
	// behind it in dispatch order (CommandQueued), then drafts that came
	// back (CommandRejected, with the reason) until the producer drops
	// them. A client that mirrors its own deliveries (SetDeliveries)
	// adds CommandPending and CommandUncertain ones after those.
	Queue Commands
	// Steers is the steering instructions accepted but not yet applied
	// (CommandRunning) and those rejected before they were used
	// (CommandRejected: an unsent draft with an explicit send action).
	// An applied steer leaves the list as its steering entry appears.
	Steers Commands
	// Approvals is the tool calls waiting for a decision, oldest first.
	Approvals Approvals
	// turn is the running top-level turn, nil while idle; see Live.Turn.
	turn *Turn

	// sources is what Queue and Steers are merged from. It is behind a
	// pointer, like the lists themselves, because a Snapshot holding Live
	// is allocated on every streamed token: each word here costs that.
	sources *commandSources

	// reveal maps an open, paced entry's ID to the byte length of its text
	// a reader may see. Entries without a cursor are fully visible.
	reveal map[string]int
}

// Revealed returns how many bytes of the paced entry id are visible, and
// whether the entry is paced at all.
func (l Live) Revealed(id string) (n int, paced bool) {
	n, paced = l.reveal[id]
	return n, paced
}

// Visible returns e's content cut to its revealed prefix. The cut text is a
// substring of the source; nothing is copied.
func (l Live) Visible(e Entry) Content {
	n, ok := l.reveal[e.ID]
	if !ok {
		return e.Content
	}
	switch c := e.Content.(type) {
	case Agent:
		c.Markdown = c.Markdown[:min(n, len(c.Markdown))]
		return c
	case Reasoning:
		c.Text = c.Text[:min(n, len(c.Text))]
		return c
	}
	return e.Content
}

func (l *Live) setReveal(id string, n int) {
	if cur, ok := l.reveal[id]; ok && cur == n {
		return
	}
	m := make(map[string]int, len(l.reveal)+1)
	maps.Copy(m, l.reveal)
	m[id] = n
	l.reveal = m
}

func (l *Live) dropReveal(id string) {
	if _, ok := l.reveal[id]; !ok {
		return
	}
	m := maps.Clone(l.reveal)
	delete(m, id)
	l.reveal = m
}

// IDSet is a read-only set of entry IDs.
type IDSet struct{ m map[string]struct{} }

// Has reports whether id is in the set.
func (s IDSet) Has(id string) bool { _, ok := s.m[id]; return ok }

// Len is the number of IDs in the set.
func (s IDSet) Len() int { return len(s.m) }

// All yields the IDs in sorted order.
func (s IDSet) All() iter.Seq[string] {
	return slices.Values(slices.Sorted(maps.Keys(s.m)))
}

func (s IDSet) with(id string, on bool) IDSet {
	if s.Has(id) == on {
		return s
	}
	m := make(map[string]struct{}, len(s.m)+1)
	maps.Copy(m, s.m)
	if on {
		m[id] = struct{}{}
	} else {
		delete(m, id)
	}
	return IDSet{m}
}

// ChildRegion is the live region of one sub-agent: its own feed of entries
// and its own footer facts. Nothing in it is part of the main document.
type ChildRegion struct {
	ID            string
	Label         string
	Activity      Activity
	Model         string
	PromptContext int64
	// Usage is the child's own usage; it is also counted in Live.Totals.
	Usage Usage
	// Feed is the child's document. Its open entries are paced like the
	// main document's; see Live.Visible.
	Feed Document
	// Done is set when the child completed; a done region takes no writes.
	Done bool

	epoch uint64 // advanced by Reset, to retire the child's older streams
}

// LastLine is the last non-empty line of the newest entry of child c's
// feed as readers see it (Visible), a one-row glimpse of what the child
// does: "" for an empty feed. The line is the source's text, unsanitized.
func (l Live) LastLine(c ChildRegion) string {
	n := c.Feed.Len()
	if n == 0 {
		return ""
	}
	var s string
	switch e := l.Visible(c.Feed.At(n - 1)).(type) {
	case Agent:
		s = e.Markdown
	case Reasoning:
		s = e.Text
	case Tool:
		s = e.Receipt.App + " " + e.Receipt.Summary
	case User:
		s = e.Text
	}
	s = strings.TrimRight(s, "\n ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Children is a read-only list of child regions.
type Children struct{ s []ChildRegion }

// Len is the number of child regions.
func (c Children) Len() int { return len(c.s) }

// At returns child region i.
func (c Children) At(i int) ChildRegion { return c.s[i] }

// Get returns the child region with the given ID.
func (c Children) Get(id string) (ChildRegion, bool) {
	if i := c.index(id); i >= 0 {
		return c.s[i], true
	}
	return ChildRegion{}, false
}

// All yields the child regions in start order.
func (c Children) All() iter.Seq2[int, ChildRegion] { return slices.All(c.s) }

func (c Children) index(id string) int {
	return slices.IndexFunc(c.s, func(r ChildRegion) bool { return r.ID == id })
}

func (c Children) set(i int, r ChildRegion) Children {
	s := slices.Clone(c.s)
	s[i] = r
	return Children{s}
}

func (c Children) add(r ChildRegion) Children {
	return Children{append(c.s[:len(c.s):len(c.s)], r)}
}

// CommandState is where a command of the person's stands. It is the one
// vocabulary of command states: the engine's receipts, its durable
// receipts sidecar, the server's protocol and the web app all use these
// names. In Live the engine publishes queued, running and rejected;
// pending and uncertain are delivery states only a client knows (see
// Live.Queue); the rest are final states a receipt reports.
type CommandState string

// Command states.
const (
	// CommandPending: sent, no answer yet. It cannot be resent, edited
	// or removed.
	CommandPending CommandState = "pending"
	// CommandUncertain: the transport failed, so the engine may or may
	// not have it. It is never resent as another turn.
	CommandUncertain CommandState = "uncertain"
	// CommandQueued: accepted, waiting behind the running turn.
	CommandQueued CommandState = "queued"
	// CommandRunning: its turn is running. For a steer: accepted and
	// waiting for the next provider boundary, where it becomes a
	// steering entry.
	CommandRunning CommandState = "running"
	// CommandApplied: a steer the model received (final).
	CommandApplied CommandState = "applied"
	// CommandDone: its turn finished, or the command took effect (final).
	CommandDone CommandState = "done"
	// CommandFailed: its turn failed; a failure entry says why (final).
	CommandFailed CommandState = "failed"
	// CommandStopped: its turn was stopped (final).
	CommandStopped CommandState = "stopped"
	// CommandRejected: not used, and never sent by itself. Its text is
	// an unsent draft with an explicit send action; Reason says why
	// (final).
	CommandRejected CommandState = "rejected"
	// CommandRemoved: taken out of the queue before it started (final).
	CommandRemoved CommandState = "removed"
	// CommandUnknown: no record of this command ID: never received, or
	// forgotten.
	CommandUnknown CommandState = "unknown"
)

// CommandStates lists every command state, in the order above.
func CommandStates() []CommandState {
	return []CommandState{CommandPending, CommandUncertain, CommandQueued, CommandRunning, CommandApplied,
		CommandDone, CommandFailed, CommandStopped, CommandRejected, CommandRemoved, CommandUnknown}
}

// Final reports whether a command in state s can change no more.
func (s CommandState) Final() bool {
	switch s {
	case CommandApplied, CommandDone, CommandFailed, CommandStopped, CommandRejected, CommandRemoved:
		return true
	}
	return false
}

// PreviewBytes bounds the text a Command or PendingApproval carries, so
// live state stays small however long the message or the arguments are.
const PreviewBytes = 256

// Preview cuts s to at most PreviewBytes bytes of valid UTF-8, marking a
// cut with an ellipsis.
func Preview(s string) string {
	if len(s) <= PreviewBytes {
		return s
	}
	return strings.ToValidUTF8(s[:PreviewBytes], "") + "…"
}

// Command is one command of the person's that is not settled history yet:
// a message waiting or running, a steer waiting for its boundary, or a
// draft that came back.
type Command struct {
	// ID is the client's own command ID.
	ID string
	// Preview is the command's text, cut to PreviewBytes.
	Preview string
	// Steer is set for a steering instruction.
	Steer bool
	State CommandState
	// Reason says why a command was rejected or why its delivery is
	// uncertain.
	Reason string
}

// Commands is a read-only list of commands. Its zero value is the empty
// list.
type Commands struct{ p *[]Command }

// NewCommands returns a list holding a copy of cs, for producers that
// publish one through Lease.SetCommands.
func NewCommands(cs ...Command) Commands { return commandsOf(slices.Clone(cs)) }

// commandsOf wraps s, which the caller no longer changes.
func commandsOf(s []Command) Commands {
	if len(s) == 0 {
		return Commands{}
	}
	return Commands{&s}
}

func (c Commands) list() []Command {
	if c.p == nil {
		return nil
	}
	return *c.p
}

// Len is the number of commands.
func (c Commands) Len() int { return len(c.list()) }

// At returns command i.
func (c Commands) At(i int) Command { return c.list()[i] }

// Get returns the command with the given ID.
func (c Commands) Get(id string) (Command, bool) {
	s := c.list()
	if i := slices.IndexFunc(s, func(x Command) bool { return x.ID == id }); i >= 0 {
		return s[i], true
	}
	return Command{}, false
}

// All yields the commands in order.
func (c Commands) All() iter.Seq2[int, Command] { return slices.All(c.list()) }

// Equal reports whether c and d hold the same commands in the same order.
func (c Commands) Equal(d Commands) bool { return slices.Equal(c.list(), d.list()) }

// commandSources are the lists Live.Queue and Live.Steers are merged
// from: what the engine published (SetCommands) and what a client mirror
// published (SetDeliveries).
type commandSources struct{ queue, steers, deliveries Commands }

// PendingApproval is a tool call waiting for the person's decision.
type PendingApproval struct {
	// ID is the invocation ID, which is also the ID of the call's tool
	// entry (in the main document, or in Child's feed).
	ID   string
	Tool string
	// Args is the call's arguments cut to PreviewBytes: never more than
	// the tool receipt shows.
	Args string
	// Child is the child region the call belongs to, "" for the main
	// agent.
	Child string
}

// Approvals is a read-only list of pending approvals, oldest first. Its
// zero value is the empty list.
type Approvals struct{ p *[]PendingApproval }

// NewApprovals returns a list holding a copy of as.
func NewApprovals(as ...PendingApproval) Approvals {
	if len(as) == 0 {
		return Approvals{}
	}
	s := slices.Clone(as)
	return Approvals{&s}
}

func (a Approvals) list() []PendingApproval {
	if a.p == nil {
		return nil
	}
	return *a.p
}

// Len is the number of pending approvals.
func (a Approvals) Len() int { return len(a.list()) }

// At returns pending approval i.
func (a Approvals) At(i int) PendingApproval { return a.list()[i] }

// Get returns the pending approval of invocation id.
func (a Approvals) Get(id string) (PendingApproval, bool) {
	s := a.list()
	if i := slices.IndexFunc(s, func(x PendingApproval) bool { return x.ID == id }); i >= 0 {
		return s[i], true
	}
	return PendingApproval{}, false
}

// All yields the pending approvals, oldest first.
func (a Approvals) All() iter.Seq2[int, PendingApproval] { return slices.All(a.list()) }

// Equal reports whether a and b hold the same approvals in the same order.
func (a Approvals) Equal(b Approvals) bool { return slices.Equal(a.list(), b.list()) }

// SetCommands publishes the command queue and the pending steers as the
// engine has them; see Live.Queue and Live.Steers. Lists equal to the
// current ones change nothing, so a producer may call it on every change
// of its own.
func (tx *Tx) SetCommands(queue, steers Commands) {
	src := tx.sources()
	if !src.queue.Equal(queue) || !src.steers.Equal(steers) {
		src.queue, src.steers = queue, steers
		tx.mergeCommands(src)
	}
}

// SetDeliveries publishes a client's own view of the commands it is
// delivering: CommandPending and CommandUncertain ones the engine may not
// have yet, and drafts it got back (CommandRejected). They follow the
// engine's commands in Live.Queue (or Live.Steers, for a steer); a
// command the engine lists under the same ID is shown as the engine has
// it. A new generation starts without them; the client publishes again.
func (tx *Tx) SetDeliveries(cs Commands) {
	src := tx.sources()
	if !src.deliveries.Equal(cs) {
		src.deliveries = cs
		tx.mergeCommands(src)
	}
}

// sources returns a copy of the live state's command sources to change.
func (tx *Tx) sources() commandSources {
	if p := tx.st.live.sources; p != nil {
		return *p
	}
	return commandSources{}
}

func (tx *Tx) mergeCommands(src commandSources) {
	merge := func(own Commands, steer bool) Commands {
		out := own.list()
		for _, d := range src.deliveries.list() {
			if d.Steer != steer {
				continue
			}
			if _, known := src.queue.Get(d.ID); known {
				continue
			}
			if _, known := src.steers.Get(d.ID); known {
				continue
			}
			out = append(out[:len(out):len(out)], d)
		}
		return commandsOf(out)
	}
	l := &tx.st.live
	l.sources = &src
	l.Queue, l.Steers = merge(src.queue, false), merge(src.steers, true)
	tx.dirty = true
}

// Turn is the running top-level turn as views name it: the command that
// started it and the entries a stop compares against.
type Turn struct {
	// CommandID is the client's ID of the command that runs the turn.
	CommandID string
	// Entry is the turn's user entry ("" until it is written). A retry
	// writes none: its Entry is the user entry of the turn it retries.
	Entry string
	// Reply is the turn's first answer entry ("" until there is one).
	Reply string
}

// Turn returns the running top-level turn; ok is false while idle.
func (l Live) Turn() (t Turn, ok bool) {
	if l.turn == nil {
		return Turn{}, false
	}
	return *l.turn, true
}

// SetTurn publishes the running top-level turn; nil means idle.
func (tx *Tx) SetTurn(t *Turn) {
	cur := tx.st.live.turn
	if (cur == nil) == (t == nil) && (t == nil || *cur == *t) {
		return
	}
	if t != nil {
		c := *t
		t = &c
	}
	tx.st.live.turn = t
	tx.dirty = true
}

// SetApprovals publishes the pending approvals.
func (tx *Tx) SetApprovals(a Approvals) {
	if !tx.st.live.Approvals.Equal(a) {
		tx.st.live.Approvals = a
		tx.dirty = true
	}
}

// SetCommands publishes the command queue and the pending steers.
func (l Lease) SetCommands(queue, steers Commands) error {
	return l.Do(func(tx *Tx) error { tx.SetCommands(queue, steers); return nil })
}

// SetDeliveries publishes a client's own deliveries; see Tx.SetDeliveries.
func (l Lease) SetDeliveries(cs Commands) error {
	return l.Do(func(tx *Tx) error { tx.SetDeliveries(cs); return nil })
}

// SetApprovals publishes the pending approvals.
func (l Lease) SetApprovals(a Approvals) error {
	return l.Do(func(tx *Tx) error { tx.SetApprovals(a); return nil })
}
