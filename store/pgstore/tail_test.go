package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// genLog is a generated log of n entries for conversation id; mix > 0 mixes
// in gen.Mix's records (branches, rejected batches, snapshots) with that
// seed.
func genLog(t testing.TB, id string, n int, seed uint64, summaries bool, mix uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Messages: n, Seed: seed, ConversationID: id, Summaries: summaries}); err != nil {
		t.Fatal(err)
	}
	if mix > 0 {
		return gen.Mix(buf.Bytes(), mix)
	}
	return buf.Bytes()
}

// engineOpen loads what an engine opens on (engine.LoadTail) from l, and
// closes l.
func engineOpen(t *testing.T, l *history.Log, err error) *history.Conversation {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := engine.LoadTail(l)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReplicaOpensThroughTheCopy: an engine opening a conversation on a
// replica reads its tail through the replica's copy and the copy's page
// index, reading no record from the database, and gets exactly what a
// full read of the database's log gives: for generated logs with and
// without compactions, after another replica appended to the log, made a
// snapshot and compacted it, and after the copy was dropped or lost its
// index.
func TestReplicaOpensThroughTheCopy(t *testing.T) {
	u := freshURL(t)
	a, b := idleMirror(t, u), idleMirror(t, u)
	plain := newTestStoreAt(t, u) // no mirror: every open reads the log whole
	ctx := context.Background()
	cases := []struct {
		name      string
		n         int
		seed      uint64
		summaries bool
		mix       uint64
		copied    bool // the copy's index answers (one branch, no problem)
	}{
		{"plain", 400, 1, false, 0, true},
		{"summaries", 600, 2, true, 0, true},
		{"small", 5, 3, true, 0, true},
		{"mixed", 300, 4, true, 5, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := "tail-" + tc.name
			if _, err := history.Import(plain, id, genLog(t, id, tc.n, tc.seed, tc.summaries, tc.mix), nil); err != nil {
				t.Fatal(err)
			}
			if err := b.Sync(ctx, id); err != nil {
				t.Fatal(err)
			}
			check := func(step string) {
				t.Helper()
				tails, wholes := copyTails.Load(), wholeReads.Load()
				l, err := b.OpenLog(id)
				got := engineOpen(t, l, err)
				if tc.copied {
					if n := copyTails.Load() - tails; n != 1 {
						t.Fatalf("%s: %d tail reads through the copy, want 1", step, n)
					}
					if n := wholeReads.Load() - wholes; n != 0 {
						t.Fatalf("%s: the open read the log whole from the database %d times", step, n)
					}
				}
				l, err = history.OpenStore(plain, id)
				want := engineOpen(t, l, err)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: through the copy:\n%+v\nread whole:\n%+v", step, got, want)
				}
				// The open refreshed the listing columns: they count the
				// whole document, not the window read.
				list, err := plain.List()
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range list {
					if total := want.Document.Elided() + want.Document.Len(); s.ID == id && s.Entries != total {
						t.Fatalf("%s: the listing counts %d entries, the log has %d", step, s.Entries, total)
					}
				}
				data, _, err := plain.ReadLog(id)
				if err != nil {
					t.Fatal(err)
				}
				p, _ := b.Path(id)
				if copy, _ := os.ReadFile(p); !bytes.Equal(copy, data) {
					t.Fatalf("%s: the copy is not the database's log", step)
				}
			}
			check("imported")

			// Another replica appends a turn, then rewrites an entry the
			// window holds (a snapshot), then compacts the log.
			l, err := a.OpenLog(id, history.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			c, err := engine.LoadTail(l)
			if err != nil {
				t.Fatal(err)
			}
			d := c.Document
			for _, e := range []transcript.Entry{
				{ID: id + "-u", Content: transcript.User{Text: "one more"}, Timestamp: t0},
				{ID: id + "-a", Content: transcript.Agent{Markdown: "an answer"}, Timestamp: t0},
			} {
				if d, err = d.Append(e); err != nil {
					t.Fatal(err)
				}
			}
			msgs := append(c.Messages[:len(c.Messages):len(c.Messages)], message.Text(message.User, "one more"), message.Text(message.Assistant, "an answer"))
			if err := l.Save(d, msgs); err != nil {
				t.Fatal(err)
			}
			l.Close()
			check("appended by another replica")

			l, err = a.OpenLog(id, history.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			c, err = engine.LoadTail(l)
			if err != nil {
				t.Fatal(err)
			}
			if d, err = c.Document.Replace(transcript.Entry{ID: id + "-a", Content: transcript.Agent{Markdown: "an answer, corrected"}, Timestamp: t0}); err != nil {
				t.Fatal(err)
			}
			if err := l.Save(d, c.Messages); err != nil {
				t.Fatal(err)
			}
			l.Close()
			check("snapshot by another replica")

			if l, err = a.OpenLog(id, history.WithClock(clock)); err != nil {
				t.Fatal(err)
			}
			if res, err := l.Compact(); err != nil || res.Dropped == 0 {
				t.Fatalf("compact: %+v %v", res, err)
			}
			l.Close()
			check("compacted by another replica")

			b.drop(id, time.Now()) // the sweep drops a copy nobody uses
			check("after the copy was dropped")
			p, _ := b.Path(id)
			if err := os.Remove(history.IndexPath(p)); err != nil {
				t.Fatal(err)
			}
			check("after the copy's index was removed")
		})
	}
}

// idleMirror is a replica's mirror whose listener does not run, so its
// copies change only through it: what another replica appended reaches a
// copy when something of this replica brings it up to date.
func idleMirror(t *testing.T, u string) *Mirror {
	t.Helper()
	return NewMirror(newTestStoreAt(t, u), t.TempDir(), nil)
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func clock() time.Time { return t0 }

// TestSavesAfterCopyTailLikeWholeRead: a writer on a replica that opened
// the log through its copy writes to the database exactly the bytes a
// writer that read the log whole writes: appends, a streaming answer and
// its settling, a snapshot (which reads the entries the window leaves out
// from the database), a compaction, and appends after it.
func TestSavesAfterCopyTailLikeWholeRead(t *testing.T) {
	// Two conversations holding the same bytes, in two schemas (leases
	// are the database's, so their IDs differ).
	const id, plainID = "c1", "c2"
	data := genLog(t, id, 500, 7, true, 0)
	r := idleMirror(t, freshURL(t))
	plain := newTestStore(t)
	if _, err := history.Import(r.Store(), id, data, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Import(plain, plainID, data, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	tails := copyTails.Load()
	var logs [2]*history.Log
	var convs [2]*history.Conversation
	var err error
	if logs[0], err = r.OpenLog(id, history.WithClock(clock)); err != nil {
		t.Fatal(err)
	}
	if logs[1], err = history.OpenStore(plain, plainID, history.WithClock(clock)); err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		defer l.Close()
		if convs[i], err = engine.LoadTail(l); err != nil {
			t.Fatal(err)
		}
	}
	if copyTails.Load()-tails != 1 {
		t.Fatal("the replica's writer did not open through its copy")
	}
	docs := [2]transcript.Document{convs[0].Document, convs[1].Document}
	msgs := [2][]message.Message{convs[0].Messages, convs[1].Messages}
	same := func(step string) {
		t.Helper()
		got, _, err := r.Store().ReadLog(id)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := plain.ReadLog(plainID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the database's logs differ (%d bytes after the copy's tail, %d after a whole read)", step, len(got), len(want))
		}
		p, _ := r.Path(id)
		if copy, _ := os.ReadFile(p); !bytes.Equal(copy, got) {
			t.Fatalf("%s: the copy is not the database's log", step)
		}
	}
	each := func(step string, f func(i int) error) {
		t.Helper()
		for i := range logs {
			if err := f(i); err != nil {
				t.Fatalf("%s (writer %d): %v", step, i, err)
			}
		}
		same(step)
	}
	entry := func(id string, c transcript.Content) transcript.Entry {
		return transcript.Entry{ID: id, Content: c, Timestamp: t0}
	}
	each("append", func(i int) error {
		d, err := docs[i].Append(entry("s-u1", transcript.User{Text: "one more"}))
		if err != nil {
			return err
		}
		msgs[i] = append(msgs[i][:len(msgs[i]):len(msgs[i])], message.Text(message.User, "one more"))
		docs[i] = d
		return logs[i].Save(d, msgs[i])
	})
	each("a streaming answer", func(i int) error {
		d, err := docs[i].Open(entry("s-a1", transcript.Agent{Markdown: "half an"}))
		if err != nil {
			return err
		}
		docs[i] = d
		return logs[i].Save(d, msgs[i])
	})
	each("settled", func(i int) error {
		d, err := docs[i].Settle("s-a1", transcript.Agent{Markdown: "half an answer, whole"})
		if err != nil {
			return err
		}
		msgs[i] = append(msgs[i][:len(msgs[i]):len(msgs[i])], message.Text(message.Assistant, "half an answer, whole"))
		docs[i] = d
		return logs[i].Save(d, msgs[i])
	})
	each("a snapshot", func(i int) error {
		d, err := docs[i].Replace(entry("s-u1", transcript.User{Text: "one more, edited"}))
		if err != nil {
			return err
		}
		docs[i] = d
		return logs[i].Save(d, msgs[i])
	})
	each("compacted", func(i int) error {
		res, err := logs[i].Compact()
		if err == nil && res.Dropped == 0 {
			err = fmt.Errorf("nothing compacted")
		}
		return err
	})
	each("append after the compaction", func(i int) error {
		d, err := docs[i].Append(entry("s-u2", transcript.User{Text: "and after"}))
		if err != nil {
			return err
		}
		docs[i] = d
		return logs[i].Save(d, msgs[i])
	})
}

// TestCopyTailAfterLeaseLost: a replica's writer whose lease connection
// ended reads nothing through its copy either; its open fails as a whole
// read does, saying the lease was lost.
func TestCopyTailAfterLeaseLost(t *testing.T) {
	const id = "c1"
	r := idleMirror(t, freshURL(t))
	if _, err := history.Import(r.Store(), id, genLog(t, id, 200, 9, true, 0), nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	tm, err := r.openTee(id)
	if err != nil {
		t.Fatal(err)
	}
	l := history.OpenMedium(tm, id)
	defer l.Close()
	terminate(t, r.Store(), tm.BackendPID())
	tails := copyTails.Load()
	if _, err := engine.LoadTail(l); !errors.Is(err, history.ErrLockLost) {
		t.Fatalf("open after the lease ended: %v", err)
	}
	if copyTails.Load() != tails {
		t.Fatal("read through the copy without the lease")
	}
}
