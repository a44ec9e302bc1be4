package history

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// indexTailLogs are tailFixtures plus generated logs the index can answer
// for: linear, with compactions and summaries, a provisional tail, a
// snapshot, a rewrite with no message after it, titles, an unterminated
// last record, Windows line ends.
func indexTailLogs(t *testing.T) map[string][]byte {
	t.Helper()
	out := tailFixtures(t)
	for seed := range uint64(8) {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, gen.Options{Messages: 30 + int(seed)*40, Seed: seed, Summaries: seed%2 == 0,
			NoModelMessages: seed == 5, Title: "a title"}); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("plain/%d", seed)] = buf.Bytes()
	}
	base := out["plain/2"]
	at := `"at":"2026-01-01T00:00:00.000Z"`
	u := func(id, text string) string { return entryJSON(t, user(id, text)) }
	a := func(id, text string) string { return entryJSON(t, agent(id, text)) }
	add := func(name string, lines ...string) {
		b := bytes.Clone(base)
		for _, l := range lines {
			b = append(b, l...)
		}
		out[name] = b
	}
	add("extra/open-tail", `{"type":"ui-open",`+at+`,"entries":[`+a("x-open", "partial")+`]}`+"\n")
	add("extra/snapshot", `{"type":"ui-transcript",`+at+`,"entries":[`+u("x-u", "again")+`,`+a("x-a", "answer")+`]}`+"\n")
	add("extra/rewrite-empty", `{"type":"rewrite",`+at+`}`+"\n")
	add("extra/meta", `{"type":"meta",`+at+`,"title":"renamed","updatedAt":"2030-05-05T05:05:05.000Z"}`+"\n")
	add("extra/unterminated", `{"type":"ui-append",`+at+`,"entries":[`+a("x-last", "no newline")+`]}`)
	add("extra/system-message", `{"type":"message",`+at+`,"message":{"role":"system","content":"old"}}`+"\n",
		`{"type":"message",`+at+`,"message":{"role":"user","content":"hi"}}`+"\n")
	out["extra/crlf"] = bytes.ReplaceAll(out["plain/1"], []byte("\n"), []byte("\r\n"))
	out["extra/empty"] = []byte(v3Header + "\n")
	return out
}

// TestTailThroughIndexReadsLikeFullPass is the page index's differential
// test for LoadTail: for every fixture and generated log, window and
// TailStart, the read through the index gives what the full pass gives,
// or declines (and LoadTail then takes the full pass). It must answer for
// the logs it is meant for.
func TestTailThroughIndexReadsLikeFullPass(t *testing.T) {
	answered := 0
	mustAnswer := map[string]bool{}
	for name, data := range indexTailLogs(t) {
		path := filepath.Join(t.TempDir(), "data", conversationsDirName, "c1.jsonl")
		writeLog(t, path, data)
		buildIndex(path)
		for _, n := range tailWindows {
			for _, w := range tailStarts() {
				t.Run(fmt.Sprintf("%s/window=%d/%s", name, n, w.name), func(t *testing.T) {
					full, ferr := parseTail(bytes.Clone(data), n, w.start())
					got, err := tailFromIndex(path, n, w.start())
					if err != nil {
						if strings.HasPrefix(name, "plain/") || strings.HasPrefix(name, "extra/") && name != "extra/empty" {
							mustAnswer[name] = true
						}
						// Branches and problems are no reason to decline:
						// only a version 2 log, a document derived from the
						// messages and more problems than the index keeps.
						if ferr == nil && full.version == Version && !full.conv.Derived && len(full.conv.Problems) <= maxTailProblems {
							mustAnswer[name] = true
						}
						return // declined: LoadTail reads the log
					}
					if ferr != nil {
						t.Fatalf("the index answered for a log the full pass rejects: %v", ferr)
					}
					answered++
					sameTail(t, got, full)
				})
			}
		}
	}
	if len(mustAnswer) > 0 {
		t.Fatalf("the index declined logs it is meant for: %v", slices.Sorted(maps.Keys(mustAnswer)))
	}
	if answered < 200 {
		t.Fatalf("the index answered only %d reads", answered)
	}
}

