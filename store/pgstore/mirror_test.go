package pgstore

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// replica is a Mirror in a folder of its own, listening, with its change
// notices on a channel.
type replica struct {
	m       *Mirror
	changes chan string
	stop    func()
}

func newReplica(t *testing.T, u string) *replica {
	t.Helper()
	// Wake often, so the listener's periodic wake-ups (Recover) happen
	// between notifications here.
	return newReplicaEvery(t, u, 20*time.Millisecond)
}

// newReplicaEvery is newReplica whose listener runs Recover and sweeps
// every every.
func newReplicaEvery(t *testing.T, u string, every time.Duration) *replica {
	t.Helper()
	s, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{m: NewMirror(s, t.TempDir(), nil), changes: make(chan string, 1000)}
	r.m.recoverEvery = every
	r.m.OnChange(func(id string) { r.changes <- id })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.m.Run(ctx); close(done) }()
	r.stop = func() { cancel(); <-done; s.Close() }
	t.Cleanup(r.stop)
	return r
}

// waitCopy waits until the replica's copy of id holds want.
func (r *replica) waitCopy(t *testing.T, id string, want []byte) {
	t.Helper()
	p, _ := r.m.Path(id)
	deadline := time.After(20 * time.Second) // a hang guard, not a measure
	for {
		if got, _ := os.ReadFile(p); bytes.Equal(got, want) {
			return
		}
		select {
		case <-r.changes:
		case <-deadline:
			got, _ := os.ReadFile(p)
			t.Fatalf("the copy holds\n%s\nwant\n%s", got, want)
		}
	}
}

func TestMirrorFollowsAnotherReplica(t *testing.T) {
	u := freshURL(t)
	a, b := newReplica(t, u), newReplica(t, u)
	const id = "c1"
	if err := b.m.Sync(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	l, err := a.m.OpenLog(id)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, _ := transcript.NewDocument(id, []transcript.Entry{{ID: "u1", Content: transcript.User{Text: "hi"}, Timestamp: t0}})
	msgs := []message.Message{message.Text(message.User, "hi")}
	if err := l.Save(d, msgs); err != nil {
		t.Fatal(err)
	}
	db := func() []byte {
		data, _, err := a.m.Store().ReadLog(id)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	pa, _ := a.m.Path(id)
	if got, _ := os.ReadFile(pa); !bytes.Equal(got, db()) {
		t.Fatal("the writer's own copy is not the database's log")
	}
	b.waitCopy(t, id, db())

	// B's listener connection dies; what is appended meanwhile reaches it
	// after it reconnects.
	pid := b.m.listener.Load()
	for pid == 0 { // b's listener connects on its own goroutine
		<-b.changes
		pid = b.m.listener.Load()
	}
	terminate(t, a.m.Store(), pid)
	for i, text := range []string{"one", "two", "three"} {
		d, _ = d.Append(transcript.Entry{ID: "a" + string(rune('0'+i)), Content: transcript.Agent{Markdown: text}, Timestamp: t0})
		if err := l.Save(d, msgs); err != nil {
			t.Fatal(err)
		}
	}
	b.waitCopy(t, id, db())

	// A replaced log (compaction) is copied afresh.
	d2, _ := transcript.NewDocument(id, []transcript.Entry{{ID: "u1", Content: transcript.User{Text: "hi, edited"}, Timestamp: t0}})
	if err := l.Save(d2, msgs); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	b.waitCopy(t, id, db())
	c, err := history.ReadFile(func() string { p, _ := b.m.Path(id); return p }())
	if err != nil || c.Document.Len() != 1 || c.Document.At(0).Content.(transcript.User).Text != "hi, edited" {
		t.Fatalf("B's copy reads as %v %v", c, err)
	}
}

// A writer killed mid-answer leaves its lease row behind; Recover on
// another replica records the answer as interrupted at once, and the
// replicas' copies get the notice.
func TestRecoverRecordsADeadWritersAnswer(t *testing.T) {
	u := freshURL(t)
	a, b := newReplica(t, u), newReplica(t, u)
	const id = "c1"
	if err := b.m.Sync(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	l, err := a.m.OpenLog(id)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, _ := transcript.NewDocument(id, []transcript.Entry{{ID: "u1", Content: transcript.User{Text: "hi"}, Timestamp: t0}})
	d, _ = d.Open(transcript.Entry{ID: "a1", Content: transcript.Agent{Markdown: "half an ans"}, Timestamp: t0})
	if err := l.Save(d, []message.Message{message.Text(message.User, "hi")}); err != nil {
		t.Fatal(err)
	}
	if err := b.m.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, _ := history.ReadStore(b.m.Store(), id); c.Document.Len() != 2 {
		t.Fatal("Recover touched a conversation whose writer is alive")
	}
	var pid int32
	if err := a.m.Store().Pool().QueryRow(context.Background(),
		`SELECT backend_pid FROM folio_leases WHERE conversation_id = $1`, id).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	terminate(t, a.m.Store(), uint32(pid))
	if err := b.m.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The replicas' listeners run Recover too: when one of them holds the
	// lease, this Recover leaves the conversation to it, and its save
	// comes a moment later (b copies it, which wakes this loop).
	deadline := time.After(20 * time.Second) // a hang guard, not a measure
	c, err := history.ReadStore(b.m.Store(), id)
	for err == nil && c.Document.Len() == 2 {
		select {
		case <-b.changes:
		case <-deadline:
			t.Fatal("no replica recorded the dead writer's answer")
		}
		c, err = history.ReadStore(b.m.Store(), id)
	}
	if err != nil || c.Document.Len() != 3 {
		t.Fatalf("after Recover: %v, %d entries", err, c.Document.Len())
	}
	if n, ok := c.Document.At(2).Content.(transcript.Notice); !ok || n.Text != history.InterruptedNotice {
		t.Fatalf("no interrupted notice: %+v", c.Document.At(2))
	}
	data, _, _ := b.m.Store().ReadLog(id)
	b.waitCopy(t, id, data)
	a.waitCopy(t, id, data)
	l.Close()
}
