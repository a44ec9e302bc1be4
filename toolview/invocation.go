package toolview

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

type scopeState uint8

const (
	scopeOpen scopeState = iota
	scopeClosed
)

// Invocation is the scope of one tool call: its items, timing and closure.
// The tool gets presentation handles from it; it never builds transcript IDs.
type Invocation struct {
	host     *Host
	id, tool string
	producer *Manifest
	start    time.Time // Open, then Invoke; guarded by mu once shared

	mu      sync.Mutex
	cond    *sync.Cond // signals delivered advancing
	state   scopeState
	invoked bool
	items   map[string]*item
	order   []*item // primary first, then supplementals in first-use order
	primary *item
	draft   draftState
	diag    [numReasons]Diagnostic
	record  *Record

	outbox    []Change
	draining  bool
	emitted   uint64
	delivered uint64
}

// item is one presentation item: a single current value and its revision.
type item struct {
	key       string
	retention Retention
	rev       Revision
	cur       *Value
	published Revision
	lastPub   time.Time
	stopTimer func() bool
	timerSeq  uint64
	artifacts map[string]*ArtifactWriter
	handle    *Presentation
}

func (inv *Invocation) newItem(key string, r Retention) *item {
	it := &item{key: key, retention: r}
	it.handle = &Presentation{inv: inv, it: it}
	inv.items[key] = it
	inv.order = append(inv.order, it)
	return it
}

// ID returns the invocation ID.
func (inv *Invocation) ID() string { return inv.id }

// Tool returns the tool name.
func (inv *Invocation) Tool() string { return inv.tool }

// Presentation returns the handle of the invocation's primary item.
func (inv *Invocation) Presentation() *Presentation { return inv.primary.handle }

// ItemOption configures a supplemental item when it is first used.
type ItemOption func(*item)

// WithRetention sets a supplemental item's retention.
func WithRetention(r Retention) ItemOption { return func(it *item) { it.retention = r } }