// buildIndex writes the page index of the log at path as a reader leaves
// it, if the log has one (a log the index cannot describe has none).
func buildIndex(path string) {
	if f, err := os.Open(path); err == nil {
		if ix, err := OpenIndex(path, f, 0); err == nil {
			ix.Close()
		}
		f.Close()
	}
}

// tailStart is a named TailStart maker (a fresh one per read: Start may
// keep state).
type tailStart struct {
	name  string
	start func() *TailStart
}

func tailStarts() []tailStart {
	return []tailStart{
		{"none", func() *TailStart { return nil }},
		{"third-last-user", func() *TailStart {
			return &TailStart{Kinds: []transcript.Kind{transcript.KindUser}, Start: func(p []Picked, from int, _ []message.Message) (int, bool) {
				if len(p) >= 3 {
					return p[len(p)-3].Index, false
				}
				return 1 << 30, from > 0
			}}
		}},
		{"first-user", func() *TailStart {
			return &TailStart{Kinds: []transcript.Kind{transcript.KindUser, transcript.KindSteering}, Start: func(p []Picked, from int, _ []message.Message) (int, bool) {
				if from > 0 {
					return 0, true
				}
				if len(p) == 0 {
					return 1 << 30, false
				}
				return p[0].Index, false
			}}
		}},
	}
}

// sameTail compares two tail reads: their conversations (documents by
// their window, first ID and entries) and the writer state.
func sameTail(t *testing.T, got, want *reader) {
	t.Helper()
	gd, wd := got.conv.Document, want.conv.Document
	if gd.Elided() != wd.Elided() || gd.Len() != wd.Len() || gd.FirstID() != wd.FirstID() || gd.ID() != wd.ID() {
		t.Fatalf("document: %d+%d first %q id %q, full pass %d+%d first %q id %q",
			gd.Elided(), gd.Len(), gd.FirstID(), gd.ID(), wd.Elided(), wd.Len(), wd.FirstID(), wd.ID())
	}
	for i := range gd.Len() {
		if !reflect.DeepEqual(gd.At(i), wd.At(i)) {
			t.Fatalf("entry %d:\nindex %+v\nfull  %+v", i, gd.At(i), wd.At(i))
		}
	}
	gc, wc := *got.conv, *want.conv
	gc.Document, wc.Document = transcript.Document{}, transcript.Document{}
	if !reflect.DeepEqual(gc, wc) {
		t.Fatalf("conversation:\nindex %+v\nfull  %+v", gc, wc)
	}
	if got.settledLen != want.settledLen || got.uiLines != want.uiLines || got.size != want.size ||
		got.terminated != want.terminated || !maps.Equal(got.reserved, want.reserved) ||
		!got.lastAt.Equal(want.lastAt) || !got.metaTime.Equal(want.metaTime) {
		t.Fatalf("writer state: settled %d/%d ui %d/%d size %d/%d terminated %v/%v reserved %v/%v at %v/%v meta %v/%v",
			got.settledLen, want.settledLen, got.uiLines, want.uiLines, got.size, want.size, got.terminated, want.terminated,
			got.reserved, want.reserved, got.lastAt, want.lastAt, got.metaTime, want.metaTime)
	}
}

