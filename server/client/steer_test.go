//go:build linux

package client_test

import (
	"testing"
	"time"

	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/transcript"
)

// TestAttachedSeesPhasesAndSteers: a client attached to a terminal's
// engine sees what the owner's footer shows of a running turn (the
// thinking phase, a retry the owner waits on, the prompt's context) and
// a steer it sends waits in its mirror's steers until the owner applies
// it, where its steering entry appears.
func TestAttachedSeesPhasesAndSteers(t *testing.T) {
	o := newTerminalOwner(t, 150)
	cv, st := o.attach(t)
	if _, err := o.eng.Send(t.Context(), "t1", "why is the sky blue?", nil); err != nil {
		t.Fatal(err)
	}
	// The demo model reasons first: the owner's footer says thinking, and
	// so must the mirror's (an owner that said nothing read as streaming).
	waitFor(t, st, "the thinking phase", func(s transcript.Snapshot) bool {
		return running(s) && s.Live.Activity == transcript.ActivityThinking
	})

	// A retry the owner's footer counts down reaches the mirror whole.
	at := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	if err := o.eng.Store().Lease().SetRetry(transcript.Retry{Attempt: 2, Reason: "rate-limited", At: at}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, st, "the owner's retry", func(s transcript.Snapshot) bool {
		r := s.Live.Retry
		return r.Attempt == 2 && r.Reason == "rate-limited" && r.At.Equal(at)
	})
	if err := o.eng.Store().Lease().SetRetry(transcript.Retry{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, st, "the retry cleared", func(s transcript.Snapshot) bool { return !s.Live.Retry.Pending() })
	if r := waitReceipt(t, cv, "t1"); r.State != transcript.CommandDone {
		t.Fatalf("t1: %+v", r)
	}

	// A turn held on a tool call's approval applies no steer until the
	// call is decided: meanwhile the steer waits, in the mirror too.
	if _, err := o.eng.Send(t.Context(), "t2", `/demo call shell {"command":"echo steered"}`, nil); err != nil {
		t.Fatal(err)
	}
	ap := waitFor(t, st, "the call's approval", func(s transcript.Snapshot) bool { return s.Live.Approvals.Len() == 1 })
	r, err := cv.Send(t.Context(), "st1", "be brief", true)
	if err != nil || r.State != transcript.CommandRunning {
		t.Fatalf("steer: %+v %v", r, err)
	}
	waitFor(t, st, "the steer waiting for the next step", func(s transcript.Snapshot) bool {
		for _, c := range s.Live.Steers.All() {
			if c.ID == "st1" && c.Steer && c.State == transcript.CommandRunning && c.Preview == "be brief" {
				return true
			}
		}
		return false
	})
	if r, err := cv.Approve(t.Context(), "a1", ap.Live.Approvals.At(0).ID, true, "once"); err != nil || r.State == transcript.CommandRejected {
		t.Fatalf("approve: %+v %v", r, err)
	}
	if r := waitReceipt(t, cv, "t2"); r.State != transcript.CommandDone {
		t.Fatalf("t2: %+v", r)
	}
	s := waitFor(t, st, "idle, the steer applied", func(s transcript.Snapshot) bool {
		return !running(s) && s.Live.Steers.Len() == 0 && s.Live.Activity == transcript.ActivityIdle
	})
	steered := false
	for _, e := range s.Document.All() {
		if c, ok := e.Content.(transcript.Steering); ok && c.Text == "be brief" {
			steered = true
		}
	}
	if !steered {
		t.Errorf("no steering entry in the mirror: %s", kinds(s.Document))
	}
	if rs, _ := cv.Status(t.Context(), "st1"); rs.State != transcript.CommandApplied {
		t.Errorf("st1: %+v, want applied", rs)
	}
	want := o.eng.Store().Snapshot().Live.PromptContext
	waitFor(t, st, "the owner's prompt context", func(s transcript.Snapshot) bool {
		return want > 0 && s.Live.PromptContext == want
	})
	compareWithLog(t, o.data, o.id, s.Document)
}

// TestAttachedWhileTheOwnersProgramReadsChanged: a terminal chat's own
// program reads its engine's Changed channel too, and takes its signals
// (one channel per engine). The client attached to it still sees the
// owner's own turn start, think and end, and the receipt of the owner's
// command.
func TestAttachedWhileTheOwnersProgramReadsChanged(t *testing.T) {
	o := newTerminalOwner(t, 150)
	stop := make(chan struct{})
	defer close(stop)
	// Readers that are always waiting, as a program's are, take nearly
	// every signal from the publisher.
	for range 32 {
		go func() {
			for {
				select {
				case <-o.eng.Changed():
				case <-stop:
					return
				}
			}
		}()
	}
	cv, st := o.attach(t)
	done := make(chan struct{})
	cv.OnReceipt(func(r server.Receipt) {
		if r.CommandID == "t1" && r.State == transcript.CommandDone {
			close(done)
		}
	})
	if _, err := o.eng.Send(t.Context(), "t1", "why is the sky blue?", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, st, "the owner's turn thinking", func(s transcript.Snapshot) bool {
		return running(s) && s.Live.Activity == transcript.ActivityThinking
	})
	waitFor(t, st, "the owner's turn to end", func(s transcript.Snapshot) bool {
		r, _ := o.eng.Status("t1")
		return r.State == transcript.CommandDone && !running(s)
	})
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the owner's command t1 ended without its done receipt reaching the client")
	}
}
