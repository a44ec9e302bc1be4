package pgstore

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

type status struct {
	reachable bool
	lost      []string
}

// A replica whose listener and lease sessions end reports the database
// unreachable, then reachable once its listener is back, naming the
// conversation whose lease it lost, even though its Recover may have taken
// that conversation over meanwhile; that writer's writes fail as lost
// (history.ErrLockLost), and one it holds still is not named.
func TestMirrorReportsUnreachableAndLostLeases(t *testing.T) {
	u := freshURL(t)
	r := newReplica(t, u)
	statuses := make(chan status, 10)
	r.m.OnStatus(func(reachable bool, lost []string) { statuses <- status{reachable, lost} })
	if !r.m.Reachable() {
		t.Fatal("a new mirror says the database is unreachable")
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	open := func(id string) *history.Log {
		l, err := r.m.OpenLog(id)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := transcript.NewDocument(id, []transcript.Entry{{ID: "u1", Content: transcript.User{Text: "hi"}, Timestamp: t0}})
		if err := l.Save(d, []message.Message{message.Text(message.User, "hi")}); err != nil {
			t.Fatal(err)
		}
		return l
	}
	gone, kept := open("gone"), open("kept")
	defer gone.Close()
	defer kept.Close()
	s := r.m.Store()
	var lease uint32
	r.m.mu.Lock()
	for w := range r.m.writers {
		if w.id == "gone" {
			lease = w.Medium.BackendPID()
		}
	}
	r.m.mu.Unlock()
	// The lease first, so the listener's reconnection finds it gone.
	terminate(t, s, lease)
	terminate(t, s, r.m.listener.Load())
	next := func() status {
		t.Helper()
		select {
		case st := <-statuses:
			return st
		case <-time.After(20 * time.Second): // a hang guard, not a measure
			t.Fatal("no status change")
			return status{}
		}
	}
	if st := next(); st.reachable {
		t.Fatalf("first status %+v; want unreachable", st)
	}
	if st := next(); !st.reachable || !slices.Equal(st.lost, []string{"gone"}) {
		t.Fatalf("second status %+v; want reachable, lost [gone]", st)
	}
	if !r.m.Reachable() {
		t.Fatal("Reachable is false after the listener came back")
	}
	d, _ := transcript.NewDocument("gone", []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "hi"}, Timestamp: t0},
		{ID: "u2", Content: transcript.User{Text: "again"}, Timestamp: t0},
	})
	err := gone.Save(d, []message.Message{message.Text(message.User, "hi"), message.Text(message.User, "again")})
	if !errors.Is(err, errLeaseLost) || !errors.Is(err, history.ErrLockLost) {
		t.Fatalf("a save on the lost lease: %v; want errLeaseLost wrapping history.ErrLockLost", err)
	}
}
