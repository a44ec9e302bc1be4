//go:build linux

package cli

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/transcript"
)

// demoSession is a chat session over data with the demo model streaming
// rate tokens a second.
func demoSession(t *testing.T, data, rate string, allow ...string) *chatSession {
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
	s, err := newChatSession(data, cfg, prov, t.TempDir(), allow)
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

// ownerAndAttached is a chat owning a conversation whose long turn (on
// prompt) runs, allowing allow, serving it on its endpoint, and a second
// chat of the same process attached to it by resume.
func ownerAndAttached(t *testing.T, prompt string, allow ...string) (owner, att *chatSession) {
	t.Helper()
	data := t.TempDir()
	owner = demoSession(t, data, "40", allow...)
	t.Cleanup(owner.close)
	if err := owner.serveLocal(context.Background(), owner.model); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.eng.Send(context.Background(), "t1", prompt, nil); err != nil {
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
	owner, att := ownerAndAttached(t, "write a long essay about streaming")
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

// TestAttachedSeesAllowedUsageAndSubAgents: a terminal attached to an
// owner whose turn runs a sub-agent shows what the owner's footer and
// regions show: the tools the owner's session allows, the session's usage
// totals, and the running sub-agent's region (under the owner's region
// ID, which approvals name) with the last line of its feed.
func TestAttachedSeesAllowedUsageAndSubAgents(t *testing.T) {
	owner, att := ownerAndAttached(t, `/demo call task {"label":"essayist","prompt":"write a long essay about streaming"}`, "task", "read_file")
	if got := (chatEngine{att}).Allowed(); !slices.Equal(got, owner.eng.Allowed()) || len(got) != 2 {
		t.Errorf("the attached terminal allows %q; the owner %q", got, owner.eng.Allowed())
	}
	var child transcript.ChildRegion
	until(t, "the owner's sub-agent to stream", func() bool {
		for _, c := range owner.eng.Store().Snapshot().Live.Children.All() {
			if !c.Done && c.Feed.Len() > 0 {
				child = c
				return true
			}
		}
		return false
	})
	until(t, "the sub-agent's region in the mirror, with its last line", func() bool {
		c, ok := att.eng.Store().Snapshot().Live.Children.Get(child.ID)
		return ok && !c.Done && c.Label == "essayist" && c.Feed.Len() == 1 && c.Feed.At(0).Content.(transcript.Agent).Markdown != ""
	})
	until(t, "the owner's usage totals in the mirror", func() bool {
		got, want := att.eng.Store().Snapshot().Live.Totals, owner.eng.Store().Snapshot().Live.Totals
		return want.OutputTokens > 0 && got == want
	})
	// The region leaves the mirror when the sub-agent is done.
	owner.eng.Stop()
	until(t, "the region to leave the mirror", func() bool {
		_, ok := att.eng.Store().Snapshot().Live.Children.Get(child.ID)
		return !ok
	})
}
