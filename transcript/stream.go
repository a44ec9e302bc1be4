package transcript

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// reasoningLabel is the label a stream writer gives reasoning entries.
const reasoningLabel = "Thinking"

// StreamWriter writes one streamed model reply into a region: the main
// document (Lease.Stream) or a child's feed (ChildWriter.Stream). A reply is
// a sequence of model steps; within a step the provider sends reasoning and
// answer text.
//
// Identity: the answer of a step gets its entry, and its ID, with the first
// accepted text, and keeps that ID through settlement; settling never adds a
// second copy. Reasoning gets one entry per step, so each step's thinking
// keeps its own identity even when views fold them together.
//
// Acceptance and pacing: text handed to Text or Reasoning belongs to the
// document at once (a save mid-stream includes it). The store's Pacing
// only chooses how much of it readers see, through Live.Visible; settlement
// reveals the rest.
//
// The first text of an entry sets the region's activity to thinking or
// responding; what follows a step (a tool, idle) is the turn loop's to set.
//
// The writer holds the lease it was made with. After the document is
// replaced or cleared, every call returns ErrLeaseRetired and its pending
// reveals never run; make a new writer for the new document. A failed write
// leaves the writer failed: later calls return the same error.
//
// Methods are safe for concurrent use, though a reply normally has one
// producer.
type StreamWriter struct {
	l      Lease
	r      region
	pacing Pacing

	mu      sync.Mutex
	answer  streamBuf
	thought streamBuf
	// thoughtDone is the ID of this step's reasoning once it has settled
	// early, when the answer began.
	thoughtDone string
	timer       *Timer
	err         error
}

// streamBuf is the accepted text of one open entry.
//
// buf is append-only: bytes below len(buf) are never written again, and
// the buffer is never truncated or reused (a new entry starts a new buffer).
// That is what makes text() safe. The string it returns aliases buf's
// array; append writes only past the current length, or, when it grows,
// copies into a fresh array and leaves the old one untouched. So every
// string handed to the document, and through snapshots to other
// goroutines, covers bytes that are frozen from the moment it is made, as
// Go requires of string data. The store's lock orders the writes before
// any reader sees the snapshot. This turns each delta into an amortized
// O(1) append instead of an O(n) copy of the whole text so far.
type streamBuf struct {
	id    string
	buf   []byte
	start time.Time
	pacer pacer
}

func (b *streamBuf) text() string {
	return unsafe.String(unsafe.SliceData(b.buf), len(b.buf))
}

// AnswerID is the ID of the current step's answer entry, or "" before its
// first text.
func (w *StreamWriter) AnswerID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.answer.id
}

// ReasoningID is the ID of the current step's reasoning entry, or "". It
// stays the same when the reasoning settles early because the answer began.
func (w *StreamWriter) ReasoningID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.thought.id != "" {
		return w.thought.id
	}
	return w.thoughtDone
}

// Text accepts a piece of answer text for the current step. Invalid UTF-8
// is replaced with U+FFFD, so what is accepted can always be saved.
func (w *StreamWriter) Text(delta string) error {
	return w.write(&w.answer, KindAgent, delta)
}

// Reasoning accepts a piece of the current step's reasoning.
func (w *StreamWriter) Reasoning(delta string) error {
	return w.write(&w.thought, KindReasoning, delta)
}

func (w *StreamWriter) write(b *streamBuf, kind Kind, delta string) error {
	if delta == "" {
		return nil
	}
	if !utf8.ValidString(delta) {
		delta = strings.ToValidUTF8(delta, "\uFFFD")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	b.buf = append(b.buf, delta...)
	src := b.text()
	err := w.l.Do(func(tx *Tx) error {
		doc, err := tx.feed(w.r)
		if err != nil {
			return err
		}
		if b.id != "" {
			doc, err = doc.Update(b.id, streamContent(kind, src))
			if err != nil {
				return err
			}
			return tx.setFeed(w.r, doc)
		}
		id, now := tx.NewID(), tx.Now()
		if kind == KindAgent && w.thought.id != "" {
			// The answer has begun, so the step's thinking is over: settle
			// it now, with the time it really took, so views can print it
			// and its duration does not count the answer's streaming.
			if doc, err = w.settleThoughtLocked(tx, doc, now); err != nil {
				return err
			}
		}
		doc, err = doc.add(Entry{ID: id, Content: streamContent(kind, src), Timestamp: now}, true, true)
		if err != nil {
			return err
		}
		if err := tx.setFeed(w.r, doc); err != nil {
			return err
		}
		act := ActivityResponding
		if kind == KindReasoning {
			act = ActivityThinking
		}
		if err := tx.regionActivity(w.r, act); err != nil {
			return err
		}
		if w.pacing.enabled() {
			tx.setReveal(id, 0)
		}
		b.id, b.start, b.pacer = id, now, pacer{cfg: w.pacing}
		return nil
	})
	if err != nil {
		w.err = err
		return err
	}
	if w.pacing.enabled() && w.timer == nil {
		// The pacer was idle: time spent waiting for the provider is not
		// owed to the reader as one burst.
		now := w.l.s.now()
		for _, b := range w.bufs() {
			b.pacer.Wake(now)
		}
		w.schedule()
	}
	return nil
}

func streamContent(kind Kind, text string) Content {
	if kind == KindReasoning {
		return Reasoning{Text: text, Label: reasoningLabel}
	}
	return Agent{Markdown: text}
}

// schedule arms the pacer's next tick. Called with w.mu held.
func (w *StreamWriter) schedule() {
	for _, b := range w.bufs() {
		if b.pacer.Cursor() >= len(b.buf) {
			continue
		}
		t, err := w.l.AfterFunc(w.pacing.Tick, w.tick)
		if err != nil {
			w.err = err
			return
		}
		w.timer = t
		return
	}
}

func (w *StreamWriter) bufs() []*streamBuf {
	var out []*streamBuf
	for _, b := range []*streamBuf{&w.thought, &w.answer} {
		if b.id != "" {
			out = append(out, b)
		}
	}
	return out
}

// tick reveals the next stretch of each open entry. It runs on a lease
// timer, so a tick queued for a replaced document never runs, and if it
// races the replacement its transaction is refused.
func (w *StreamWriter) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.err != nil {
		return
	}
	err := w.l.Do(func(tx *Tx) error {
		doc, err := tx.feed(w.r)
		if err != nil {
			return err
		}
		now := tx.Now()
		for _, b := range w.bufs() {
			if i, ok := doc.Index(b.id); !ok || !doc.IsOpen(i) {
				continue // settled by someone else: it is fully visible
			}
			if n, ok := tx.st.live.reveal[b.id]; ok {
				b.pacer.JumpTo(n) // someone flushed past the pacer
			}
			tx.setReveal(b.id, b.pacer.Advance(b.text(), now))
		}
		return nil
	})
	if err != nil {
		w.err = err
		return
	}
	w.schedule()
}