// Supplemental returns the handle of the explicitly keyed supplemental item,
// creating it on first use with the given options (later options are
// ignored). A supplemental is independently meaningful output with its own
// revisions, not a phase of the primary item. A key that is empty or invalid,
// or one past the per-invocation limit, yields a handle whose updates fail.
func (inv *Invocation) Supplemental(key string, opts ...ItemOption) *Presentation {
	if err := checkName(key); err != nil {
		return &Presentation{inv: inv, err: fmt.Errorf("toolview: supplemental key %v", err)}
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if it, ok := inv.items[key]; ok {
		return it.handle
	}
	if inv.state != scopeOpen {
		return &Presentation{inv: inv, err: &RejectError{Reason: ReasonClosed, Item: key}}
	}
	if len(inv.order) > maxSupplementals {
		return &Presentation{inv: inv, err: fmt.Errorf("toolview: more than %d supplemental items", maxSupplementals)}
	}
	it := inv.newItem(key, Retained)
	for _, o := range opts {
		o(it)
	}
	return it.handle
}

// Presentation is the handle through which a tool replaces one item's
// current value. It is safe for concurrent use.
type Presentation struct {
	inv *Invocation
	it  *item
	err error // set for handles that can never accept updates
}

// Replace makes payload the item's current value and returns its revision.
func (p *Presentation) Replace(pl Payload) (Revision, error) {
	if p.err != nil {
		return 0, p.err
	}
	data, rej := boundedJSON(pl.Data, p.inv.host.limit)
	if rej != nil {
		rej.Item = p.it.key
		return 0, p.inv.reject(p.it, rej)
	}
	v := &Value{Schema: pl.Schema, Version: pl.Version, Payload: data}
	return p.inv.update(p.it, v, pl.Revision, nil)
}

// Flush delivers the item's latest accepted value at once, without waiting
// for the cadence window, and returns when subscribers have it. A tool that
// must be sure its final artifact checkpoint is visible before it returns
// calls it; closure flushes anyway.
func (p *Presentation) Flush(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	inv := p.inv
	inv.mu.Lock()
	if inv.state != scopeOpen {
		inv.mu.Unlock()
		return &RejectError{Reason: ReasonClosed, Item: p.it.key}
	}
	if p.it.stopTimer != nil {
		p.it.stopTimer()
		p.it.stopTimer = nil
	}
	if p.it.rev > p.it.published {
		inv.publishItem(p.it, inv.host.clock.Now())
	}
	inv.unlockAndDrain(true)
	return nil
}

// update is the single path every accepted value takes: checks that need the
// scope, revision assignment, and cadence scheduling. check runs under the
// lock for checks that depend on item state (artifacts).
func (inv *Invocation) update(it *item, v *Value, offered Revision, check func() *RejectError) (Revision, error) {
	inv.mu.Lock()
	if inv.state != scopeOpen {
		inv.mu.Unlock()
		return 0, inv.reject(it, &RejectError{Reason: ReasonClosed, Item: it.key})
	}
	if !v.Draft {
		if _, ok := inv.producer.adapter(v.Schema, v.Version); !ok {
			inv.mu.Unlock()
			return 0, inv.reject(it, &RejectError{Reason: ReasonSchema, Item: it.key,
				Detail: "schema and version are not declared by an adapter in the producer's manifest"})
		}
	}
	if offered != 0 && offered <= it.rev {
		inv.mu.Unlock()
		return 0, inv.reject(it, &RejectError{Reason: ReasonStale, Item: it.key, Limit: int64(it.rev), Actual: int64(offered)})
	}
	if check != nil {
		if rej := check(); rej != nil {
			inv.mu.Unlock()
			return 0, inv.reject(it, rej)
		}
	}
	rev := offered
	if rev == 0 {
		rev = it.rev + 1
	}
	if it.rev > it.published {
		inv.host.m.coalesced.Add(1) // the unpublished value is superseded
	}
	it.rev = rev
	it.cur = v
	inv.host.m.noteAccepted(v.Size())
	inv.schedule(it)
	inv.unlockAndDrain(false)
	return rev, nil
}

// schedule delivers the item's current value now if its cadence window is open, or
// arms one timer that delivers the latest value when the window opens.
// Called with inv.mu held.
func (inv *Invocation) schedule(it *item) {
	h := inv.host
	now := h.clock.Now()
	if h.cadence <= 0 {
		inv.publishItem(it, now)
		return
	}
	if it.stopTimer != nil {
		return // the armed timer will deliver whatever is latest then
	}
	wait := h.cadence - now.Sub(it.lastPub)
	if it.lastPub.IsZero() || wait <= 0 {
		inv.publishItem(it, now)
		return
	}
	it.timerSeq++
	seq := it.timerSeq
	it.stopTimer = h.clock.AfterFunc(wait, func() { inv.windowOpened(it, seq) })
}

// windowOpened delivers the latest value when an item's cadence window
// opens. seq identifies the timer, so a timer that fired while Flush was
// stopping it cannot clear a newer timer's handle.
func (inv *Invocation) windowOpened(it *item, seq uint64) {
	inv.mu.Lock()
	if seq != it.timerSeq || it.stopTimer == nil {
		inv.mu.Unlock()
		return
	}
	it.stopTimer = nil
	if inv.state == scopeOpen && it.rev > it.published {
		inv.publishItem(it, inv.host.clock.Now())
	}
	inv.unlockAndDrain(false)
}

// publishItem queues the item's current value for subscribers. Called with
// inv.mu held.
func (inv *Invocation) publishItem(it *item, now time.Time) {
	it.published = it.rev
	it.lastPub = now
	inv.host.m.published.Add(1)
	inv.emit(Change{Item: it.key, Retention: it.retention, Revision: it.rev, Open: true, Value: it.cur})
}

func (inv *Invocation) emit(c Change) {
	c.Invocation = inv.id
	c.Tool = inv.tool
	c.Generation = inv.host.gen
	inv.outbox = append(inv.outbox, c)
	inv.emitted++
}

// unlockAndDrain releases inv.mu after delivering queued changes in order.
// Exactly one goroutine delivers at a time and never under the lock, so
// subscribers may call back into the host. With wait, it returns only when
// everything queued so far has been delivered, even by another goroutine.
func (inv *Invocation) unlockAndDrain(wait bool) {
	target := inv.emitted
	if inv.draining {
		for wait && inv.delivered < target {
			inv.cond.Wait()
		}
		inv.mu.Unlock()
		return
	}
	inv.draining = true
	for len(inv.outbox) > 0 {
		batch := inv.outbox
		inv.outbox = nil
		inv.mu.Unlock()
		for _, c := range batch {
			inv.host.publish(c)
		}
		inv.mu.Lock()
		inv.delivered += uint64(len(batch))
		inv.cond.Broadcast()
	}
	inv.draining = false
	inv.cond.Broadcast()
	inv.mu.Unlock()
}

// reject counts a refused update in the metrics and the invocation's
// diagnostics and logs it, bounded: the first rejection of each reason and
// then each power of two. Nothing of the payload is logged.
func (inv *Invocation) reject(it *item, rej *RejectError) error {
	h := inv.host
	h.m.rejected[rej.Reason].Add(1)
	inv.mu.Lock()
	d := &inv.diag[rej.Reason]
	d.Reason = rej.Reason
	d.Count++
	d.Limit, d.LastSize = rej.Limit, rej.Actual
	n := d.Count
	inv.mu.Unlock()
	if n&(n-1) == 0 {
		h.log.Warn("toolview: presentation update rejected",
			"tool", inv.tool, "reason", rej.Reason.String(), "count", n,
			"size", rej.Actual, "limit", rej.Limit)
	}
	return rej
}

func (inv *Invocation) diagnostics() []Diagnostic {
	var out []Diagnostic
	for _, d := range inv.diag {
		if d.Count > 0 {
			out = append(out, d)
		}
	}
	return out
}

// Diagnostics returns the invocation's rejection summaries so far.
func (inv *Invocation) Diagnostics() []Diagnostic {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.diagnostics()
}

// Invoke validates the complete arguments against the tool's schema, runs fn
// with them and closes the scope when fn returns, panics or fails. The
// record's start is when Invoke was called, so its duration is the call's
// execution only. It returns
// the closure record. Calling it twice, or after closure, returns the record
// of the first closure without running fn.
func (inv *Invocation) Invoke(ctx context.Context, args []byte, fn ToolFunc) Record {
	inv.mu.Lock()
	if inv.invoked || inv.state != scopeOpen {
		for inv.record == nil || inv.draining {
			inv.cond.Wait()
		}
		rec := inv.record.clone()
		inv.mu.Unlock()
		return rec
	}
	inv.invoked = true // drafts end here
	inv.draft.clear()
	// The tool starts running now: its duration is its execution, not the
	// time the model spent writing its arguments or the call spent waiting
	// for approval (or behind another call's approval) since Open.
	inv.start = inv.host.clock.Now()
	inv.mu.Unlock()

	if inv.producer != nil {
		if err := inv.producer.ValidateArguments(inv.tool, args); err != nil {
			rec, _ := inv.Close(Outcome{Status: transcript.ToolFailed, Reason: "invalid_arguments"},
				Result{Text: err.Error(), IsError: true})
			return rec
		}
	}
	res, out := inv.call(ctx, args, fn)
	rec, _ := inv.Close(out, res)
	return rec
}

func (inv *Invocation) call(ctx context.Context, args []byte, fn ToolFunc) (res Result, out Outcome) {
	defer func() {
		if p := recover(); p != nil {
			inv.host.log.Error("toolview: tool panicked", "tool", inv.tool, "stack_bytes", len(debug.Stack()))
			res = Result{Text: "the tool failed unexpectedly", IsError: true}
			out = Outcome{Status: transcript.ToolFailed, Reason: "panicked"}
		}
	}()
	res, err := fn(ctx, inv, append([]byte(nil), args...))
	var fail *Failure
	switch {
	case errors.As(err, &fail):
		out = Outcome{Status: transcript.ToolFailed, Reason: fail.Reason}
	case err != nil && errors.Is(err, context.Canceled):
		out = Outcome{Status: transcript.ToolFailed, Reason: "canceled"}
	case err != nil:
		out = Outcome{Status: transcript.ToolFailed, Reason: "error"}
	case res.IsError:
		out = Outcome{Status: transcript.ToolFailed, Reason: "error"}
	default:
		out = Outcome{Status: transcript.ToolOK}
	}
	if err != nil {
		res.IsError = true
		if res.Text == "" {
			res.Text = err.Error()
		}
	}
	return res, out
}

// Close is the invocation's one ordering boundary. In order: stop accepting
// updates; cancel pending cadence timers (the latest accepted value is the
// item's current value, so nothing accepted is lost); fix the end time and
// duration; checkpoint each retained item's latest value and remove each
// ephemeral item's value and artifacts; deliver the closing changes; and from
// then on reject every update. Closing again returns the first record and
// ErrClosed: closed is absorbing. Returning from Invoke and host teardown
// call it; tools normally do not.
func (inv *Invocation) Close(out Outcome, res Result) (Record, error) {
	h := inv.host
	inv.mu.Lock()
	if inv.state != scopeOpen {
		for inv.record == nil || inv.draining {
			inv.cond.Wait()
		}
		rec := inv.record.clone()
		inv.mu.Unlock()
		return rec, ErrClosed
	}
	inv.state = scopeClosed // stop accepting
	end := h.clock.Now()
	if out.Status == "" {
		out.Status = transcript.ToolOK
	}
	rec := &Record{
		Invocation: inv.id,
		Tool:       inv.tool,
		Generation: h.gen,
		Outcome:    out,
		Start:      inv.start,
		End:        end,
		Duration:   end.Sub(inv.start),
		Result:     res,
	}
	if inv.producer != nil {
		rec.Producer = inv.producer.Name
	}
	inv.draft.clear()
	var closing []Change
	for _, it := range inv.order {
		if it.stopTimer != nil {
			it.stopTimer()
			it.stopTimer = nil
		}
		keep := it.retention == Retained && it.cur != nil && !it.cur.Draft
		var ref string
		if keep && it.cur.Artifact != nil {
			ref = it.cur.Artifact.Ref
		}
		inv.closeArtifacts(it, ref)
		c := Change{Item: it.key, Retention: it.retention, Revision: it.rev}
		if keep {
			cp := it.cur.checkpoint(it.rev)
			h.m.retainedCheckpoints.Add(1)
			c.Value = it.cur
			if it.key == "" {
				rec.Presentation = cp
			} else {
				rec.Supplementals = append(rec.Supplementals, transcript.KeyedPresentation{Key: it.key, Presentation: *cp})
			}
		} else {
			if it.retention == Ephemeral && it.cur != nil {
				h.m.ephemeralRemoved.Add(1)
			}
			it.cur = nil
		}
		it.published = it.rev
		closing = append(closing, c)
	}
	rec.Diagnostics = inv.diagnostics()
	inv.record = rec
	// Supplementals first, the primary last, carrying the record: a client
	// that sees the record has seen every item's terminal value.
	for i := len(closing) - 1; i >= 0; i-- {
		if closing[i].Item == "" {
			c := closing[i]
			closing = append(closing[:i], closing[i+1:]...)
			c.Record = rec
			closing = append(closing, c)
			break
		}
	}
	for _, c := range closing {
		inv.emit(c)
	}
	h.retire(inv, rec)
	inv.unlockAndDrain(true)
	return rec.clone(), nil
}

// boundedJSON checks the encoded size against the bound before doing any
// work, then copies and compacts the payload, so what the host keeps is
// independent of the caller's buffer and has one canonical spacing (the live
// view, reconnect and replay then carry identical bytes).
func boundedJSON(b []byte, limit int64) (jsontext.Value, *RejectError) {
	if n := int64(len(b)); n > limit {
		return nil, &RejectError{Reason: ReasonOversized, Limit: limit, Actual: n}
	}
	v := jsontext.Value(append([]byte(nil), b...))
	if err := v.Compact(); err != nil {
		return nil, &RejectError{Reason: ReasonMalformed, Detail: "payload is not a valid JSON value"}
	}
	return v, nil
}

// Diagnose records a rejection that happened outside the handle methods,
// such as a malformed line from an out-of-process plugin. It counts toward
// metrics and the invocation's diagnostics exactly like a refused update, and
// carries only a reason and sizes.
func (inv *Invocation) Diagnose(r Reason, limit, size int64) {
	if r >= numReasons {
		r = ReasonPlugin
	}
	inv.reject(inv.primary, &RejectError{Reason: r, Limit: limit, Actual: size})
}

// PayloadLimit returns the host's encoded payload bound.
func (inv *Invocation) PayloadLimit() int64 { return inv.host.limit }

// Failure is an error a tool returns to choose the outcome reason recorded at
// closure (a fixed classification such as "plugin_exited").
type Failure struct {
	Reason string
	Err    error
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }
