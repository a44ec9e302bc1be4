package engine_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/transcript"
)

// lastAgent is the markdown of the log's last agent entry, as a reader of
// the file sees it now.
func (h *harness) lastAgent() string {
	h.t.Helper()
	es := h.reload().Document.Entries()
	for i := len(es) - 1; i >= 0; i-- {
		if a, ok := es[i].Content.(transcript.Agent); ok {
			return a.Markdown
		}
	}
	return ""
}

// A streaming answer reaches the log while it streams: 2 s after the last
// save, and after 8 KiB, whichever comes first; not only when the step
// ends, and not only when the next event arrives: text accepted before the
// provider goes silent is saved on time.
func TestStreamingAnswerIsSavedWhileItStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g1, g2 := make(chan struct{}), make(chan struct{})
		big := strings.Repeat("x", 8<<10)
		p := newScripted(cat(text("one "), pause(1900*time.Millisecond), text("two "), gate(g1),
			text("three "), gate(g2), text(big), block()))
		h := newHarness(t, p)
		if _, err := h.eng.Send(context.Background(), "c1", "go", nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(1900 * time.Millisecond) // the bubble's clock: "two " arrives at 1.9 s
		synctest.Wait()
		if got := h.lastAgent(); got != "" {
			t.Fatalf("saved before 2 s or 8 KiB: %q", got)
		}
		// The provider stays silent: no event arrives, yet at 2 s the
		// accepted text is in the log.
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if got := h.lastAgent(); got != "one two " {
			t.Fatalf("2 s into a stall the log holds %q", got)
		}
		// "three " comes right after that save and waits for its 2 s.
		close(g1)
		synctest.Wait()
		if got := h.lastAgent(); got != "one two " {
			t.Fatalf("saved again before 2 s: %q", got)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := h.lastAgent(); got != "one two three " {
			t.Fatalf("2 s after the last save the log holds %q", got)
		}
		close(g2)
		synctest.Wait()
		if got := h.lastAgent(); got != "one two three "+big {
			t.Fatalf("after 8 KiB the log holds %d bytes of the answer", len(got))
		}
		h.eng.Stop()
	})
}

// The turn receipt's finishedAt is when the turn's last step completed, not
// when the turn started: with the bubble's clock, the answer takes 5 s
// after a 3 s tool-free first step.
func TestReceiptFinishedAtIsTheLastStepsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(cat(pause(3*time.Second), text("an answer"), pause(2*time.Second), done()))
		h := newHarness(t, p)
		start := time.Now()
		h.send("c1", "go")
		var rc transcript.TurnReceipt
		for _, e := range h.entries() {
			if r, ok := e.Content.(transcript.TurnReceipt); ok {
				rc = r
			}
		}
		if rc.FinishedAt == nil {
			t.Fatal("no finishedAt")
		}
		if want := start.Add(5 * time.Second).UnixMilli(); *rc.FinishedAt != want {
			t.Fatalf("finishedAt %d, want %d (the turn started at %d)", *rc.FinishedAt, want, start.UnixMilli())
		}
	})
}
