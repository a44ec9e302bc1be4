package server

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// jazzFixture is a whole conversation as Jazz writes it (agent "coder",
// conversation "3f1c9a", a meta title, 14 entries of every kind).
const jazzFixture = "../history/export/testdata/jazz/conversation-full.jsonl"

// writeJazz copies the fixture to conversations/<agent>/<id>.jsonl, where
// Jazz keeps its logs, with the modification time of its last record.
func writeJazz(t *testing.T, data, agent, id string) string {
	t.Helper()
	b, err := os.ReadFile(jazzFixture)
	must(t, err)
	dir := filepath.Join(data, "conversations", agent)
	must(t, os.MkdirAll(dir, 0o700))
	p := filepath.Join(dir, id+".jsonl")
	must(t, os.WriteFile(p, b, 0o600))
	// The file's time stays "now": the listing must date the log by its
	// latest record, as Jazz and folio log ls do, not by when it was copied.
	return p
}

// do sends one API request and returns the status and body.
func (ts *testServer) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	must(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io_copy(&b, resp)
	return resp.StatusCode, b.String()
}

// list returns the listing, by ID.
func (ts *testServer) list(t *testing.T) map[string]wireMeta {
	t.Helper()
	s, body := ts.do(t, "GET", "/api/v2/conversations", "")
	var l struct {
		Conversations []wireMeta `json:"conversations"`
	}
	if s != 200 || json.Unmarshal([]byte(body), &l) != nil {
		t.Fatalf("list: %d %s", s, body)
	}
	out := map[string]wireMeta{}
	for _, m := range l.Conversations {
		if _, dup := out[m.ID]; dup {
			t.Fatalf("the listing names %s twice: %s", m.ID, body)
		}
		out[m.ID] = m
	}
	return out
}

// rawPage opens conv and pages it whole, returning each entry's bytes as
// the server sent them.
func (c *client) rawPage(t *testing.T, conv string) [][]byte {
	t.Helper()
	snap := c.open(conv)
	p := c.page(snap.Token, conv, "earliest", "after", 4<<20)
	var gs []struct {
		Entries []jsontext.Value `json:"entries"`
	}
	if err := json.Unmarshal(p.Groups, &gs, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("page: %v: %s", err, p.raw)
	}
	if p.HasMoreA || p.HasMoreB {
		t.Fatalf("one page should hold the whole fixture: %s", p.raw)
	}
	var out [][]byte
	for _, g := range gs {
		for _, e := range g.Entries {
			out = append(out, e)
		}
	}
	return out
}

