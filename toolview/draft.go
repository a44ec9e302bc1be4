package toolview

import (
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// draftState is the host's bounded observation of the model's argument
// fragments for one invocation. Its bytes are shown through the producer's
// draft adapter, if it declares one, and go nowhere else: not to argument
// validation, not to authorization, not to the tool.
type draftState struct {
	mu        sync.Mutex // serializes draft calls so their values publish in order
	text      []byte     // bounded head, kept only when a draft adapter is declared
	total     int64      // UTF-8 byte offset of the end of the observed arguments
	truncated bool       // the head was cut; only checkpoints continue it
	gap       bool       // a non-contiguous append was seen; a checkpoint must follow
}

func (d *draftState) clear() { d.text = nil }

// Draft is the host-owned handle through which the engine reports argument
// fragments as the model streams them. Tools never see it.
type Draft struct{ inv *Invocation }

// Draft returns the invocation's argument-draft handle.
func (inv *Invocation) Draft() *Draft { return &Draft{inv: inv} }

// Append adds a contiguous fragment that starts at UTF-8 byte offset off of
// the arguments. A fragment that does not start where the last one ended is a
// gap: it is rejected, and so is every append until a Checkpoint replaces the
// draft. After the draft was truncated, only checkpoints continue it.
func (d *Draft) Append(off int64, fragment []byte) error {
	inv := d.inv
	ds := &inv.draft
	ds.mu.Lock()
	defer ds.mu.Unlock()
	inv.mu.Lock()
	if err := inv.draftOpen(); err != nil {
		inv.mu.Unlock()
		return err
	}
	var rej *RejectError
	switch {
	case ds.truncated:
		rej = &RejectError{Reason: ReasonDraftTruncated, Detail: "the draft was truncated; continue with checkpoints"}
	case ds.gap:
		rej = &RejectError{Reason: ReasonDraftGap, Detail: "a gap was seen; send a checkpoint"}
	case off != ds.total:
		ds.gap = true
		rej = &RejectError{Reason: ReasonDraftGap, Limit: ds.total, Actual: off, Detail: "fragment is not contiguous; send a checkpoint"}
	}
	if rej != nil {
		inv.mu.Unlock()
		return inv.reject(inv.primary, rej)
	}
	ds.total += int64(len(fragment))
	inv.host.m.draftBytes.Add(int64(len(fragment)))
	adapter, shown := inv.producer.draftAdapter()
	if !shown {
		inv.mu.Unlock()
		return nil // nothing displays drafts, so their bytes are not kept
	}
	ds.text = append(ds.text, fragment...)
	v := inv.draftValue(adapter)
	inv.mu.Unlock()
	_, err := inv.update(inv.primary, v, 0, nil)
	return err
}

// Checkpoint replaces the draft with a bounded head of the arguments: text is
// what is shown, total the UTF-8 byte length of the arguments so far, and
// truncated says whether text is only a head of them. It clears a gap, and it
// is the only way to continue a truncated draft.
func (d *Draft) Checkpoint(text []byte, total int64, truncated bool) error {
	inv := d.inv
	ds := &inv.draft
	ds.mu.Lock()
	defer ds.mu.Unlock()
	inv.mu.Lock()
	if err := inv.draftOpen(); err != nil {
		inv.mu.Unlock()
		return err
	}
	if int64(len(text)) > inv.host.limit || total < int64(len(text)) {
		inv.mu.Unlock()
		return inv.reject(inv.primary, &RejectError{Reason: ReasonOversized, Limit: inv.host.limit, Actual: int64(len(text)),
			Detail: "a draft checkpoint must be bounded and no longer than its total"})
	}
	ds.total = total
	ds.gap = false
	ds.truncated = truncated || total > int64(len(text))
	inv.host.m.draftCheckpoints.Add(1)
	adapter, shown := inv.producer.draftAdapter()
	if !shown {
		inv.mu.Unlock()
		return nil
	}
	ds.text = append(ds.text[:0], text...)
	v := inv.draftValue(adapter)
	inv.mu.Unlock()
	_, err := inv.update(inv.primary, v, 0, nil)
	return err
}

// Invalidate tells the host that continuity of the argument stream was lost
// (the engine lagged, or the provider connection was re-established): every
// append is refused until a Checkpoint replaces the draft.
func (d *Draft) Invalidate() {
	ds := &d.inv.draft
	ds.mu.Lock()
	defer ds.mu.Unlock()
	d.inv.mu.Lock()
	ds.gap = true
	d.inv.mu.Unlock()
}

func (inv *Invocation) draftOpen() error {
	if inv.state != scopeOpen {
		return inv.rejectLocked(&RejectError{Reason: ReasonClosed})
	}
	if inv.invoked {
		return ErrDraftFinished
	}
	return nil
}

// rejectLocked is reject for callers holding inv.mu.
func (inv *Invocation) rejectLocked(rej *RejectError) error {
	inv.mu.Unlock()
	err := inv.reject(inv.primary, rej)
	inv.mu.Lock()
	return err
}

// draftValue builds the host-owned draft payload,
// {"text":…,"bytes":N,"truncated":B}, cutting the shown head (at a rune
// boundary) until the encoded payload fits the bound. Called with inv.mu held.
func (inv *Invocation) draftValue(a AdapterDecl) *Value {
	ds := &inv.draft
	text := ds.text
	truncated := ds.truncated
	for {
		// A fragment may end inside a multi-byte character; show only
		// whole characters.
		shown := trimPartialRune(text)
		b := []byte(`{"text":`)
		b, _ = jsontext.AppendQuote(b, shown)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, ds.total, 10)
		b = append(b, `,"truncated":`...)
		b = strconv.AppendBool(b, truncated)
		b = append(b, '}')
		if int64(len(b)) <= inv.host.limit {
			return &Value{Schema: a.Schema, Version: a.Version, Payload: b, Draft: true}
		}
		text = text[:len(text)/2]
		truncated = true
		ds.truncated = true
		ds.text = text
	}
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}
