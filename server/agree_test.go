package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// These tests hold the server to the one authority on what a log means:
// package history. Whatever the server pages out, and whatever a client
// following the live events ends up with, must be byte for byte the
// entries history.Read gives for the same bytes.

const agreeHeader = `{"type":"conversation","version":3,"conversationId":"agree","startedAt":"2026-03-04T05:06:07.000Z"}`

func agreeEntry(id, kind, text string) string {
	switch kind {
	case "agent":
		return `{"id":"` + id + `","content":{"kind":"agent","markdown":"` + text + `"},"timestamp":"2026-03-04T05:06:07.000Z"}`
	case "compaction":
		return `{"id":"` + id + `","content":{"kind":"compaction","summary":"` + text + `","covers":{"fromId":"u1","toId":"a1"}},"timestamp":"2026-03-04T05:06:07.000Z"}`
	}
	return `{"id":"` + id + `","content":{"kind":"user","text":"` + text + `"},"timestamp":"2026-03-04T05:06:07.000Z"}`
}

func agreeRec(typ string, entries ...string) string {
	return `{"type":"` + typ + `","at":"2026-03-04T05:06:08.000Z","entries":[` + strings.Join(entries, ",") + `]}`
}

func onBranch(branch, rec string) string {
	return `{"type":"on-branch","at":"2026-03-04T05:06:09.000Z","branch":"` + branch + `","record":` + rec + `}`
}

const agreeMsg = `{"type":"message","at":"2026-03-04T05:06:08.000Z","message":{"role":"user","content":"hi"}}`
const agreeReply = `{"type":"message","at":"2026-03-04T05:06:09.000Z","message":{"role":"assistant","content":"hello"}}`

// agreeCases are the hard cases: each is a whole log.
func agreeCases() map[string]string {
	u1, a1 := agreeEntry("u1", "user", "hi"), agreeEntry("a1", "agent", "hello")
	u2, a2 := agreeEntry("u2", "user", "more"), agreeEntry("a2", "agent", "partial")
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	return map[string]string{
		"ui-open tail after an append": lines(agreeHeader, agreeRec("ui-append", u1, a1), agreeRec("ui-open", u2, a2)),
		"ui-open tail settled":         lines(agreeHeader, agreeRec("ui-open", u1), agreeRec("ui-append", u1, a1)),
		"message records only":         lines(agreeHeader, agreeMsg, agreeReply),
		"bad at":                       lines(agreeHeader, agreeRec("ui-append", u1), `{"type":"ui-append","at":"yesterday","entries":[`+a1+`]}`, agreeRec("ui-append", u2)),
		"no at":                        lines(agreeHeader, agreeRec("ui-append", u1), `{"type":"ui-append","entries":[`+a1+`]}`),
		"rejected batch, extra member": lines(agreeHeader, `{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[`+u1+`],"colour":1}`, agreeRec("ui-append", a1)),
		"rejected batch, repeated id":  lines(agreeHeader, agreeRec("ui-append", u1), agreeRec("ui-append", a1, u1), agreeRec("ui-append", u2)),
		"rejected batch, one bad entry": lines(agreeHeader, agreeRec("ui-append", u1, `{"id":"x","content":{"kind":"painting"},"timestamp":"2026-03-04T05:06:07.000Z"}`),
			agreeRec("ui-append", a1)),
		"ui-transcript supersedes": lines(agreeHeader, agreeRec("ui-append", u1, a1), agreeRec("ui-transcript", u2), agreeRec("ui-append", a2)),
		"compaction":               lines(agreeHeader, agreeRec("ui-append", u1, a1), agreeRec("ui-append", agreeEntry("c1", "compaction", "earlier"))),
		"no trailing newline":      lines(agreeHeader, agreeRec("ui-append", u1)) + agreeRec("ui-append", a1),
		"torn last line":           lines(agreeHeader, agreeRec("ui-append", u1)) + agreeRec("ui-append", a1)[:40],
		"unreadable and unknown":   lines(agreeHeader, "not json", `{"type":"coverage","at":"2026-03-04T05:06:08.000Z"}`, agreeRec("ui-append", u1)),
		"meta and rewrite":         lines(agreeHeader, agreeMsg, agreeRec("ui-append", u1), `{"type":"meta","at":"2026-03-04T05:06:08.000Z","title":"t"}`, `{"type":"rewrite","at":"2026-03-04T05:06:08.000Z"}`),
		"blank lines and CRLF":     agreeHeader + "\r\n\n" + agreeRec("ui-append", u1) + "\r\n",
		"version 2":                lines(`{"type":"conversation","version":2}`, agreeMsg, `{"type":"ui-append","at":"2026-01-01T00:00:01Z","entries":[{"type":"user","message":"hi"},{"type":"info","message":"\u001b[1mbold\u001b[0m"}]}`),
		"version 2 ui-transcript":  lines(`{"type":"conversation","version":2,"conversationId":"agree"}`, `{"type":"ui-append","at":"x","entries":[{"type":"user","message":"a"}]}`, `{"type":"ui-transcript","at":"x","entries":[{"type":"user","message":"b"}]}`),
		"branch selected": lines(agreeHeader, agreeRec("ui-append", u1, a1),
			`{"type":"branch","at":"2026-03-04T05:06:09.000Z","branch":"b1","parent":"main","afterEntry":"u1","afterMessage":0}`,
			onBranch("b1", agreeRec("ui-append", a2)),
			`{"type":"head","at":"2026-03-04T05:06:09.000Z","branch":"b1"}`),
		"branch not selected": lines(agreeHeader, agreeRec("ui-append", u1, a1),
			`{"type":"branch","at":"2026-03-04T05:06:09.000Z","branch":"b1","parent":"main","afterEntry":"u1","afterMessage":0}`,
			onBranch("b1", agreeRec("ui-append", a2)), agreeRec("ui-append", u2)),
		"back on main": lines(agreeHeader, agreeRec("ui-append", u1),
			`{"type":"branch","at":"2026-03-04T05:06:09.000Z","branch":"b1","parent":"main","afterMessage":0}`,
			`{"type":"head","at":"2026-03-04T05:06:09.000Z","branch":"b1"}`,
			onBranch("b1", agreeRec("ui-append", a2)),
			`{"type":"head","at":"2026-03-04T05:06:09.000Z","branch":"main"}`, agreeRec("ui-append", u2)),
	}
}

