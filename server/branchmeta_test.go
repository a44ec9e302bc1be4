package server

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// A branched log's metadata read through its page index is what a whole
// read gives: the head, every branch, and the alternatives of the selected
// head, on random logs of forks (at any entry, also forks of forks and
// before the first entry), head switches, appends and snapshots.
func TestBranchMetaThroughTheIndexMatchesAWholeRead(t *testing.T) {
	answered := 0
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "data", "conversations", "r.jsonl")
			writeRandomBranches(t, path, seed, 60)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := &branchInfo{fi: fi, size: fi.Size(), head: c.Head, branches: branchesOf(c.Branches), alternatives: alternativesOf(c)}
			got, err := branchMetaIndexed(path, fi)
			if err != nil {
				t.Fatalf("through the index: %v", err)
			}
			answered++
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("through the index:\n%+v\nread whole:\n%+v", got, want)
			}
		})
	}
	if answered < 12 {
		t.Fatalf("the index answered %d of 12 logs", answered)
	}
}

// writeRandomBranches writes a random branched conversation through
// history.Log.
func writeRandomBranches(t *testing.T, path string, seed uint64, steps int) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 7))
	clock := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := history.Open(path, history.WithClock(func() time.Time { clock = clock.Add(time.Second); return clock }))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := 0
	for range steps {
		c, err := l.Load()
		if err != nil {
			t.Fatal(err)
		}
		d := c.Document
		switch r := rnd.IntN(10); {
		case r < 2 && d.Len() > 0:
			after := ""
			if k := rnd.IntN(d.Len() + 1); k > 0 {
				after = d.At(k - 1).ID
			}
			if _, err := l.Fork(c.Head, after, 0, fmt.Sprint("fork ", n)); err != nil {
				t.Fatal(err)
			}
			continue
		case r < 4 && len(c.Branches) > 1:
			if _, err := l.SetHead(c.Branches[rnd.IntN(len(c.Branches))].ID); err != nil {
				t.Fatal(err)
			}
			continue
		case r == 4 && d.Len() > 2:
			es := d.Entries()
			es = append(es[:1:1], es[2:]...)
			n++
			es = append(es, transcript.Entry{ID: fmt.Sprintf("e%d", n), Content: transcript.User{Text: "again"}, Timestamp: clock})
			if d, err = transcript.NewDocument(d.ID(), es); err != nil {
				t.Fatal(err)
			}
		default:
			for range 1 + rnd.IntN(3) {
				n++
				var content transcript.Content = transcript.Agent{Markdown: fmt.Sprint("answer ", n)}
				if rnd.IntN(2) == 0 {
					content = transcript.User{Text: fmt.Sprint("question ", n)}
				}
				if d, err = d.Append(transcript.Entry{ID: fmt.Sprintf("e%d", n), Content: content, Timestamp: clock}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := l.Save(d, []message.Message{message.Text(message.User, "m")}); err != nil {
			t.Fatal(err)
		}
	}
}