// Flush reveals all accepted text now, without settling anything.
func (w *StreamWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	err := w.l.Do(func(tx *Tx) error {
		for _, b := range w.bufs() {
			b.pacer.JumpTo(len(b.buf))
			if _, ok := tx.st.live.reveal[b.id]; ok {
				tx.setReveal(b.id, len(b.buf))
			}
		}
		return nil
	})
	if err != nil {
		w.err = err
	}
	return err
}

// EndStep settles the current step's reasoning and answer, in place and
// under the IDs they streamed with, and reveals all of their text. The
// reasoning records how long it took. The next text starts new entries.
func (w *StreamWriter) EndStep() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.endStepLocked()
}

func (w *StreamWriter) endStepLocked() error {
	if w.err != nil {
		return w.err
	}
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	err := w.l.Do(func(tx *Tx) error {
		doc, err := tx.feed(w.r)
		if err != nil {
			return err
		}
		now := tx.Now()
		if w.thought.id != "" {
			if doc, err = w.settleThoughtLocked(tx, doc, now); err != nil {
				return err
			}
		}
		if b := &w.answer; b.id != "" {
			// One copy at settlement drops the buffer's spare capacity.
			if doc, err = doc.Settle(b.id, Agent{Markdown: strings.Clone(b.text())}); err != nil {
				return err
			}
			tx.dropReveal(b.id)
		}
		return tx.setFeed(w.r, doc)
	})
	if err != nil {
		w.err = err
		return err
	}
	w.answer, w.thought, w.thoughtDone = streamBuf{}, streamBuf{}, ""
	return nil
}

// settleThoughtLocked settles the open reasoning entry with how long it
// took, and forgets it so later reasoning starts a new entry. w.mu is held.
func (w *StreamWriter) settleThoughtLocked(tx *Tx, doc Document, now time.Time) (Document, error) {
	b := &w.thought
	// A clock that stepped back must not make the entry invalid.
	ms := max(float64(now.Sub(b.start))/float64(time.Millisecond), 0)
	doc, err := doc.Settle(b.id, Reasoning{Text: strings.Clone(b.text()), Label: reasoningLabel, DurationMs: &ms})
	if err != nil {
		return doc, err
	}
	tx.dropReveal(b.id)
	w.thoughtDone = b.id
	*b = streamBuf{}
	return doc, nil
}

// Finish settles what is open, as EndStep does, and closes the writer:
// later calls return ErrStreamClosed. A stopped or failed reply finishes
// too, keeping the partial text it accepted.
func (w *StreamWriter) Finish() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.endStepLocked(); err != nil {
		return err
	}
	w.err = ErrStreamClosed
	return nil
}

// SetModel sets the model of the writer's region: the main footer for a
// main writer, the child's own for a child writer.
func (w *StreamWriter) SetModel(m string) error {
	return w.regionDo(func(tx *Tx) error { return tx.regionModel(w.r, m) })
}

// SetPromptContext sets the prompt-context token count of the region.
func (w *StreamWriter) SetPromptContext(n int64) error {
	return w.regionDo(func(tx *Tx) error { return tx.regionPromptContext(w.r, n) })
}

// AddUsage counts usage for the region; it always reaches the session
// totals.
func (w *StreamWriter) AddUsage(u Usage) error {
	return w.regionDo(func(tx *Tx) error { return tx.regionUsage(w.r, u) })
}

func (w *StreamWriter) regionDo(fn func(tx *Tx) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.l.Do(fn)
}