// historyEntries is the authority: history.Read's document, encoded.
func historyEntries(t testing.TB, data []byte) ([]string, error) {
	t.Helper()
	c, err := history.Read(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range c.Document.All() {
		b, err := transcript.EncodeEntry(e)
		if err != nil {
			t.Fatalf("history gave an entry that does not encode: %v", err)
		}
		out = append(out, string(b))
	}
	return out, nil
}

// pagedEntries pages a capture's snapshot from the start to the end and
// returns the entries it holds, as paged out.
func pagedEntries(t testing.TB, snap *pager.Snapshot) []string {
	t.Helper()
	var out []string
	anchor := pager.AnchorEarliest
	for {
		p, err := snap.Page(nil, anchor, pager.After, pager.MaxBudget)
		if err != nil {
			t.Fatal(err)
		}
		if p.First < 0 {
			return out
		}
		var groups []struct {
			Entries []jsontext.Value `json:"entries"`
		}
		if err := json.Unmarshal(append(append([]byte("["), p.Bytes...), ']'), &groups, json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("page: %v", err)
		}
		for _, g := range groups {
			for _, e := range g.Entries {
				out = append(out, string(e))
				var id struct {
					ID string `json:"id"`
				}
				json.Unmarshal(e, &id, json.RejectUnknownMembers(false))
				anchor = id.ID
			}
		}
		if !p.HasMoreAfter {
			return out
		}
	}
}

// captureEntries captures a log the way an open does and pages it out.
func captureEntries(t testing.TB, srv *Server, id string, data []byte) ([]string, error) {
	t.Helper()
	path := srv.logPath(id)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c := newConversation(srv, id, path)
	cp, err := c.capture("", nil)
	if err != nil {
		return nil, err
	}
	defer cp.snap.Release()
	if len(cp.checkpoint.Entries) != 0 {
		t.Fatalf("a log alone gave a checkpoint of %d entries", len(cp.checkpoint.Entries))
	}
	return pagedEntries(t, cp.snap), nil
}

func TestPagesAgreeWithHistoryRead(t *testing.T) {
	srv := newTestServer(t, Options{})
	for name, log := range agreeCases() {
		t.Run(name, func(t *testing.T) {
			want, werr := historyEntries(t, []byte(log))
			got, gerr := captureEntries(t, srv.Server, "agree", []byte(log))
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("history: %v, server: %v", werr, gerr)
			}
			if werr == nil && len(want) == 0 && name != "torn last line" {
				t.Fatalf("the case is empty: it tests nothing")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("server pages\n%s\nhistory.Read\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestFollowedDocumentAgreesWithHistoryRead opens each case's log cut at
// every line, then lets the follower read the rest in odd-sized pieces
// over a real WebSocket. The document a client builds from the first
// pages plus the live events (reopening on "replaced") must be the one
// history.Read gives for the whole log.
func TestFollowedDocumentAgreesWithHistoryRead(t *testing.T) {
	ts := newTestServer(t, Options{FollowInterval: 1 << 40}) // the test polls
	n := 0
	for name, log := range agreeCases() {
		cuts := []int{}
		for i := range len(log) {
			if log[i] == '\n' {
				cuts = append(cuts, i+1)
			}
		}
		for _, cut := range cuts {
			n++
			id := fmt.Sprintf("f%d", n)
			t.Run(fmt.Sprintf("%s/cut %d", name, cut), func(t *testing.T) {
				want, err := historyEntries(t, []byte(log))
				if err != nil {
					return // no header: nothing to follow
				}
				path := ts.logPath(id)
				if err := os.WriteFile(path, []byte(log[:cut]), 0o600); err != nil {
					t.Fatal(err)
				}
				c := ts.dial(t)
				doc := openDoc(t, c, id)
				rng := rand.New(rand.NewPCG(uint64(cut), 7))
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cv := ts.conv(id)
				for rest := log[cut:]; len(rest) > 0; {
					k := min(len(rest), 1+rng.IntN(90))
					f.WriteString(rest[:k])
					rest = rest[k:]
					cv.mu.Lock()
					cv.pollLocked()
					cv.mu.Unlock()
					doc = followDoc(t, c, id, doc)
				}
				if !slices.Equal(doc.entries, want) {
					t.Fatalf("followed\n%s\nhistory.Read\n%s", strings.Join(doc.entries, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

// clientDoc is a client's copy of a conversation's document.
type clientDoc struct {
	gen     int64
	entries []string
	revs    map[string]int64
}

// apply applies one live event of the document's generation.
func (d *clientDoc) apply(t testing.TB, f frame) {
	t.Helper()
	if f.Generation != d.gen {
		return
	}
	switch f.Op {
	case "upsert", "settle":
		d.put(t, f.Entry, f.After)
		if d.revs == nil {
			d.revs = map[string]int64{}
		}
		d.revs[entryID(t, f.Entry)] = f.Revision
	case "append":
		for i, raw := range d.entries {
			if entryID(t, []byte(raw)) != f.EntryID {
				continue
			}
			e, err := transcript.DecodeEntry([]byte(raw))
			must(t, err)
			b, err := transcript.EncodeEntry(f.appendTo(t, e, d.revs[f.EntryID]))
			must(t, err)
			d.entries[i] = string(b)
			d.revs[f.EntryID] = f.Revision
			return
		}
		t.Fatalf("append to an entry the client does not hold: %s", f.raw)
	}
}

func entryID(t testing.TB, raw []byte) string {
	t.Helper()
	var e struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &e, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("entry: %v", err)
	}
	return e.ID
}

func (d *clientDoc) put(t testing.TB, raw []byte, after string) {
	id := entryID(t, raw)
	for i, e := range d.entries {
		if entryID(t, []byte(e)) == id {
			d.entries[i] = string(raw)
			return
		}
	}
	at := len(d.entries)
	for i, e := range d.entries {
		if after != "" && entryID(t, []byte(e)) == after {
			at = i + 1
		}
	}
	d.entries = slices.Insert(d.entries, at, string(raw))
}

// openDoc opens a conversation and pages it whole.
func openDoc(t testing.TB, c *client, id string) *clientDoc {
	t.Helper()
	f := c.open(id)
	d := &clientDoc{gen: f.Generation}
	anchor := "earliest"
	for {
		p := c.page(f.Token, id, anchor, "after", pager.MaxBudget)
		if p.Type != "page" {
			t.Fatalf("page: %s", p.raw)
		}
		if p.First == nil {
			break
		}
		var groups []struct {
			Entries []jsontext.Value `json:"entries"`
		}
		if err := json.Unmarshal(p.Groups, &groups, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			for _, e := range g.Entries {
				d.entries = append(d.entries, string(e))
				anchor = entryID(t, e)
			}
		}
		if !p.HasMoreA {
			break
		}
	}
	if f.Checkpoint != nil {
		for _, ce := range f.Checkpoint.Entries {
			d.put(t, ce.Entry, ce.After)
			if d.revs == nil {
				d.revs = map[string]int64{}
			}
			d.revs[entryID(t, ce.Entry)] = ce.Revision
		}
	}
	c.call(map[string]any{"type": "release", "token": f.Token})
	return d
}

// followDoc applies the events that arrived before a ping's answer.
func followDoc(t testing.TB, c *client, id string, d *clientDoc) *clientDoc {
	t.Helper()
	c.call(map[string]any{"type": "ping"})
	held := c.held
	c.held = nil
	for _, f := range held {
		if f.Type != "event" || f.Conversation != id {
			continue
		}
		switch f.Op {
		case "replaced":
			return openDoc(t, c, id)
		default:
			d.apply(t, f)
		}
	}
	return d
}

// FuzzPagesAgreeWithHistoryRead feeds random and mutated logs both to
// history.Read and to the server's capture, paged out end to end, and to a
// Scanner fed in random pieces as the follower is. All three must give the
// same entries in the same order.
func FuzzPagesAgreeWithHistoryRead(f *testing.F) {
	for _, log := range agreeCases() {
		f.Add([]byte(log), uint64(1))
	}
	srv, err := New(Options{DataDir: f.TempDir(), TempDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	if err := os.MkdirAll(filepath.Dir(srv.logPath("x")), 0o700); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		want, werr := historyEntries(t, data)
		got, gerr := captureEntries(t, srv, "fuzz", data)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("history: %v, server: %v", werr, gerr)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("server pages\n%s\nhistory.Read\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if werr != nil {
			return
		}
		// The follower's way: the same bytes arriving in pieces.
		sc := history.NewScanner()
		rng := rand.New(rand.NewPCG(seed, 1))
		for end := 0; end < len(data); {
			end = min(len(data), end+1+rng.IntN(64))
			off := int(sc.Offset())
			for _, err := range sc.Records(bytes.NewReader(data[off:end])) {
				if err != nil {
					// A header cut short reads again once it is whole.
					sc = history.NewScanner()
					break
				}
			}
			if int(sc.Offset()) == end && end < len(data) && data[end-1] != '\n' && !bytes.HasPrefix(data[end:], []byte("\n")) && !bytes.HasPrefix(data[end:], []byte("\r\n")) {
				// A complete record whose line went on after a cut: no
				// writer of this format does that, and a follower cannot
				// take back what it applied.
				return
			}
		}
		var followed []string
		for _, e := range sc.Document() {
			b, _ := transcript.EncodeEntry(e)
			followed = append(followed, string(b))
		}
		if !slices.Equal(followed, want) {
			t.Fatalf("scanned in pieces\n%s\nhistory.Read\n%s", strings.Join(followed, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestHandoverBetweenProducers follows a conversation through both
// producers: the log follower (another process writes), the engine (it
// holds the log; what it writes is published by it alone), and the
// follower again. Every entry reaches the client exactly once, and the
// client's document is history.Read's.
func TestHandoverBetweenProducers(t *testing.T) {
	ts := newTestServer(t, Options{FollowInterval: 1 << 40}) // the test polls
	const id = "hand"
	path := ts.logPath(id)
	u1, a1 := agreeEntry("u1", "user", "hi"), agreeEntry("a1", "agent", "hello")
	if err := os.WriteFile(path, []byte(agreeHeader+"\n"+agreeRec("ui-append", u1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := ts.dial(t)
	doc := openDoc(t, c, id)
	cv := ts.conv(id)
	poll := func() {
		cv.mu.Lock()
		cv.pollLocked()
		cv.mu.Unlock()
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events := map[string]int{}
	follow := func() {
		c.call(map[string]any{"type": "ping"})
		for _, fr := range c.held {
			if fr.Type == "event" && (fr.Op == "upsert" || fr.Op == "settle") {
				events[entryID(t, fr.Entry)]++
			}
		}
		doc = followDoc(t, c, id, doc)
	}

	// The follower produces: another writer's record.
	f.WriteString(agreeRec("ui-append", a1) + "\n")
	poll()
	follow()

	// The engine takes over; what it saves is published by it, not read
	// back from the log.
	eng := engine.New(transcript.NewStore(), demo.New(demo.Options{}))
	defer eng.Close()
	cv.mu.Lock()
	cv.acquireLocked(eng)
	cv.mu.Unlock()
	u2 := transcript.Entry{ID: "u2", Content: transcript.User{Text: "more"}, Timestamp: tsAt(3)}
	must(t, ts.Publish(id, Change{Op: OpSettle, Entry: u2, After: "a1"}))
	raw, _ := transcript.EncodeEntry(u2)
	f.WriteString(agreeRec("ui-append", string(raw)) + "\n")
	poll()
	follow()
	cv.mu.Lock()
	cv.releaseLocked()
	cv.mu.Unlock()
	follow()

	// The follower again.
	a2 := agreeEntry("a2", "agent", "again")
	f.WriteString(agreeRec("ui-append", a2) + "\n")
	poll()
	follow()

	for _, e := range []string{"a1", "u2", "a2"} {
		if events[e] != 1 {
			t.Errorf("entry %s reached the client %d times", e, events[e])
		}
	}
	data, _ := os.ReadFile(path)
	want, err := historyEntries(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.entries, want) {
		t.Fatalf("followed\n%s\nhistory.Read\n%s", strings.Join(doc.entries, "\n"), strings.Join(want, "\n"))
	}
}