// A data folder holding a folio log and a Jazz-layout log: the server lists
// both under the IDs the CLI shows, pages the Jazz one exactly as history
// reads it, and sends to, renames and deletes it in place.
func TestJazzLayoutConversation(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	flatPath := ts.writeGen(t, "flat-1", 4, 7)
	l, err := history.Open(flatPath)
	must(t, err)
	must(t, l.SetTitle("Flat one"))
	must(t, l.Close())
	jazzPath := writeJazz(t, ts.data, "coder", "3f1c9a")

	flat, err := history.ReadFile(flatPath)
	must(t, err)
	if flat.Title != "Flat one" {
		t.Fatalf("flat log title %q", flat.Title)
	}
	got := ts.list(t)
	if len(got) != 2 {
		t.Fatalf("listing %v; want flat-1 and 3f1c9a", got)
	}
	if m := got["flat-1"]; m.Title != flat.Title || m.StartedAt != string(transcript.AppendInstant(nil, flat.Header.StartedAt)) {
		t.Errorf("flat log listed as %+v; want title %q", m, flat.Title)
	}
	want := wireMeta{ID: "3f1c9a", Title: "Fix the failing test", StartedAt: "2026-10-01T10:00:00.000Z", UpdatedAt: "2026-10-01T10:00:41.000Z"}
	if m := got["3f1c9a"]; m.ID != want.ID || m.Title != want.Title || m.StartedAt != want.StartedAt || m.UpdatedAt != want.UpdatedAt {
		t.Errorf("Jazz log listed as %+v; want %+v", m, want)
	}
	if s, body := ts.do(t, "GET", "/api/v2/conversations/3f1c9a", ""); s != 200 || !strings.Contains(body, `"title":"Fix the failing test"`) {
		t.Fatalf("metadata of the Jazz log: %d %s", s, body)
	}

	// Paging gives history's reading of the log, entry for entry, each in
	// the bytes Jazz stored (its member order, not folio's).
	conv, err := history.ReadFile(jazzPath)
	must(t, err)
	logData, err := os.ReadFile(jazzPath)
	must(t, err)
	c := ts.dial(t)
	page := c.rawPage(t, "3f1c9a")
	if len(page) != conv.Document.Len() || len(page) == 0 {
		t.Fatalf("paged %d entries; history reads %d", len(page), conv.Document.Len())
	}
	reordered := 0
	for i, raw := range page {
		got, err := transcript.DecodeEntry(raw)
		if err != nil || transcript.FingerprintOf(got) != conv.Document.Fingerprint(i) || !bytes.Contains(logData, raw) {
			t.Errorf("entry %d paged as\n%s\nwhich is not its stored JSON (%v)", i, raw, err)
		}
		if canonical, _ := transcript.EncodeEntry(got); !bytes.Equal(canonical, raw) {
			reordered++
		}
	}
	if reordered == 0 {
		t.Errorf("no paged entry kept Jazz's own member order; the fixture has some")
	}

	// Jazz appending to its log while the tab has it open: the tab follows.
	lastID := conv.Document.At(conv.Document.Len() - 1).ID
	f, err := os.OpenFile(jazzPath, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(`{"type":"ui-append","at":"2026-10-01T10:01:00.000Z","entries":[{"id":"u3","content":{"kind":"user","text":"from jazz"},"timestamp":"2026-10-01T10:01:00.000Z"}]}` + "\n")
	must(t, err)
	must(t, f.Close())
	ev := c.event("upsert")
	if e := ev.entry(t); e.ID != "u3" || ev.After != lastID {
		t.Fatalf("followed Jazz's append as %s; want u3 after %s", ev.raw, lastID)
	}

	// A send runs a turn that is saved to the Jazz log itself.
	if r := c.send("3f1c9a", "k1", "hello from the web"); r.State == transcript.CommandRejected {
		t.Fatalf("send rejected: %+v", r)
	}
	if r := c.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("send: %+v", r)
	}
	after, err := history.ReadFile(jazzPath)
	must(t, err)
	if after.Document.Len() <= conv.Document.Len() || !strings.Contains(kinds(after.Document.Entries()), "user") ||
		!hasUserText(after.Document.Entries(), "hello from the web") {
		t.Fatalf("the Jazz log after a send: %s", kinds(after.Document.Entries()))
	}
	if _, err := os.Stat(ts.logOf("3f1c9a")); !os.IsNotExist(err) {
		t.Fatalf("a send made a flat log beside the Jazz one: %v", err)
	}

	if s, body := ts.do(t, "PATCH", "/api/v2/conversations/3f1c9a", `{"title":"Renamed"}`); s != 200 || !strings.Contains(body, `"title":"Renamed"`) {
		t.Fatalf("rename: %d %s", s, body)
	}
	if after, err = history.ReadFile(jazzPath); err != nil || after.Title != "Renamed" {
		t.Fatalf("title in the Jazz log after a rename: %q, %v", after.Title, err)
	}
	if m := ts.list(t)["3f1c9a"]; m.Title != "Renamed" {
		t.Fatalf("listed after a rename as %+v", m)
	}

	if s, body := ts.do(t, "DELETE", "/api/v2/conversations/3f1c9a", ""); s != 204 {
		t.Fatalf("delete: %d %s", s, body)
	}
	c.event("deleted")
	if left, err := os.ReadDir(filepath.Dir(jazzPath)); err != nil || len(left) != 0 {
		t.Fatalf("the agent folder after the delete holds %v, %v; want the log and its sidecars gone", left, err)
	}
	if _, err := os.Stat(filepath.Join(ts.data, "jazz-sidecars", "coder")); !os.IsNotExist(err) {
		t.Fatalf("the log's index and summary folder after the delete: %v; want it gone", err)
	}
	if got := ts.list(t); len(got) != 1 || got["flat-1"].ID == "" {
		t.Fatalf("listing after the delete: %v", got)
	}
	if s, _ := ts.do(t, "GET", "/api/v2/conversations/3f1c9a", ""); s != 404 {
		t.Fatalf("metadata after delete: %d", s)
	}
}

