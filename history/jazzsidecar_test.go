package history

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/gen"
)

// jazzFixtures are the logs shaped as Jazz writes them (history/export's
// fixtures and the engine's Jazz data folder), by name.
func jazzFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{"export/testdata/jazz/*.jsonl", "../engine/testdata/jazz/*/*.jsonl"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			out[p] = readFile(t, p)
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d Jazz fixtures found", len(out))
	}
	return out
}

// jazzLog writes data as Jazz keeps a log, <data>/conversations/<agent>/<id>.jsonl,
// and returns its path.
func jazzLog(t testing.TB, data, agent, id string, log []byte) string {
	t.Helper()
	p := filepath.Join(ConversationsDir(data), agent, id+".jsonl")
	writeLog(t, p, log)
	return p
}

// dirNames lists a folder's entries, with each one's size.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		fi, err := de.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d", de.Name(), fi.Size()))
	}
	return out
}

// rebuilt runs f and returns how many page indexes it rebuilt.
func rebuilt(f func()) int64 {
	before := indexRebuilds.Load()
	f()
	return indexRebuilds.Load() - before
}

func TestSidecarPaths(t *testing.T) {
	data := filepath.Join("/d", "folio")
	for _, tc := range []struct{ log, index, summary string }{
		{"/d/folio/conversations/c1.jsonl", "/d/folio/conversations/c1.jsonl.index", "/d/folio/conversations/c1.jsonl.summary"},
		{"/d/folio/conversations/coder/c1.jsonl", "/d/folio/jazz-sidecars/coder/c1.jsonl.index", "/d/folio/jazz-sidecars/coder/c1.jsonl.summary"},
		// An agent folder named conversations holds, by its path, folio's
		// own logs of the data folder /d/folio/conversations.
		{"/d/folio/conversations/conversations/c1.jsonl", "/d/folio/conversations/conversations/c1.jsonl.index", "/d/folio/conversations/conversations/c1.jsonl.summary"},
		{"/tmp/c1.jsonl", "/tmp/c1.jsonl.index", "/tmp/c1.jsonl.summary"},
		{"/d/folio/conversations/.hidden/c1.jsonl", "/d/folio/conversations/.hidden/c1.jsonl.index", "/d/folio/conversations/.hidden/c1.jsonl.summary"},
	} {
		if got := IndexPath(filepath.FromSlash(tc.log)); got != filepath.FromSlash(tc.index) {
			t.Errorf("IndexPath(%s) = %s; want %s", tc.log, got, tc.index)
		}
		if got := SummaryPath(filepath.FromSlash(tc.log)); got != filepath.FromSlash(tc.summary) {
			t.Errorf("SummaryPath(%s) = %s; want %s", tc.log, got, tc.summary)
		}
	}
	for dir, want := range map[string]bool{
		ConversationsDir(data):                           true,
		filepath.Join(ConversationsDir(data), "coder"):   true,
		filepath.Join(ConversationsDir(data), ".hidden"): false,
		filepath.Join(data, "elsewhere"):                 false,
		"/tmp":                                           false,
	} {
		if got := inConversations(dir); got != want {
			t.Errorf("inConversations(%s) = %v; want %v", dir, got, want)
		}
	}
	// A sidecar folder is made only for an agent folder that is there.
	tmpData := t.TempDir()
	for _, p := range []string{
		filepath.Join(tmpData, "jazz-sidecars", "ghost", "c1.jsonl.index"),
		filepath.Join(tmpData, "elsewhere", "c1.jsonl.index"),
		filepath.Join(tmpData, "conversations", ".hidden", "c1.jsonl.index"),
	} {
		if err := sidecarDir(p); err == nil {
			t.Errorf("sidecarDir(%s) accepted", p)
		}
	}
	if _, err := os.Stat(filepath.Join(tmpData, "jazz-sidecars")); err == nil {
		t.Error("a sidecar folder was made for no agent folder")
	}
	// Neither listing takes the sidecars folder, or what is in it, for a
	// conversation.
	tmp := t.TempDir()
	p := jazzLog(t, tmp, "coder", "c1", readFile(t, "export/testdata/jazz/conversation-full.jsonl"))
	checkIndex(t, p)
	if _, err := List(tmp); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{IndexPath(p), SummaryPath(p)} {
		if _, err := os.Stat(q); err != nil {
			t.Fatalf("no sidecar: %v", err)
		}
	}
	logs, err := Logs(tmp)
	if err != nil || len(logs) != 1 || logs[0].Path != p {
		t.Fatalf("Logs = %v, %v; want only %s", logs, err, p)
	}
}

