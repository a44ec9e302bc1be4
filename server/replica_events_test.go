package server

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// eventLog gathers the events of one conversation a tab receives, as they
// arrive.
type eventLog struct {
	mu  sync.Mutex
	evs []frame
}

func tapEvents(c *client, conv string) *eventLog {
	l := &eventLog{}
	tap := func(f frame) {
		if f.Type == "event" && f.Conversation == conv {
			l.mu.Lock()
			l.evs = append(l.evs, f)
			l.mu.Unlock()
		}
	}
	c.tap.Store(&tap)
	return l
}

// normalised is each event without what numbers it on its server
// (generation, seq, revision, base): one line per event.
func (l *eventLog) normalised(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.evs))
	for _, f := range l.evs {
		var m map[string]any
		if err := json.Unmarshal(f.raw, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"generation", "seq", "revision", "base"} {
			delete(m, k)
		}
		b, err := json.Marshal(m, json.Deterministic(true))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// lastRunning is the last turn event that says a turn runs.
func (l *eventLog) lastRunning(t *testing.T) turnEvent {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.evs) - 1; i >= 0; i-- {
		if f := l.evs[i]; f.Op == string(OpTurn) {
			if e := f.control(t); e.State == turnRunning {
				return e
			}
		}
	}
	t.Fatal("no turn runs")
	return turnEvent{}
}

func (l *eventLog) count(op string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, f := range l.evs {
		if f.Op == op {
			n++
		}
	}
	return n
}

// A tab on a replica that does not own a conversation receives the same
// events as a tab on the owner, op for op: A's engine runs the turns; the
// commands come from B's tab (forwarded to A): a turn whose tool call
// waits for approval, approved from B; a long answer stopped from B. The
// two tabs' event streams, without their sequence numbers, are equal, and
// B's tab saw the turn, the queue, the approvals and the receipts.
func TestReplicaTabGetsTheOwnersEvents(t *testing.T) {
	url := pgtest.URL(t)
	slow := func(_ *Options, to *TurnsOptions) { to.IdleAfter = time.Minute }
	a := newReplicaServer(t, url, 400, slow)
	b := newReplicaServer(t, url, 400, slow)
	id := a.create(t)

	ca, cb := a.dial(t), b.dial(t)
	ca.open(id)
	cb.open(id)
	la, lb := tapEvents(ca, id), tapEvents(cb, id)

	// A's engine takes the conversation with a first turn sent there.
	if r := ca.send(id, "k0", "hello"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	if r := ca.finished("k0"); r.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", r)
	}
	cb.finished("k0")

	// A tool call waits for approval; B's tab sees it and approves it.
	if r := cb.send(id, "k1", "list the files in this folder"); r.State == transcript.CommandRejected {
		t.Fatalf("send on B: %+v", r)
	}
	ap := cb.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "approvals" && bytes.Contains(f.raw, []byte(`"shell"`))
	}).control(t)
	inv := ap.Approvals[0].InvocationID
	if rc := cb.call(map[string]any{"type": "approve", "conversation": id, "commandId": "ap1", "invocationId": inv, "allow": true}).Receipt; rc == nil || rc.State == transcript.CommandRejected {
		t.Fatalf("approve on B: %+v", rc)
	}
	if r := cb.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("the approved turn: %+v", r)
	}

	// A long answer, a message queued behind it, and a stop (which cancels
	// the queued message too), all from B; then another turn.
	if r := cb.send(id, "k2", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on B: %+v", r)
	}
	cb.await(func(f frame) bool { return f.Type == "event" && f.Op == string(OpAppend) && f.Offset > 100 })
	if r := cb.send(id, "k3", "after the long one"); r.State == transcript.CommandRejected {
		t.Fatalf("queue on B: %+v", r)
	}
	run := lb.lastRunning(t)
	if f := cb.call(map[string]any{"type": "stop", "conversation": id, "commandId": "s1", "turn": run.Turn}); f.Receipt == nil || f.Receipt.State == transcript.CommandRejected {
		t.Fatalf("stop on B: %s", f.raw)
	}
	cb.finished("k2")
	if r := cb.finished("k3"); r.Code != "cancelled" {
		t.Fatalf("the message queued behind the stopped turn: %+v", r)
	}
	// The next send runs.
	if r := cb.send(id, "k4", "and now"); r.State == transcript.CommandRejected {
		t.Fatalf("send on B after the stop: %+v", r)
	}
	if r := cb.finished("k4"); r.State != transcript.CommandDone {
		t.Fatalf("the turn after the stop: %+v", r)
	}
	ca.finished("k4")

	// Both tabs have had everything once the owner's last turn event
	// reached them and a moment passed for stragglers.
	waitEqual(t, id, a, b)
	deadline := time.Now().Add(10 * time.Second) // a hang guard, not a measure
	for {
		time.Sleep(200 * time.Millisecond)
		ea, eb := la.normalised(t), lb.normalised(t)
		if strings.Join(ea, "\n") == strings.Join(eb, "\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B's tab's events differ from A's:\n%s", diffLines(ea, eb))
		}
	}
	for _, op := range []string{"turn", "queue", "approvals", "receipt", "append", "settle"} {
		if lb.count(op) == 0 {
			t.Errorf("B's tab got no %q event", op)
		}
	}
	if n := lb.count(string(OpReplaced)); n != 0 {
		t.Errorf("B's tab got %d replaced events", n)
	}
}

