package transcript

import (
	"iter"
	"maps"
	"slices"
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
	Attempt int       // the attempt that will run next, from 2 on
	Reason  string    // a short, payload-free classification
	At      time.Time // when that attempt starts
}

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