// A Jazz-layout log of every Jazz fixture gets a page index in the data
// folder's jazz-sidecars folder: the first open builds it (its documents
// match a full read), the second extends nothing and rebuilds nothing,
// and the agent folder Jazz owns gains no file.
func TestJazzLayoutIndexIsKept(t *testing.T) {
	paged := 0
	for name, log := range jazzFixtures(t) {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			path := jazzLog(t, data, "coder", "c1", log)
			agentDir := filepath.Dir(path)
			before := dirNames(t, agentDir)
			c, err := ReadFile(path)
			if err != nil {
				t.Skip("not a readable log:", err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if c.Header.Version == 2 {
				if _, err := OpenIndex(path, f, 0); !errors.Is(err, ErrNotPaged) {
					t.Fatalf("a version 2 log: %v; want ErrNotPaged", err)
				}
			} else {
				if n := rebuilt(func() { checkIndex(t, path) }); n != 1 {
					t.Fatalf("first open: %d rebuilds; want 1", n)
				}
				if ipath := IndexPath(path); !strings.HasPrefix(ipath, filepath.Join(data, "jazz-sidecars", "coder")+string(filepath.Separator)) {
					t.Fatalf("index at %s", ipath)
				}
				if _, err := os.Stat(IndexPath(path)); err != nil {
					t.Fatalf("the index was not kept: %v", err)
				}
				if n := rebuilt(func() { checkIndex(t, path) }); n != 0 {
					t.Fatalf("second open: %d rebuilds; want the kept index used", n)
				}
				paged++
			}
			if _, err := List(data); err != nil {
				t.Fatal(err)
			}
			if after := dirNames(t, agentDir); !slices.Equal(after, before) {
				t.Fatalf("Jazz's agent folder held %v; now %v", before, after)
			}
		})
	}
	t.Logf("%d Jazz fixtures kept a page index", paged)
	if paged < 30 {
		t.Fatalf("only %d Jazz fixtures have a page index", paged)
	}
}

// The engine's tail read answers through the kept index of a Jazz-layout
// log exactly as the full pass does, for every fixture it does not
// decline; the ones it declines are those it declines anywhere
// (version 2, derived documents, more problems than the index keeps).
func TestJazzLayoutTailThroughIndex(t *testing.T) {
	fixtures := jazzFixtures(t)
	answered, mustAnswer, v3 := map[string]bool{}, map[string]bool{}, 0
	for name, log := range fixtures {
		data := t.TempDir()
		path := jazzLog(t, data, "coder", "c1", log)
		if c, err := ReadFile(path); err == nil && c.Header.Version == Version {
			v3++
			// What the tail read is for: version 3, a document written
			// as UI records, no more problems than the index keeps.
			mustAnswer[name] = !c.Derived && len(c.Problems) <= maxTailProblems
		}
		buildIndex(path)
		// The same log outside any data folder: what the tail read makes
		// of it there, given its index, is what it must make of it here.
		flat := filepath.Join(t.TempDir(), "data", conversationsDirName, "c1.jsonl")
		writeLog(t, flat, log)
		if f, err := os.Open(flat); err == nil {
			if ix, err := OpenIndex(flat, f, 0); err == nil {
				ix.Close()
			}
			f.Close()
		}
		for _, n := range tailWindows {
			for _, w := range tailStarts() {
				t.Run(fmt.Sprintf("%s/window=%d/%s", name, n, w.name), func(t *testing.T) {
					full, ferr := parseTail(bytes.Clone(log), n, w.start())
					got, err := tailFromIndex(path, n, w.start())
					_, flatErr := tailFromIndex(flat, n, w.start())
					if (err == nil) != (flatErr == nil) {
						t.Fatalf("Jazz layout: %v; folio's layout: %v", err, flatErr)
					}
					if err != nil {
						return
					}
					if ferr != nil {
						t.Fatalf("the index answered for a log the full pass rejects: %v", ferr)
					}
					answered[name] = true
					sameTail(t, got, full)
				})
			}
		}
	}
	t.Logf("the tail read went through the index for %d of %d Jazz fixtures (%d of them version 3)", len(answered), len(fixtures), v3)
	for name, must := range mustAnswer {
		if must != answered[name] {
			t.Errorf("%s: the tail read answered %v; want %v", name, answered[name], must)
		}
	}
	if len(answered) < 20 {
		t.Fatalf("the tail read answered for only %d of %d Jazz fixtures", len(answered), len(fixtures))
	}
}

