package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/transcript"
)

// tabDoc is the document a tab holds by following live events: the
// document it paged whole when it opened the conversation (openDoc), with
// every later event of the conversation applied as the client applies
// them (clientDoc). The events are gathered as they arrive, so the test's
// own waits do not take them away.
type tabDoc struct {
	c    *client
	conv string
	doc  *clientDoc
	mu   sync.Mutex
	evs  []frame
}

// followTab opens conv on c and follows it from then on.
func followTab(t *testing.T, c *client, conv string) *tabDoc {
	t.Helper()
	d := &tabDoc{c: c, conv: conv}
	tap := func(f frame) {
		if f.Type == "event" && f.Conversation == conv {
			d.mu.Lock()
			d.evs = append(d.evs, f)
			d.mu.Unlock()
		}
	}
	c.tap.Store(&tap)
	d.doc = openDoc(t, c, conv)
	return d
}

// entries is the tab's document now: what it paged and every event since
// (an event the open already covered changes nothing, as upserts and
// settles carry whole entries). A replaced document is opened and paged
// again.
func (d *tabDoc) entries(t *testing.T) []string {
	t.Helper()
	d.c.call(map[string]any{"type": "ping"}) // every event sent before it has arrived
	d.mu.Lock()
	evs := d.evs
	d.evs = nil
	d.mu.Unlock()
	for _, f := range evs {
		if f.Op == string(OpReplaced) {
			d.doc = openDoc(t, d.c, d.conv)
			continue
		}
		d.doc.apply(t, f)
	}
	return d.doc.entries
}

// awaitDocument waits until the tab holds want (its replica may publish
// the last records a moment after its copy got them), and fails saying how
// it differs if it never does.
func (d *tabDoc) awaitDocument(t *testing.T, name string, want []transcript.Entry) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a hang guard, not a measure
	for {
		diff := sameDocument(t, d.entries(t), want)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tab on %s differs from the database's document:\n%s", name, diff)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sameDocument says how a tab's entries differ from want's, or "".
func sameDocument(t *testing.T, got []string, want []transcript.Entry) string {
	t.Helper()
	var diff []string
	if len(got) != len(want) {
		diff = append(diff, fmt.Sprintf("%d entries, want %d", len(got), len(want)))
		for i := len(want); i < len(got); i++ {
			diff = append(diff, "extra: "+got[i])
		}
	}
	for i := range min(len(got), len(want)) {
		e, err := transcript.DecodeEntry([]byte(got[i]))
		must(t, err)
		g, err := transcript.EncodeEntry(e)
		must(t, err)
		w, err := transcript.EncodeEntry(want[i])
		must(t, err)
		if string(g) != string(w) {
			diff = append(diff, fmt.Sprintf("entry %d: %s\n  want %s", i, g, w))
		}
	}
	return strings.Join(diff, "\n")
}

// exportedEntries is the document `folio log show --json` prints of the
// log `folio log export --format log` copies out of the database at url:
// what a user inspecting the conversation sees.
func exportedEntries(t *testing.T, url, id string) []transcript.Entry {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "folio")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/foliodev/folio/cmd/folio").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	log, err := exec.Command(bin, "log", "export", "--store", url, "--format", "log", id).Output()
	if err != nil {
		t.Fatalf("folio log export: %v", err)
	}
	file := filepath.Join(dir, id+".jsonl")
	must(t, os.WriteFile(file, log, 0o600))
	out, err := exec.Command(bin, "log", "show", "--json", file).Output()
	if err != nil {
		t.Fatalf("folio log show --json: %v", err)
	}
	var shown struct {
		Entries  []jsontext.Value `json:"entries"`
		Rejected []jsontext.Value `json:"rejected"`
	}
	must(t, json.Unmarshal(out, &shown, json.RejectUnknownMembers(false)))
	if len(shown.Rejected) != 0 {
		t.Fatalf("folio log show rejected records: %s", out)
	}
	var es []transcript.Entry
	for _, raw := range shown.Entries {
		e, err := transcript.DecodeEntry(raw)
		must(t, err)
		es = append(es, e)
	}
	return es
}