// diffLines shows where two event streams part.
func diffLines(a, b []string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "A: %d events, B: %d\n", len(a), len(b))
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	fmt.Fprintf(&s, "equal up to %d\n", i)
	for j := max(0, i-2); j < i+6 && (j < len(a) || j < len(b)); j++ {
		var x, y string
		if j < len(a) {
			x = a[j]
		}
		if j < len(b) {
			y = b[j]
		}
		fmt.Fprintf(&s, "%d A: %.300s\n%d B: %.300s\n", j, x, j, y)
	}
	return s.String()
}

// A tab that opens a conversation on a replica that had nothing of it
// while the owner's turn waits for an approval gets the running turn and
// the waiting call in its snapshot, and can approve it.
func TestReplicaTabOpeningMidTurnGetsTheOwnersState(t *testing.T) {
	url := pgtest.URL(t)
	slow := func(_ *Options, to *TurnsOptions) { to.IdleAfter = time.Minute }
	a := newReplicaServer(t, url, 400, slow)
	b := newReplicaServer(t, url, 400, slow)
	id := a.create(t)
	ca := a.dial(t)
	ca.open(id)
	if r := ca.send(id, "k1", "list the files in this folder"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	ca.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "approvals" && bytes.Contains(f.raw, []byte(`"shell"`))
	})
	// B learns the owner's state as it is relayed; its tab opens now.
	cb := b.dial(t)
	var snap struct {
		State controlState `json:"state"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) { // a hang guard, not a measure
		f := cb.open(id)
		if err := json.Unmarshal(f.raw, &snap, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		if len(snap.State.Approvals) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if snap.State.Turn == nil || snap.State.Turn.State != turnRunning || len(snap.State.Approvals) != 1 || snap.State.Approvals[0].Tool != "shell" {
		t.Fatalf("B's snapshot says turn %+v, approvals %+v; want the running turn and the shell call waiting", snap.State.Turn, snap.State.Approvals)
	}
	inv := snap.State.Approvals[0].InvocationID
	if rc := cb.call(map[string]any{"type": "approve", "conversation": id, "commandId": "ap1", "invocationId": inv, "allow": true}).Receipt; rc == nil || rc.State == transcript.CommandRejected {
		t.Fatalf("approve on B: %+v", rc)
	}
	if r := cb.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("the approved turn: %+v", r)
	}
}

// When the owning replica dies mid-turn (its database session ends while
// it holds the lease, and nothing of it is left to recover), a tab on
// another replica is told that nothing runs there any more: the turn idle,
// the waiting call gone. Before, it showed the dead owner's turn running
// until an engine opened the conversation again. The next send from that
// tab runs.
func TestReplicaTabAfterTheOwnerDiedMidTurn(t *testing.T) {
	url := pgtest.URL(t)
	slow := func(_ *Options, to *TurnsOptions) { to.IdleAfter = time.Minute }
	a := newReplicaServer(t, url, 400, slow)
	b := newReplicaServer(t, url, 400, slow)
	id := a.create(t)
	ca := a.dial(t)
	ca.open(id)
	if r := ca.send(id, "k1", "list the files in this folder"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	ca.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "approvals" && bytes.Contains(f.raw, []byte(`"shell"`))
	})
	cb := b.dial(t)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) { // a hang guard, not a measure
		var snap struct {
			State controlState `json:"state"`
		}
		f := cb.open(id)
		if err := json.Unmarshal(f.raw, &snap, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		if len(snap.State.Approvals) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B's tab never showed A's waiting call: %+v", snap.State)
		}
	}
	// A dies: nothing of it looks for dead writers any more, and its
	// lease's session ends.
	a.stopMirror()
	var pid int32
	must(t, a.store.Pool().QueryRow(context.Background(),
		`SELECT backend_pid FROM folio_leases WHERE conversation_id = $1`, id).Scan(&pid))
	var ended bool
	must(t, b.store.Pool().QueryRow(context.Background(), `SELECT pg_terminate_backend($1, 10000)`, pid).Scan(&ended))
	if !ended {
		t.Fatal("the lease's session did not end")
	}
	cb.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "turn" && bytes.Contains(f.raw, []byte(`"state":"idle"`))
	})
	cb.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "approvals" && !bytes.Contains(f.raw, []byte(`"shell"`))
	})
	var snap struct {
		State controlState `json:"state"`
	}
	if err := json.Unmarshal(cb.open(id).raw, &snap, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	if snap.State.Turn == nil || snap.State.Turn.State != turnIdle || len(snap.State.Approvals) != 0 {
		t.Fatalf("B's snapshot after A died says turn %+v, approvals %+v; want idle and none", snap.State.Turn, snap.State.Approvals)
	}
	if r := cb.send(id, "k2", "after"); r.State == transcript.CommandRejected {
		t.Fatalf("send on B after A died: %+v", r)
	}
	if r := cb.finished("k2"); r.State != transcript.CommandDone {
		t.Fatalf("B's turn: %+v", r)
	}
}