// jazzAppend appends records to a log as Jazz does: O_APPEND, one write.
func jazzAppend(t testing.TB, path string, records ...string) {
	t.Helper()
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(records, "")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// tailLikeFullPass checks the tail read through the index of the log at
// path against the full pass; it must answer.
func tailLikeFullPass(t *testing.T, path string) {
	t.Helper()
	got, err := tailFromIndex(path, 3, nil)
	if err != nil {
		t.Fatalf("the tail read declined: %v", err)
	}
	full, err := parseTail(readFile(t, path), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameTail(t, got, full)
}

// Jazz appending to a log folio keeps an index for: the next open extends
// the index. Jazz rewriting it (a new file renamed over it, or the same
// file rewritten in place): the next open rebuilds it. Either way what the
// index gives matches a full read.
func TestJazzWritesAfterTheIndex(t *testing.T) {
	data := t.TempDir()
	path := jazzLog(t, data, "coder", "c1", readFile(t, "export/testdata/jazz/conversation-full.jsonl"))
	checkIndex(t, path)
	tailLikeFullPass(t, path)
	at := `"at":"2026-10-01T10:01:00.000Z"`
	for i := range 3 {
		jazzAppend(t, path,
			`{"type":"message",`+at+`,"message":{"role":"user","content":"more"}}`+"\n",
			`{"type":"ui-append",`+at+`,"entries":[`+entryJSON(t, user(fmt.Sprintf("jz-u%d", i), "more"))+`]}`+"\n",
			`{"type":"ui-append",`+at+`,"entries":[`+entryJSON(t, agent(fmt.Sprintf("jz-a%d", i), "answer"))+`]}`+"\n")
		if n := rebuilt(func() { checkIndex(t, path) }); n != 0 {
			t.Fatalf("append %d: %d rebuilds; want the index extended", i, n)
		}
		tailLikeFullPass(t, path)
	}
	// A rewrite through a temporary file and a rename: another inode.
	log := readFile(t, path)
	snapshot := string(log[:bytes.IndexByte(log, '\n')+1]) +
		`{"type":"ui-transcript",` + at + `,"entries":[` + entryJSON(t, user("jz-s", "after the rewrite")) + `]}` + "\n"
	tmp := path + ".tmp"
	writeLog(t, tmp, []byte(snapshot))
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if n := rebuilt(func() { checkIndex(t, path) }); n != 1 {
		t.Fatalf("after a rename over the log: %d rebuilds; want 1", n)
	}
	tailLikeFullPass(t, path)
	// The same file rewritten in place, longer than the index describes
	// and with other records where the index's last one was.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(string(log[:bytes.IndexByte(log, '\n')+1]) +
		`{"type":"ui-transcript",` + at + `,"entries":[` + entryJSON(t, user("jz-t", "rewritten in place")) + `,` + entryJSON(t, agent("jz-t2", "and longer")) + `]}` + "\n")
	f.Close()
	if nfi, err := os.Stat(path); err != nil || Inode(nfi) != Inode(fi) || nfi.Size() <= fi.Size() {
		t.Fatalf("not the same file, grown: %v", err)
	}
	if n := rebuilt(func() { checkIndex(t, path) }); n != 1 {
		t.Fatalf("after a rewrite in place: %d rebuilds; want 1", n)
	}
	tailLikeFullPass(t, path)
	if n := rebuilt(func() { checkIndex(t, path) }); n != 0 {
		t.Fatalf("%d rebuilds after the rebuilt index was kept", n)
	}
}

// A sidecar at a Jazz log's path that was made for another log (an agent
// folder renamed and another made under the old name, a log moved in over
// another, sidecars copied from another data folder) is never used: the
// index is rebuilt once and then kept. Moving the whole data folder keeps
// logs and sidecars together, and nothing is rebuilt.
func TestJazzSidecarOfAnotherLog(t *testing.T) {
	gen1 := func(seed uint64) []byte {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, gen.Options{Messages: 40 + int(seed)*7, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	data := t.TempDir()
	x := jazzLog(t, data, "a", "c1", gen1(1))
	checkIndex(t, x)
	if _, err := List(data); err != nil { // keeps x's summary
		t.Fatal(err)
	}

	// The agent folder a is renamed b; a new a holds another log c1,
	// moved in from elsewhere with its old modification time.
	conv := ConversationsDir(data)
	if err := os.Rename(filepath.Join(conv, "a"), filepath.Join(conv, "b")); err != nil {
		t.Fatal(err)
	}
	y := jazzLog(t, data, "a", "c1", gen1(2))
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(y, past, past); err != nil {
		t.Fatal(err)
	}
	if n := rebuilt(func() { checkIndex(t, y) }); n != 1 {
		t.Fatalf("another log under a's old index: %d rebuilds; want 1", n)
	}
	for _, p := range []string{y, filepath.Join(conv, "b", "c1.jsonl")} {
		c, err := ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if s := Summarize(p); s.Entries != c.Document.Len() || s.Messages != len(c.Messages) {
			t.Fatalf("%s listed with %d entries, %d messages; it has %d, %d", p, s.Entries, s.Messages, c.Document.Len(), len(c.Messages))
		}
	}
	if n := rebuilt(func() { checkIndex(t, y) }); n != 0 {
		t.Fatalf("a's rebuilt index was not kept: %d rebuilds", n)
	}
	moved := filepath.Join(conv, "b", "c1.jsonl")
	if n := rebuilt(func() { checkIndex(t, moved) }); n != 1 {
		t.Fatalf("the moved log: %d rebuilds; want 1", n)
	}
	if n := rebuilt(func() { checkIndex(t, moved) }); n != 0 {
		t.Fatalf("the moved log's index was not kept: %d rebuilds", n)
	}

	// Sidecars copied from this data folder into another whose log at the
	// same place is another one.
	other := t.TempDir()
	z := jazzLog(t, other, "a", "c1", gen1(3))
	if err := os.MkdirAll(filepath.Dir(IndexPath(z)), 0o700); err != nil {
		t.Fatal(err)
	}
	writeLog(t, IndexPath(z), readFile(t, IndexPath(y)))
	if n := rebuilt(func() { checkIndex(t, z) }); n != 1 {
		t.Fatalf("a copied index: %d rebuilds; want 1", n)
	}

	// The whole data folder moved: every log keeps its index.
	movedData := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(data, movedData); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(ConversationsDir(movedData), "a", "c1.jsonl"), filepath.Join(ConversationsDir(movedData), "b", "c1.jsonl")} {
		if n := rebuilt(func() { checkIndex(t, p) }); n != 0 {
			t.Fatalf("%s after the data folder moved: %d rebuilds", p, n)
		}
	}
}

// Listing a data folder reads a Jazz log once: its summary is kept in
// jazz-sidecars and answers the next listing. Deleting the conversation
// removes its index and summary, and their agent folder there.
func TestJazzSummaryAndDelete(t *testing.T) {
	data := t.TempDir()
	path := jazzLog(t, data, "coder", "c1", readFile(t, "export/testdata/jazz/conversation-full.jsonl"))
	checkIndex(t, path)
	agentDir := filepath.Dir(path)
	before := dirNames(t, agentDir)
	first := listOnly(t, data)
	if _, err := os.Stat(SummaryPath(path)); err != nil {
		t.Fatalf("no summary kept: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cachedSummary(path, fi); !ok {
		t.Fatal("the kept summary does not match the log")
	}
	// The next listing answers from the summary (a summary says what it
	// was told, so change its title and see it listed).
	s, _ := cachedSummary(path, fi)
	s.Title = "FROM THE SUMMARY"
	writeSummary(SummaryPath(path), s)
	if got := listOnly(t, data); got.Title != "FROM THE SUMMARY" || got.Entries != first.Entries {
		t.Fatalf("listed %+v; want it from the summary", got)
	}
	if after := dirNames(t, agentDir); !slices.Equal(after, before) {
		t.Fatalf("Jazz's agent folder held %v; now %v", before, after)
	}
	if err := (Files{Dir: data}).Delete("c1"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{path, IndexPath(path), SummaryPath(path), filepath.Dir(IndexPath(path))} {
		if _, err := os.Stat(q); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s after the delete: %v", q, err)
		}
	}
}

// folio writing to a Jazz log (a resumed conversation) keeps its index
// current in jazz-sidecars, extending it, and leaves no file in the agent
// folder once the log is closed.
func TestWriterOfAJazzLogKeepsItsIndex(t *testing.T) {
	data := t.TempDir()
	path := jazzLog(t, data, "coder", "c1", readFile(t, "export/testdata/jazz/conversation-full.jsonl"))
	before := dirNames(t, filepath.Dir(path))
	checkIndex(t, path)
	n := rebuilt(func() {
		l := open(t, path)
		c, err := l.LoadTail(8, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Save(appendAll(t, c.Document, user("w-u", "from folio"), agent("w-a", "answer")), append(c.Messages, msgs("from folio", "answer")...)); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%d rebuilds while folio wrote the Jazz log; want its index extended", n)
	}
	if n := rebuilt(func() { checkIndex(t, path) }); n != 0 {
		t.Fatalf("%d rebuilds after folio wrote the Jazz log", n)
	}
	tailLikeFullPass(t, path)
	after := dirNames(t, filepath.Dir(path))
	if len(after) != len(before) || !strings.HasPrefix(after[0], "c1.jsonl ") {
		t.Fatalf("Jazz's agent folder held %v; now %v", before, after)
	}
}

// folio upgrading a version 2 Jazz log (its first save to it) writes the
// new file's index into jazz-sidecars, as for a flat log, and the agent
// folder holds only the log once folio is done.
func TestUpgradeOfAJazzLog(t *testing.T) {
	data := t.TempDir()
	path := jazzLog(t, data, "coder", "c1", readFile(t, "export/testdata/jazz/legacy-types.jsonl"))
	l := open(t, path)
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.Header.Version != 2 {
		t.Fatalf("version %d; want a version 2 fixture", c.Header.Version)
	}
	if err := l.Save(appendAll(t, c.Document, user("up-u", "after the upgrade")), c.Messages); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(IndexPath(path)); err != nil {
		t.Fatalf("the upgrade kept no index: %v", err)
	}
	if n := rebuilt(func() { checkIndex(t, path) }); n != 0 {
		t.Fatalf("%d rebuilds after the upgrade wrote the index", n)
	}
	tailLikeFullPass(t, path)
	if names := dirNames(t, filepath.Dir(path)); len(names) != 1 || !strings.HasPrefix(names[0], "c1.jsonl ") {
		t.Fatalf("Jazz's agent folder holds %v; want only the log", names)
	}
}

// An engine opening a Jazz log folio has no index for (LoadTail) builds
// the index once, in jazz-sidecars, and reads through it; the next open,
// and one after Jazz appended, read through the kept index without a
// rebuild. Each gives what the full pass gives.
func TestLoadTailOfAJazzLog(t *testing.T) {
	data := t.TempDir()
	path := jazzLog(t, data, "coder", "c1", readFile(t, "../engine/testdata/jazz/agent-1/conv-failed.jsonl"))
	before := dirNames(t, filepath.Dir(path))
	load := func(step string, wantRebuilds int64) {
		t.Helper()
		var c *Conversation
		rebuilds, tails := tailCounts(func() {
			l := open(t, path)
			var err error
			if c, err = l.LoadTail(4, nil); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		})
		if rebuilds != wantRebuilds || tails != 1 {
			t.Fatalf("%s: %d rebuilds, %d tail reads through the index; want %d and 1", step, rebuilds, tails, wantRebuilds)
		}
		// The full pass as a Log reads it: the failure Jazz held only
		// as a notice is in the messages (failmsg.go).
		full, err := parseTailWith(readFile(t, path), 4, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		if c.Document.Len() != full.conv.Document.Len() || c.Document.Elided() != full.conv.Document.Elided() ||
			c.Document.FirstID() != full.conv.Document.FirstID() || len(c.Messages) != len(full.conv.Messages) {
			t.Fatalf("%s: read %d+%d entries, %d messages; the full pass %d+%d, %d", step,
				c.Document.Elided(), c.Document.Len(), len(c.Messages), full.conv.Document.Elided(), full.conv.Document.Len(), len(full.conv.Messages))
		}
		tailLikeFullPass(t, path)
	}
	load("first open", 1)
	if _, err := os.Stat(IndexPath(path)); err != nil {
		t.Fatalf("no index kept: %v", err)
	}
	load("second open", 0)
	at := `"at":"2026-10-01T10:01:00.000Z"`
	jazzAppend(t, path, `{"type":"ui-append",`+at+`,"entries":[`+entryJSON(t, user("jz-late", "from jazz"))+`]}`+"\n")
	load("after Jazz appended", 0)
	if after := dirNames(t, filepath.Dir(path)); len(after) != len(before) {
		t.Fatalf("Jazz's agent folder held %v; now %v", before, after)
	}
}

// A reader holding a log that a rewrite is replacing leaves alone the
// index the rewrite wrote for the new file, both before the rename (that
// index names the log it was rewritten from) and after it (the path names
// the new file): the new file's first reader finds its index and rebuilds
// nothing.
func TestReaderOfTheOldFileKeepsTheRewritesIndex(t *testing.T) {
	for _, path := range []string{logPath(t), jazzLog(t, t.TempDir(), "coder", "c1", nil)} {
		writeGen(t, path, gen.Options{Messages: 60, Seed: 5})
		checkIndex(t, path)
		old, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		ofi, err := old.Stat()
		if err != nil {
			t.Fatal(err)
		}
		tmp := path + ".tmp"
		writeGen(t, tmp, gen.Options{Messages: 30, Seed: 6})
		indexRewrite(path, tmp, Inode(ofi), ofi.Size())
		written, err := os.Stat(IndexPath(path))
		if err != nil {
			t.Fatal(err)
		}
		same := func(step string) {
			t.Helper()
			ix, err := OpenIndex(path, old, 0)
			if err != nil {
				t.Fatal(err)
			}
			ix.Close()
			if now, err := os.Stat(IndexPath(path)); err != nil || !os.SameFile(now, written) || now.Size() != written.Size() {
				t.Fatalf("%s: the old file's reader replaced the rewrite's index (%v)", step, err)
			}
		}
		same("before the rename")
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		same("after the rename")
		if n := rebuilt(func() { checkIndex(t, path) }); n != 0 {
			t.Fatalf("the new file's reader: %d rebuilds; want the rewrite's index used", n)
		}
	}
}
