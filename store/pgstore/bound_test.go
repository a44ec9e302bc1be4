package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// The mirror keeps copies only of conversations in use: a held copy and a
// copy this replica writes are kept, the others beyond maxCopies (least
// recently named first) and those not named for copyIdle are dropped, file
// and all, and a dropped conversation named again is copied afresh.
func TestMirrorDropsCopiesNobodyUses(t *testing.T) {
	u := freshURL(t)
	// The test sweeps by hand; a listener's own sweep, running beside it
	// with bounds the test has since changed, would drop a copy the test
	// counts on.
	a, b := newReplicaEvery(t, u, time.Hour), newReplicaEvery(t, u, time.Hour)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ids := []string{"c1", "c2", "c3", "c4", "c5"}
	for _, id := range ids {
		l, err := a.m.OpenLog(id)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := transcript.NewDocument(id, []transcript.Entry{{ID: "u1", Content: transcript.User{Text: "hi " + id}, Timestamp: t0}})
		if err := l.Save(d, []message.Message{message.Text(message.User, "hi")}); err != nil {
			t.Fatal(err)
		}
		if id != "c5" {
			l.Close() // c5 stays open: A writes it
		} else {
			defer l.Close()
		}
	}
	b.m.setBounds(copyIdle, 2)
	b.m.Hold("c1")
	for _, id := range ids {
		if err := b.m.Sync(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	have := func(m *Mirror) string {
		var s []string
		for _, id := range ids {
			p, _ := m.Path(id)
			if _, err := os.Stat(p); err == nil {
				s = append(s, id)
			}
		}
		return fmt.Sprint(s, " ", m.Copies())
	}
	b.m.sweep()
	if got := have(b.m); got != "[c1 c4 c5] 3" {
		t.Fatalf("B's copies after a sweep: %s; want c1 (held) and the two named last", got)
	}
	a.m.sweep()
	if got := have(a.m); got != "[c5] 1" {
		t.Fatalf("A's copies after a sweep: %s; want c5 (written here) only", got)
	}
	b.m.setBounds(0, 2)
	b.m.sweep()
	if got := have(b.m); got != "[c1] 1" {
		t.Fatalf("B's copies after a sweep with nothing recent: %s; want the held c1", got)
	}
	b.m.Release("c1")
	b.m.sweep()
	if got := have(b.m); got != "[] 0" {
		t.Fatalf("B's copies once c1 is released: %s; want none", got)
	}
	b.m.setBounds(copyIdle, 2)
	if err := b.m.Sync(ctx, "c2"); err != nil {
		t.Fatal(err)
	}
	want, _, err := b.m.Store().ReadLog("c2")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := b.m.Path("c2")
	if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
		t.Fatalf("c2 copied again holds\n%s\nwant\n%s", got, want)
	}
}
