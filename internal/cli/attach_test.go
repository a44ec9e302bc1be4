//go:build linux

package cli

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/transcript"
)

// demoSession is a chat session over data with the demo model streaming
// rate tokens a second.
func demoSession(t *testing.T, data, rate string) *chatSession {
	t.Helper()
	env := func(k string) string {
		if k == "FOLIO_DEMO_RATE" {
			return rate
		}
		return ""
	}
	cfg, prov, err := provider.Load(provider.Options{DataDir: data, Provider: "demo", Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newChatSession(data, cfg, prov, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// until polls ok until it holds.
func until(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
	}
}

// ownerAndAttached is a chat owning a conversation whose long turn runs,
// serving it on its endpoint, and a second chat of the same process
// attached to it by resume.
func ownerAndAttached(t *testing.T) (owner, att *chatSession) {
	t.Helper()
	data := t.TempDir()
	owner = demoSession(t, data, "40")
	t.Cleanup(owner.close)
	if err := owner.serveLocal(context.Background(), owner.model); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.eng.Send(context.Background(), "t1", "write a long essay about streaming", nil); err != nil {
		t.Fatal(err)
	}
	until(t, "the owner's turn and its log", func() bool {
		_, running := owner.eng.Store().Snapshot().Live.Turn()
		_, err := os.Stat(owner.path)
		return running && err == nil
	})
	att = demoSession(t, data, "40")
	t.Cleanup(att.close)
	if err := att.resume(owner.id); err != nil {
		t.Fatal(err)
	}
	if att.attached() == "" {
		t.Fatal("the second chat owns the conversation; want it attached to the first")
	}
	until(t, "the owner's turn in the mirror", func() bool {
		t, ok := att.eng.Store().Snapshot().Live.Turn()
		return ok && t.Entry != ""
	})
	return owner, att
}

func lists(s *chatSession, id string) bool {
	for _, c := range s.eng.Store().Snapshot().Live.Queue.All() {
		if c.ID == id && c.State == transcript.CommandRejected {
			return true
		}
	}
	return false
}

// TestAttachedDismissReachesTheOwner: a send an attached terminal queued
// behind the owner's turn comes back as a draft when that turn is stopped,
// and the owner's engine lists it (the owner's screen shows it); when the
// attached terminal's person takes it back, the owner stops listing it. A
// second dismiss of it is unknown, as on a local engine.
func TestAttachedDismissReachesTheOwner(t *testing.T) {
	owner, att := ownerAndAttached(t)
	ce := chatEngine{att}
	if r, err := ce.Transport()(t.Context(), "q1", "queued behind the essay", false); err != nil || r.State != transcript.CommandQueued {
		t.Fatalf("a send behind the owner's turn: %+v %v", r, err)
	}
	if !ce.Stop() {
		t.Fatal("the attached stop was refused")
	}
	until(t, "the owner to list the draft it gave back", func() bool { return lists(owner, "q1") })
	if err := ce.Dismiss("q1"); err != nil {
		t.Fatalf("dismiss: %v", err)
	}
	if lists(owner, "q1") {
		t.Errorf("the owner still lists q1 after the attached terminal took it back")
	}
	if err := ce.Dismiss("q1"); !errors.Is(err, engine.ErrUnknownCommand) {
		t.Errorf("a second dismiss: %v, want engine.ErrUnknownCommand", err)
	}
}