func hasUserText(es []transcript.Entry, text string) bool {
	for _, e := range es {
		if u, ok := e.Content.(transcript.User); ok && u.Text == text {
			return true
		}
	}
	return false
}

// When folio's flat layout and Jazz's both hold an ID, the ID is the flat
// log, as history.Locate has it: listed once, with the flat log's title,
// and opened there.
func TestSameIDInBothLayoutsIsTheFlatLog(t *testing.T) {
	ts := newTestServer(t, Options{})
	jazzPath := writeJazz(t, ts.data, "coder", "dup")
	flatPath := ts.writeGen(t, "dup", 3, 1)
	flat, err := history.ReadFile(flatPath)
	must(t, err)
	got := ts.list(t)
	title := history.DisplayTitle(flat.Title, flat.Messages)
	if len(got) != 1 || title == "" || got["dup"].Title != title || got["dup"].Bytes != fileSize(t, flatPath) {
		t.Fatalf("listing %+v; want dup once, as the flat log (%q)", got, title)
	}
	if s, body := ts.do(t, "PATCH", "/api/v2/conversations/dup", `{"title":"flat one"}`); s != 200 {
		t.Fatalf("rename: %d %s", s, body)
	}
	if c, err := history.ReadFile(flatPath); err != nil || c.Title != "flat one" {
		t.Fatalf("the flat log's title: %v", err)
	}
	if c, err := history.ReadFile(jazzPath); err != nil || c.Title != "Fix the failing test" {
		t.Fatalf("the shadowed Jazz log changed: %v", err)
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	must(t, err)
	return fi.Size()
}

// Conversation IDs never lead outside the data folder: not through a
// separator or dots in the ID, nor through an agent folder or a log that
// is a link to somewhere else.
func TestJazzLayoutRefusesHostileIDs(t *testing.T) {
	ts := newTestServer(t, Options{})
	outside := t.TempDir()
	b, err := os.ReadFile(jazzFixture)
	must(t, err)
	secret := filepath.Join(outside, "secret.jsonl")
	must(t, os.WriteFile(secret, b, 0o600))
	must(t, os.Symlink(outside, filepath.Join(ts.data, "conversations", "evil")))
	must(t, os.MkdirAll(filepath.Join(ts.data, "conversations", "coder"), 0o700))
	must(t, os.Symlink(secret, filepath.Join(ts.data, "conversations", "coder", "linked.jsonl")))
	writeJazz(t, ts.data, "coder", "real")

	if got := ts.list(t); len(got) != 1 || got["real"].ID == "" {
		t.Fatalf("listing %v; want only the real Jazz log", got)
	}
	for _, tc := range []struct {
		id     string
		status int
	}{
		{"..%2Fx", 400}, {"a%2Fb", 400}, {"evil%2Fsecret", 400}, {"..%2F..%2Foutside", 400},
		{".hidden", 400}, {"a%5Cb", 400}, {"coder%2Freal", 400},
		{"secret", 404}, {"linked", 404},
	} {
		for _, m := range []struct{ method, suffix, body string }{
			{"GET", "", ""}, {"GET", "/graph", ""}, {"PATCH", "", `{"title":"pwned"}`}, {"DELETE", "", ""},
		} {
			if s, body := ts.do(t, m.method, "/api/v2/conversations/"+tc.id+m.suffix, m.body); s != tc.status {
				t.Errorf("%s %s%s: %d %s; want %d", m.method, tc.id, m.suffix, s, body, tc.status)
			}
		}
	}
	c := ts.dial(t)
	for _, id := range []string{"../x", "a/b", "evil/secret", "secret", "linked"} {
		if f := c.call(map[string]any{"type": "open", "conversation": id}); f.Type == "snapshot" {
			t.Errorf("open %q gave a snapshot: %s", id, f.raw)
		}
	}
	if after, err := os.ReadFile(secret); err != nil || !bytes.Equal(after, b) {
		t.Fatalf("the file outside the data folder changed: %v", err)
	}
}

// A log without an explicit title is listed by the listings' one rule
// (history.DisplayTitle): its first user message, cut to 48 characters, as
// folio log ls shows it.
func TestUntitledJazzLogListsItsFirstMessage(t *testing.T) {
	ts := newTestServer(t, Options{})
	b, err := os.ReadFile("../history/export/testdata/jazz/title-long.jsonl")
	must(t, err)
	dir := filepath.Join(ts.data, "conversations", "agent-1")
	must(t, os.MkdirAll(dir, 0o700))
	p := filepath.Join(dir, "conv-1.jsonl")
	must(t, os.WriteFile(p, b, 0o600))
	const want = "please plan a two week trip through the north o…"
	if m := ts.list(t)["conv-1"]; m.Title != want || m.StartedAt != "2026-08-01T10:00:00.000Z" {
		t.Fatalf("listed as %+v; want title %q", m, want)
	}
	if s, body := ts.do(t, "PATCH", "/api/v2/conversations/conv-1", `{"title":"Portugal"}`); s != 200 || !strings.Contains(body, `"title":"Portugal"`) {
		t.Fatalf("rename: %d %s", s, body)
	}
	if m := ts.list(t)["conv-1"]; m.Title != "Portugal" {
		t.Fatalf("after a rename, listed as %+v", m)
	}
}

// Captures of a Jazz-layout conversation keep its page index in the data
// folder's jazz-sidecars folder: the first builds it; a later one (another
// server on the same data folder, so a capture anew, not the first one's
// snapshot shared), after Jazz appended, extends that same file, and one
// after that uses it as it is. None rebuilds it (a rebuild renames a new
// file into place), and Jazz's agent folder gets nothing.
func TestJazzCapturesKeepTheIndex(t *testing.T) {
	ts := newTestServer(t, Options{})
	jazzPath := writeJazz(t, ts.data, "coder", "3f1c9a")
	ipath := history.IndexPath(jazzPath)
	if want := filepath.Join(ts.data, "jazz-sidecars", "coder", "3f1c9a.jsonl.index"); ipath != want {
		t.Fatalf("index path %s; want %s", ipath, want)
	}
	first := ts.dial(t).rawPage(t, "3f1c9a")
	built, err := os.Stat(ipath)
	if err != nil {
		t.Fatalf("the first capture kept no index: %v", err)
	}

	f, err := os.OpenFile(jazzPath, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(`{"type":"ui-append","at":"2026-10-01T10:01:00.000Z","entries":[{"id":"u3","content":{"kind":"user","text":"from jazz"},"timestamp":"2026-10-01T10:01:00.000Z"}]}` + "\n")
	must(t, err)
	must(t, f.Close())
	second := newTestServer(t, Options{DataDir: ts.data}).dial(t).rawPage(t, "3f1c9a")
	if len(second) != len(first)+1 || !bytes.Contains(second[len(second)-1], []byte(`"u3"`)) {
		t.Fatalf("the second capture paged %d entries; want the %d of the first and u3", len(second), len(first))
	}
	extended, err := os.Stat(ipath)
	if err != nil || !os.SameFile(built, extended) || extended.Size() <= built.Size() {
		t.Fatalf("after Jazz's append the index was rebuilt or not extended (%v)", err)
	}

	if third := newTestServer(t, Options{DataDir: ts.data}).dial(t).rawPage(t, "3f1c9a"); len(third) != len(second) {
		t.Fatalf("a third capture paged %d entries; want %d", len(third), len(second))
	}
	if now, err := os.Stat(ipath); err != nil || !os.SameFile(now, extended) || now.Size() != extended.Size() {
		t.Fatalf("the third capture rebuilt or changed the index (%v)", err)
	}
	if left, err := os.ReadDir(filepath.Dir(jazzPath)); err != nil || len(left) != 1 {
		t.Fatalf("Jazz's agent folder holds %v, %v; want only the log", left, err)
	}
}