// TestLoadTailUsesTheIndex: a writer's LoadTail on a log whose index is
// current reads through it, and saves after it write what a writer that
// read the log whole writes.
func TestLoadTailUsesTheIndex(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Messages: 300, Seed: 3, Summaries: true}); err != nil {
		t.Fatal(err)
	}
	paths := []string{filepath.Join(dir, "a", "data", "conversations", "c1.jsonl"), filepath.Join(dir, "b", "data", "conversations", "c1.jsonl")}
	var logs [2]*Log
	var convs [2]*Conversation
	for i, p := range paths {
		writeLog(t, p, buf.Bytes())
		logs[i] = open(t, p)
		var err error
		if i == 0 {
			convs[i], err = logs[i].Load() // builds the index in its pass
		} else {
			if _, err := os.Stat(IndexPath(p)); err == nil {
				t.Fatal("the index was there before anything built it")
			}
			if _, err := readTail(p, 8, nil); err != nil {
				t.Fatalf("the tail read declined a log it builds the index of: %v", err)
			}
			if _, err := readTail(p, 8, nil); err != nil {
				t.Fatalf("the tail read declined a current index: %v", err)
			}
			convs[i], err = logs[i].LoadTail(8, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range logs {
		d := appendAll(t, convs[i].Document, user("idx-u", "one more"), agent("idx-a", "an answer"))
		m := append(convs[i].Messages[:len(convs[i].Messages):len(convs[i].Messages)], msgs("one more", "an answer")...)
		if err := logs[i].Save(d, m); err != nil {
			t.Fatal(err)
		}
		logs[i].flushIndex()
	}
	if a, b := readFile(t, paths[0]), readFile(t, paths[1]); !bytes.Equal(a, b) {
		t.Fatalf("the logs differ after a save:\nwhole:\n%s\nindex:\n%s", a[len(a)-400:], b[len(b)-400:])
	}
	// The index the save extended still answers, and like the full pass.
	got, err := readTail(paths[1], 8, nil)
	if err != nil {
		t.Fatalf("after a save: %v", err)
	}
	full, err := parseTail(readFile(t, paths[1]), 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameTail(t, got, full)
}

// TestWriterIndexesLightly: a writer that opened a long log through its
// index keeps the index current after its saves without reading every ID
// back, and the index stays what a rebuild gives: after appends, an open
// tail, a title, a snapshot and a batch another program appended that
// repeats an ID (which readers reject, so the light Scanner must not
// judge it).
func TestWriterIndexesLightly(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 400, Seed: 4, Summaries: true})
	checkIndex(t, path)
	l := open(t, path)
	c, err := l.LoadTail(16, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, m := c.Document, c.Messages
	light, full := indexLightResumes.Load(), indexFullResumes.Load()
	same := func(step string) {
		t.Helper()
		l.flushIndex()
		checkIndex(t, path)
		got, gerr := readTail(path, 16, nil)
		want, werr := parseTail(readFile(t, path), 16, nil)
		if werr != nil {
			t.Fatal(werr)
		}
		if gerr != nil {
			if len(want.conv.Problems) == 0 {
				t.Fatalf("%s: the index declined: %v", step, gerr)
			}
			return
		}
		sameTail(t, got, want)
	}
	for i := range 6 {
		d = appendAll(t, d, user(fmt.Sprintf("lw-u%d", i), "more"), agent(fmt.Sprintf("lw-a%d", i), "answer"))
		m = append(m[:len(m):len(m)], msgs("more", "answer")...)
		if err := l.Save(d, m); err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprintf("append %d", i))
	}
	if got := indexLightResumes.Load() - light; got != 1 {
		t.Fatalf("%d light resumes; want the writer's one", got)
	}
	if got := indexFullResumes.Load() - full; got != 0 {
		t.Fatalf("%d full resumes after plain appends", got)
	}
	open, err := d.Open(agent("lw-open", "partial"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(open, m); err != nil {
		t.Fatal(err)
	}
	same("open tail")
	if err := l.SetTitle("light"); err != nil {
		t.Fatal(err)
	}
	same("title")
	// Another program appends a batch repeating an ID of the document's
	// start, which only the table's "maybe" can catch.
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "%s\n", uiRec(TypeUIAppend, entryJSON(t, agent(c.Document.FirstID(), "again"))))
	f.Close()
	d = appendAll(t, d, agent("lw-after", "after"))
	if err := l.Save(d, m); err != nil {
		t.Fatal(err)
	}
	same("a repeated ID")
	if got := indexFullResumes.Load() - full; got != 1 {
		t.Fatalf("%d full resumes after a repeated ID; want 1", got)
	}
	ix := checkIndex(t, path)
	if ix.st.problems != 1 {
		t.Fatalf("the index counts %d problems; want the rejected batch", ix.st.problems)
	}
}

// FuzzTailThroughIndex: for any log, the tail read through its page index
// gives what the full pass gives, or declines.
func FuzzTailThroughIndex(f *testing.F) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Messages: 12, Seed: 2, Summaries: true}); err == nil {
		f.Add(buf.Bytes()[bytes.IndexByte(buf.Bytes(), '\n')+1:])
	}
	f.Add([]byte(branchSeed))
	// A branched log with problems and a torn last line, as a writer and
	// other programs leave it.
	if data := withProblems(branchedLog(f, 4, 12), 4, true); true {
		f.Add(data[bytes.IndexByte(data, '\n')+1:])
	}
	f.Add([]byte(`{"type":"message","at":"2026-03-04T05:06:08.000Z","message":{"role":"user","content":"q"}}` + "\n" +
		`{"type":"rewrite","at":"2026-03-04T05:06:08.000Z"}` + "\n" +
		`{"type":"ui-open","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"s","content":{"kind":"agent","markdown":"par"},"timestamp":"2026-03-04T05:06:07.000Z"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		data := append([]byte(v3Header+"\n"), body...)
		path := filepath.Join(t.TempDir(), "c1.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := newIndexBuilder().scan(NewScanner(), bytes.NewReader(data), 0, int64(len(data)), Inode(fi))
		if err != nil {
			return
		}
		if err := os.WriteFile(IndexPath(path), idx, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 64} {
			for _, w := range tailStarts() {
				got, err := readTail(path, n, w.start())
				if err != nil {
					continue
				}
				full, ferr := parseTail(bytes.Clone(data), n, w.start())
				if ferr != nil {
					t.Fatalf("the index answered for a log the full pass rejects: %v", ferr)
				}
				sameTail(t, got, full)
			}
		}
	})
}

// TestResumeScannerLight: a Scanner resumed from a page index with an ID
// table holds only the end of main's document, and reads every record
// after it as a Scanner that read the log from its start does: plain
// appends, an open tail, a batch repeating an ID of the document's start
// (rejected; the Scanner then reads the IDs it left out), a fork and a
// head switch (still light: the table places the fork point), appends to
// the fork (light while none of their IDs may be main's; one that may be
// makes the Scanner read them, whether it is among the entries the fork
// shares or past them), a fork of the fork, a snapshot.
func TestResumeScannerLight(t *testing.T) {
	for _, step := range []string{"repeat", "fork", "fork-shared", "fork-past", "fork-fork", "snapshot", "main-snapshot", "compaction"} {
		t.Run(step, func(t *testing.T) {
			path := logPath(t)
			writeGen(t, path, gen.Options{Messages: 200, Seed: 6, Summaries: true})
			checkIndex(t, path)
			size := int64(len(readFile(t, path)))
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := ResumeScanner(path, f, size)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Partial() {
				t.Fatal("the Scanner resumed from an index with an ID table holds the whole document")
			}
			ref := NewScanner()
			for _, err := range ref.Records(io.NewSectionReader(f, 0, size)) {
				if err != nil {
					t.Fatal(err)
				}
			}
			doc := ref.Document()
			first, third, mid := doc[0].ID, doc[2].ID, doc[len(doc)/2].ID
			fork := func(id, parent, after string) string {
				return `{"type":"branch","at":"2026-03-04T05:06:08.000Z","branch":"` + id + `","parent":"` + parent + `","afterEntry":"` + after + `","afterMessage":0}`
			}
			head := func(id string) string {
				return `{"type":"head","at":"2026-03-04T05:06:08.000Z","branch":"` + id + `"}`
			}
			on := func(id, rec string) string {
				return `{"type":"on-branch","at":"2026-03-04T05:06:08.000Z","branch":"` + id + `","record":` + rec + `}`
			}
			app := func(lines ...string) {
				t.Helper()
				w, err := openAppend(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range lines {
					fmt.Fprintln(w, l)
				}
				w.Close()
				from := s.Offset()
				end := int64(len(readFile(t, path)))
				var got, want []Record
				for rec, err := range s.Records(io.NewSectionReader(f, from, end-from)) {
					if err != nil {
						t.Fatal(err)
					}
					rec.Batch = nil
					got = append(got, rec)
				}
				for rec, err := range ref.Records(io.NewSectionReader(f, from, end-from)) {
					if err != nil {
						t.Fatal(err)
					}
					rec.Batch = nil
					want = append(want, rec)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("records differ:\nlight %+v\nwhole %+v", got, want)
				}
			}
			app(uiRec(TypeUIAppend, entryJSON(t, user("rl-u", "q")), entryJSON(t, agent("rl-a", "a"))))
			app(uiRec(TypeUIOpen, entryJSON(t, agent("rl-o", "partial"))))
			if !s.Partial() {
				t.Fatal("plain appends made the Scanner read the IDs it left out")
			}
			switch step {
			case "repeat":
				app(uiRec(TypeUIAppend, entryJSON(t, agent(first, "again"))), uiRec(TypeUIAppend, entryJSON(t, agent("rl-b", "b"))))
			case "fork", "fork-shared", "fork-past", "fork-fork", "main-snapshot":
				app(fork("b1", Main, mid), head("b1"), fork("b2", Main, "rl-a"), fork("b3", Main, "rl-o"), fork("bad", Main, "nowhere"))
				app(on("b1", uiRec(TypeUIAppend, entryJSON(t, agent("rl-f", "on the fork")))), on("b2", uiRec(TypeUIAppend, entryJSON(t, agent("rl-f", "on b2")))))
				if !s.Partial() {
					t.Fatalf("%s: forks placed through the table made the Scanner read the IDs it left out", step)
				}
				switch step {
				case "fork-shared":
					app(on("b1", uiRec(TypeUIAppend, entryJSON(t, agent(third, "shared")))))
				case "fork-past":
					app(on("b1", uiRec(TypeUIAppend, entryJSON(t, agent(doc[len(doc)-1].ID, "past the fork")))))
				case "fork-fork":
					app(fork("b4", "b1", first), fork("b5", "b1", "rl-f"), fork("b6", "b1", doc[len(doc)-1].ID), head("b4"))
					if !s.Partial() {
						t.Fatal("forks of a fork made the Scanner read the IDs it left out")
					}
					app(on("b4", uiRec(TypeUIAppend, entryJSON(t, agent(third, "past b4's fork")))))
				case "main-snapshot":
					app(uiRec(TypeUITranscript, entryJSON(t, user("rl-s", "fresh"))))
					if !s.Partial() {
						t.Fatal("a snapshot of main made the Scanner forget what its forks left out")
					}
					app(uiRec(TypeUIAppend, entryJSON(t, agent(first, "now new"))), on("b1", uiRec(TypeUIAppend, entryJSON(t, agent(first, "shared with main before")))))
				}
			case "snapshot":
				app(uiRec(TypeUITranscript, entryJSON(t, user("rl-s", "fresh"))), uiRec(TypeUIAppend, entryJSON(t, agent(first, "now new"))))
			case "compaction":
				c := transcript.Entry{ID: "rl-c", Content: transcript.Compaction{Summary: "s", Covers: transcript.CompactionRange{FromID: first, ToID: "rl-a"}}, Timestamp: t0}
				app(uiRec(TypeUIAppend, entryJSON(t, c)))
			}
			// A snapshot, a fork and a compaction on main (which names
			// its entries by ID only) leave the Scanner light.
			if step != "snapshot" && step != "fork" && step != "compaction" && s.Partial() {
				t.Fatalf("%s: the Scanner still holds only the end", step)
			}
			if a, b := entryIDs(s.Document()), entryIDs(ref.Document()); !slices.Equal(a, b) {
				t.Fatalf("documents differ: light %d entries, whole %d", len(a), len(b))
			}
			app(uiRec(TypeUIAppend, entryJSON(t, agent("rl-z", "last"))))
			sameBranches(t, s, ref)
		})
	}
}

// sameBranches fails unless a Scanner holds the branches another holds, with
// the same descriptions, documents (IDs) and reserved IDs.
func sameBranches(t *testing.T, s, ref *Scanner) {
	t.Helper()
	if s.Partial() {
		s.Document() // reads what it left out
	}
	if !slices.Equal(s.r.tree.order, ref.r.tree.order) || s.Head() != ref.Head() {
		t.Fatalf("branches %v (head %s), want %v (head %s)", s.r.tree.order, s.Head(), ref.r.tree.order, ref.Head())
	}
	for _, id := range append([]string{Main}, ref.r.tree.order...) {
		a, _, _, ra, _ := s.r.stateOf(id)
		b, _, _, rb, _ := ref.r.stateOf(id)
		if !slices.Equal(entryIDs(a), entryIDs(b)) || !reflect.DeepEqual(ra, rb) {
			t.Fatalf("branch %s: light %d entries, whole %d; reserved %v, want %v", id, len(a), len(b), ra, rb)
		}
		if id != Main && s.r.tree.branches[id].info != ref.r.tree.branches[id].info {
			t.Fatalf("branch %s: light %+v, whole %+v", id, s.r.tree.branches[id].info, ref.r.tree.branches[id].info)
		}
	}
}

func entryIDs(es []transcript.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// TestFindByTable: IndexDoc.Find through the ID table finds every entry of
// main's document at its index (those the table holds, those appended
// after it, the provisional tail) and no other.
func TestFindByTable(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 600, Seed: 8, Summaries: true})
	checkIndex(t, path)
	w, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(w, uiRec(TypeUIAppend, entryJSON(t, user("ft-u", "q")), entryJSON(t, agent("ft-a", "a"))))
	fmt.Fprintln(w, uiRec(TypeUIOpen, entryJSON(t, agent("ft-o", "partial"))))
	w.Close()
	ix := checkIndex(t, path) // extended: the table covers what was there
	if len(ix.st.tables) == 0 || ix.st.tableN()+2 != ix.st.branches[0].count {
		t.Fatalf("the extended index's table covers %d of %d entries", ix.st.tableN(), ix.st.branches[0].count)
	}
	d, err := ix.Document(Main)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := d.Refs(0, d.Len())
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range refs {
		d, _ := ix.Document(Main)
		got, ok := d.findByTable(r.ID)
		if !ok || got != i {
			t.Fatalf("entry %d %q: found at %d (%v)", i, r.ID, got, ok)
		}
	}
	for _, id := range []string{"nope", "g8-", ""} {
		d, _ := ix.Document(Main)
		if got, ok := d.findByTable(id); !ok || got != -1 {
			t.Fatalf("%q: found at %d (%v)", id, got, ok)
		}
	}
}

// TestSnapshotKeepsTheIDTable: a snapshot drops main's ID table, and the
// commit that indexes it writes a new one, so the next writer still
// resumes light.
func TestSnapshotKeepsTheIDTable(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 200, Seed: 5, Summaries: true})
	checkIndex(t, path)
	l := open(t, path)
	c, err := l.LoadTail(16, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Document.Replace(agent(c.Document.At(c.Document.Len()-1).ID, "changed"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, c.Messages); err != nil {
		t.Fatal(err)
	}
	l.flushIndex()
	ix := checkIndex(t, path)
	if len(ix.st.tables) == 0 || ix.st.tableN() != ix.st.branches[0].count {
		t.Fatalf("after a snapshot the table covers %d of %d entries", ix.st.tableN(), ix.st.branches[0].count)
	}
	l.Close()
	light := indexLightResumes.Load()
	l = open(t, path)
	c, err = l.LoadTail(16, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(appendAll(t, c.Document, agent("st-a", "more")), c.Messages); err != nil {
		t.Fatal(err)
	}
	l.flushIndex()
	if indexLightResumes.Load() == light {
		t.Fatal("the writer after a snapshot did not resume light")
	}
	for i, r := range refsOf_(t, checkIndex(t, path)) {
		d, _ := ix.Document(Main)
		if got, ok := d.findByTable(r.ID); i < ix.st.branches[0].count && (!ok || got != i) {
			t.Fatalf("entry %d %q: found at %d (%v)", i, r.ID, got, ok)
		}
	}
}
