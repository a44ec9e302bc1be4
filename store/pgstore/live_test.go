package pgstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/store/pgstore/pgtest"
)

// Streaming messages reach the other replicas that serve the
// conversation, in the order they were sent: small ones inline, one over
// NOTIFY's payload limit through folio_live. The sender is not told of its
// own, and a replica is not told of conversations it does not serve.
func TestStreamReachesOtherReplicasInOrder(t *testing.T) {
	u := pgtest.URL(t)
	a, b := newReplica(t, u), newReplica(t, u)
	ctx := context.Background()
	for _, r := range []*replica{a, b} {
		if err := r.m.Sync(ctx, "c1"); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan string, 100)
	b.m.OnLive(func(id string, msg []byte) { got <- id + " " + string(msg) })
	own := make(chan string, 100)
	a.m.OnLive(func(id string, msg []byte) { own <- string(msg) })

	// Once a probe arrives, B listens.
	for probing := true; probing; {
		a.m.Stream("c1", []byte(`"probe"`))
		select {
		case <-got:
			probing = false
		case <-time.After(50 * time.Millisecond):
		}
	}
	big := `"` + strings.Repeat("x", 20000) + `"`
	sent := []string{`{"n":1}`, big, `{"n":2}`}
	for _, m := range sent {
		a.m.Stream("c1", []byte(m))
	}
	a.m.Stream("c2", []byte(`{"n":"not served"}`))
	a.m.Stream("c1", []byte(`{"n":3}`))
	sent = append(sent, `{"n":3}`)
	for i, want := range sent {
		for {
			var m string
			select {
			case m = <-got:
			case <-time.After(20 * time.Second): // a hang guard, not a measure
				t.Fatalf("message %d never arrived", i)
			}
			if m == `c1 "probe"` {
				continue
			}
			if m != "c1 "+want {
				t.Fatalf("message %d: %.80s, want c1 %.80s", i, m, want)
			}
			break
		}
	}
	select {
	case m := <-own:
		t.Fatalf("the sender was told of its own message %.80s", m)
	default:
	}
	var rows int
	if err := a.m.s.pool.QueryRow(ctx, `SELECT count(*) FROM folio_live WHERE conversation_id = 'c1'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Fatalf("folio_live holds %d rows of c1, want the large message's 1", rows)
	}
}
