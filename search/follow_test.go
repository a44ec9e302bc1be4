package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
)

// TestFollowSaves: a Log opened with Follow has every save indexed without
// any search catching up, and the save does not wait for it.
func TestFollowSaves(t *testing.T) {
	data := newData(t)
	ix := openIndex(t, data)
	path, err := history.Path(data, "f")
	if err != nil {
		t.Fatal(err)
	}
	l, err := history.Open(path, Follow(data))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &convo{t: t, id: "f", log: l}
	c.save(user("u1", "the albatross circles"))
	if _, err := settleDir(data); err != nil {
		t.Fatal(err)
	}
	look := func(q string) []string {
		t.Helper()
		hits, err := ix.Search(context.Background(), q, Options{NoCatchUp: true, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return entryIDs(hits)
	}
	if got := look("albatross"); len(got) != 1 || got[0] != "f/u1" {
		t.Fatalf("after the first save: %v, want [f/u1]", got)
	}
	c.save(agent("a1", "a second albatross lands"))
	if err := l.SetTitle("Seabirds"); err != nil {
		t.Fatal(err)
	}
	n, err := settleDir(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := look("albatross"); len(got) != 2 {
		t.Fatalf("after the second save: %v, want two hits", got)
	}
	if got := look("seabirds"); len(got) != 1 || got[0] != "f/" {
		t.Fatalf("after the title: %v, want [f/]", got)
	}
	if n < 2 {
		t.Fatalf("the follower updated %d times, want at least 2", n)
	}
}

func TestDataDirOf(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	conv := history.ConversationsDir(data)
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(conv, "a.jsonl"), true},
		{filepath.Join(conv, "agent", "a.jsonl"), true},
		{filepath.Join(data, "a.jsonl"), false},
		{filepath.Join(data, "x", "y", "z", "a.jsonl"), false},
	} {
		got, ok := dataDirOf(tc.path)
		if ok != tc.ok || (ok && got != data) {
			t.Errorf("%s: got %q %v, want %v", tc.path, got, ok, tc.ok)
		}
	}
}

// TestFollowNeedsAnIndex: saves in a data folder nobody searched create no
// index; once one exists, saves follow it.
func TestFollowNeedsAnIndex(t *testing.T) {
	data := newData(t)
	path, err := history.Path(data, "n")
	if err != nil {
		t.Fatal(err)
	}
	l, err := history.Open(path, Follow(data))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &convo{t: t, id: "n", log: l}
	c.save(user("u1", "an unindexed ocelot"))
	if _, err := settleDir(data); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(Path(data)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a save created the index: %v", err)
	}
	ix := openIndex(t, data)
	c.save(agent("a1", "an indexed ocelot"))
	if _, err := settleDir(data); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(context.Background(), "ocelot", Options{NoCatchUp: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// The follower's update read the whole log: both entries.
	if got := entryIDs(hits); len(got) != 2 {
		t.Fatalf("got %v, want both entries", got)
	}
}

// TestFollowStore: a Log of a PostgreSQL store opened with FollowStore has
// its saves indexed in the store without a search catching up.
func TestFollowStore(t *testing.T) {
	st := pgStore(t)
	l, err := history.OpenStore(st, "fs", FollowStore(st))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c := &convo{t: t, id: "fs", log: l}
	ix := OpenPostgres(st)
	for i, text := range []string{"a followed heron", "a second followed heron"} {
		c.save(user(idOf("u", i), text))
		if _, err := settleStore(st); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(context.Background(), "heron", Options{NoCatchUp: true, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != i+1 {
			t.Fatalf("after save %d: %v", i+1, entryIDs(hits))
		}
	}
}
