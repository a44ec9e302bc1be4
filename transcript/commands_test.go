package transcript

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func cmdIDs(c Commands) string {
	var out []string
	for _, x := range c.All() {
		out = append(out, x.ID+":"+string(x.State))
	}
	return strings.Join(out, " ")
}

// The queue, steers and approvals are live state: published in one
// snapshot, unchanged lists publish nothing, a client's deliveries follow
// the engine's commands and give way to them by ID, and a new lifetime
// starts with none of it.
func TestCommandsAndApprovalsAreLiveState(t *testing.T) {
	t.Parallel()
	s := instant()
	l := s.Lease()
	queue := NewCommands(Command{ID: "a", State: CommandRunning}, Command{ID: "b", State: CommandQueued})
	steers := NewCommands(Command{ID: "s", Steer: true, State: CommandRunning})
	aps := NewApprovals(PendingApproval{ID: "inv", Tool: "shell", Args: `{"command":"ls"}`})
	if err := errors.Join(l.SetCommands(queue, steers), l.SetApprovals(aps),
		l.SetDeliveries(NewCommands(
			Command{ID: "b", State: CommandUncertain}, // the engine has it: hidden
			Command{ID: "c", State: CommandPending},   // the engine does not yet
			Command{ID: "t", Steer: true, State: CommandPending}))); err != nil {
		t.Fatal(err)
	}
	live := s.Snapshot().Live
	if got := cmdIDs(live.Queue); got != "a:running b:queued c:pending" {
		t.Errorf("queue %q", got)
	}
	if got := cmdIDs(live.Steers); got != "s:running t:pending" {
		t.Errorf("steers %q", got)
	}
	if a, ok := live.Approvals.Get("inv"); !ok || a.Tool != "shell" || live.Approvals.Len() != 1 {
		t.Errorf("approvals %+v", live.Approvals)
	}

	sub := s.Subscribe()
	defer sub.Close()
	<-sub.C()
	if err := l.SetCommands(NewCommands(queue.list()...), steers); err != nil {
		t.Fatal(err)
	}
	if err := l.SetApprovals(NewApprovals(aps.list()...)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.C():
		t.Error("equal lists published a snapshot")
	default:
	}

	snap := s.Replace(s.Snapshot().Document)
	if !reflect.DeepEqual(snap.Live, Live{}) {
		t.Errorf("a new lifetime kept %+v", snap.Live)
	}
	if err := l.SetCommands(queue, steers); !errors.Is(err, ErrLeaseRetired) {
		t.Errorf("write through a retired lease: %v", err)
	}
}

func TestPreviewIsBoundedOnARune(t *testing.T) {
	t.Parallel()
	if p := Preview("short"); p != "short" {
		t.Errorf("%q", p)
	}
	p := Preview("a" + strings.Repeat("€", PreviewBytes))
	if !utf8.ValidString(p) || !strings.HasSuffix(p, "€…") || len(p) > PreviewBytes+len("…") {
		t.Errorf("%d bytes: %q", len(p), p[len(p)-10:])
	}
}

// A child's open entry is updated in its feed; the main document is not
// touched.
func TestChildUpdateStaysInItsFeed(t *testing.T) {
	t.Parallel()
	s := instant()
	l := s.Lease()
	cw, err := l.StartChild("helper")
	if err != nil {
		t.Fatal(err)
	}
	id, err := cw.Open(Tool{Receipt: ToolReceipt{App: "shell", Summary: "ls", Status: ToolFailed, Reason: "running", NotDone: "not done"}})
	if err != nil {
		t.Fatal(err)
	}
	done := Tool{Receipt: ToolReceipt{App: "shell", Summary: "ls -la", Status: ToolOK}}
	if err := cw.Update(id, done); err != nil {
		t.Fatal(err)
	}
	if err := l.Update(id, done); !errors.Is(err, ErrNotFound) {
		t.Errorf("the main document knows the child's entry: %v", err)
	}
	snap := s.Snapshot()
	feed := snap.Live.Children.At(0).Feed
	if snap.Document.Len() != 0 || !feed.IsOpen(0) || feed.At(0).Content.(Tool).Receipt.Summary != "ls -la" {
		t.Errorf("main %d entries, feed %+v", snap.Document.Len(), feed.At(0))
	}
	if err := cw.Settle(id, nil); err != nil {
		t.Fatal(err)
	}
	if err := cw.Update(id, done); !errors.Is(err, ErrSettled) && !errors.Is(err, ErrNotFound) {
		t.Errorf("update of a settled entry: %v", err)
	}
}

// TestRunningTurnInLive: the running turn is published in Live, survives
// a Replace (the same session goes on), and a new session starts idle.
func TestRunningTurnInLive(t *testing.T) {
	s := NewStore()
	if _, ok := s.Snapshot().Live.Turn(); ok {
		t.Fatal("a new store has a running turn")
	}
	turn := Turn{CommandID: "k1", Entry: "u1", Reply: "a1"}
	if err := s.Lease().Do(func(tx *Tx) error { tx.SetTurn(&turn); return nil }); err != nil {
		t.Fatal(err)
	}
	turn.Reply = "changed after publishing"
	if got, ok := s.Snapshot().Live.Turn(); !ok || got != (Turn{CommandID: "k1", Entry: "u1", Reply: "a1"}) {
		t.Fatalf("published turn: %+v %v", got, ok)
	}
	s.Replace(s.Snapshot().Document)
	if got, ok := s.Snapshot().Live.Turn(); !ok || got.CommandID != "k1" {
		t.Fatalf("after a replace: %+v %v", got, ok)
	}
	s.Clear("d2")
	if got, ok := s.Snapshot().Live.Turn(); ok {
		t.Fatalf("a new session kept the turn %+v", got)
	}
}

// TestCommandStatesFinal: exactly the states a command cannot leave are
// final.
func TestCommandStatesFinal(t *testing.T) {
	var final []CommandState
	for _, s := range CommandStates() {
		if s.Final() {
			final = append(final, s)
		}
	}
	want := []CommandState{CommandApplied, CommandDone, CommandFailed, CommandStopped, CommandRejected, CommandRemoved}
	if !slices.Equal(final, want) {
		t.Fatalf("final states %v, want %v", final, want)
	}
}
