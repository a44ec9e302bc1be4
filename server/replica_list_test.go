package server

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// A replica lists conversations from the database's rows without copying
// their logs, and what it lists of each is what the listing of a copy of
// the log says (title, times, size, branches).
func TestReplicaListsWithoutCopying(t *testing.T) {
	url := pgtest.URL(t)
	a := newReplicaServer(t, url, 400)
	b := newReplicaServer(t, url, 400)
	ids := []string{a.create(t), a.create(t), a.create(t)}
	ca := a.dial(t)
	ca.open(ids[0])
	if r := ca.send(ids[0], "k1", "hello"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	if r := ca.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", r)
	}
	a.turns.forget(ids[0]) // its writer notes the listing as it closes
	waitEqual(t, ids[0], a)

	resp, err := http.Get(b.url + "/api/v2/conversations")
	must(t, err)
	defer resp.Body.Close()
	var list struct {
		Conversations []wireMeta `json:"conversations"`
	}
	must(t, json.UnmarshalRead(resp.Body, &list, json.RejectUnknownMembers(false)))
	if len(list.Conversations) != len(ids) {
		t.Fatalf("B lists %d conversations, want %d", len(list.Conversations), len(ids))
	}
	if got, _ := os.ReadDir(filepath.Join(b.opts.DataDir, "conversations")); len(got) != 0 {
		t.Fatalf("listing on B copied %d files", len(got))
	}
	for _, m := range list.Conversations {
		if !slices.Contains(ids, m.ID) {
			t.Fatalf("B lists %q, which nobody created", m.ID)
		}
		p, _ := a.mirror.Path(m.ID)
		want, err := a.metaAt(m.ID, p)
		must(t, err)
		g, _ := json.Marshal(m, json.Deterministic(true))
		w, _ := json.Marshal(want, json.Deterministic(true))
		if string(g) != string(w) {
			t.Fatalf("B lists\n%s\nthe log's listing is\n%s", g, w)
		}
	}
}
