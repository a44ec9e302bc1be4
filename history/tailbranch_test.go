package history

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// branchedLog writes, through Log as folio's writer does, a conversation
// that forks at random: turns on whichever branch is the head, forks of
// any branch after a random entry (or before the first) sharing a random
// number of its messages, head switches, compactions (a rewrite) on any
// branch, titles, and, for some seeds, a provisional tail at the end.
func branchedLog(t testing.TB, seed uint64, steps int) []byte {
	t.Helper()
	path := logPath(t)
	l := open(t, path)
	defer l.Close()
	rnd := rand.New(rand.NewPCG(seed, 16))
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d, m := c.Document, c.Messages
	n := 0
	id := func(kind string) string { n++; return fmt.Sprintf("s%d-%s%d", seed, kind, n) }
	turn := func() {
		u, a := id("u"), id("a")
		d = appendAll(t, d, user(u, "question "+u), agent(a, "answer "+a))
		m = append(m[:len(m):len(m)], msgs("question "+u, "answer "+a)...)
		if err := l.Save(d, m); err != nil {
			t.Fatal(err)
		}
	}
	reload := func(conv *Conversation) { d, m = conv.Document, conv.Messages }
	turn()
	for range steps {
		switch k := rnd.IntN(12); {
		case k < 5:
			turn()
		case k < 7: // a compaction: a summary entry, and the messages rewritten
			if d.Len() == 0 {
				continue
			}
			d = appendAll(t, d, transcript.Entry{ID: id("c"), Timestamp: t0, Content: transcript.Compaction{Summary: "so far",
				Covers: transcript.CompactionRange{FromID: d.At(0).ID, ToID: d.At(d.Len() - 1).ID}}})
			m = msgs("summary " + id("m"))
			if err := l.Save(d, m); err != nil {
				t.Fatal(err)
			}
		case k < 10: // a fork of a random branch
			whole, err := l.Load()
			if err != nil {
				t.Fatal(err)
			}
			parent := whole.Branches[rnd.IntN(len(whole.Branches))].ID
			pd, pm, err := whole.Branch(parent)
			if err != nil {
				t.Fatal(err)
			}
			after := ""
			if i := rnd.IntN(pd.Len() + 1); i > 0 {
				after = pd.At(i - 1).ID
			}
			b, err := l.Fork(parent, after, rnd.IntN(len(pm)+1), fmt.Sprintf("fork of %s", parent))
			if err != nil {
				t.Fatal(err)
			}
			if rnd.IntN(3) > 0 {
				conv, err := l.SetHead(b)
				if err != nil {
					t.Fatal(err)
				}
				reload(conv)
			}
		case k < 11: // back to another branch
			whole, err := l.Load()
			if err != nil {
				t.Fatal(err)
			}
			conv, err := l.SetHead(whole.Branches[rnd.IntN(len(whole.Branches))].ID)
			if err != nil {
				t.Fatal(err)
			}
			reload(conv)
		default:
			if err := l.SetTitle(id("title")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if seed%3 == 0 {
		open, err := d.Open(agent(id("o"), "partial"))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Save(open, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return readFile(t, path)
}

// withProblems puts lines no reader accepts into a log at random places
// after its header: a batch with an invalid entry (its readable ID is
// reserved), the same on a branch, an invalid message, a record of an
// unknown type, a line that is not JSON, a fork of a branch that does not
// exist; torn adds an incomplete last line.
func withProblems(data []byte, seed uint64, torn bool) []byte {
	rnd := rand.New(rand.NewPCG(seed, 61))
	ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	const at = `"at":"2026-03-04T05:06:08.000Z"`
	bad := []string{
		`{"type":"ui-append",` + at + `,"entries":[{"id":"rej-%d","content":{"kind":"nope"},"timestamp":"2026-03-04T05:06:07.000Z"}]}`,
		`{"type":"on-branch",` + at + `,"branch":"b1","record":{"type":"ui-append",` + at + `,"entries":[{"id":"rejb-%d","content":{"kind":"nope"},"timestamp":"2026-03-04T05:06:07.000Z"}]}}`,
		`{"type":"message",` + at + `,"message":{"role":"bogus","content":"%d"}}`,
		`{"type":"later-kind",` + at + `,"n":%d}`,
		`not a record %d`,
		`{"type":"branch",` + at + `,"branch":"x%d","parent":"nowhere","afterMessage":0}`,
	}
	for i := range 2 + rnd.IntN(5) {
		at := 1 + rnd.IntN(len(ls))
		line := fmt.Sprintf(bad[rnd.IntN(len(bad))], i)
		ls = slices.Insert(ls, at, line)
	}
	out := strings.Join(ls, "\n") + "\n"
	if torn {
		out += `{"type":"ui-append","entries":[{"id":`
	}
	return []byte(out)
}

// branchTailLogs are branched logs, some with problems, that the tail
// read through the index must answer for.
func branchTailLogs(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for seed := range uint64(10) {
		data := branchedLog(t, seed, 20+int(seed)*4)
		out[fmt.Sprintf("branched/%d", seed)] = data
		out[fmt.Sprintf("branched/%d/problems", seed)] = withProblems(data, seed, false)
		out[fmt.Sprintf("branched/%d/torn", seed)] = withProblems(data, seed, true)
		out[fmt.Sprintf("branched/%d/only-torn", seed)] = append(bytes.Clone(data), `{"type":"message","at":`...)
	}
	// A fork before main's first entry, after a rewrite, a compaction on
	// the fork and a fork of the fork, head on the last.
	base := branchedLog(t, 100, 0)
	at := `"at":"2026-03-04T05:06:08.000Z"`
	onB := func(b, rec string) string {
		return `{"type":"on-branch",` + at + `,"branch":"` + b + `","record":` + rec + `}`
	}
	msg := func(text string) string {
		return `{"type":"message",` + at + `,"message":{"role":"user","content":"` + text + `"}}`
	}
	out["scripted/forks"] = append(bytes.Clone(base), strings.Join([]string{
		`{"type":"rewrite",` + at + `}`,
		msg("after the rewrite"),
		`{"type":"branch",` + at + `,"branch":"b1","parent":"main","afterMessage":1}`,
		`{"type":"branch",` + at + `,"branch":"b2","parent":"main","afterEntry":"s100-a2","afterMessage":0,"title":"empty"}`,
		onB("b1", msg("on b1")),
		onB("b1", uiRec(TypeUIAppend, entryJSON(t, user("b1-u", "q")), entryJSON(t, agent("b1-a", "a")))),
		onB("b1", `{"type":"rewrite",`+at+`}`),
		onB("b1", msg("b1 summary")),
		onB("b1", uiRec(TypeUIAppend, entryJSON(t, transcript.Entry{ID: "b1-c", Timestamp: t0,
			Content: transcript.Compaction{Summary: "s", Covers: transcript.CompactionRange{FromID: "b1-u", ToID: "b1-a"}}}))),
		onB("b1", `{"type":"meta",`+at+`,"title":"b1 renamed"}`),
		`{"type":"branch",` + at + `,"branch":"b3","parent":"b1","afterEntry":"b1-a","afterMessage":2}`,
		onB("b3", uiRec(TypeUIOpen, entryJSON(t, agent("b3-o", "partial")))),
		`{"type":"head",` + at + `,"branch":"b3"}`,
	}, "\n")+"\n"...)
	return out
}

// TestTailThroughIndexBranchedAndProblems extends the differential test
// to branched logs (random forks of any branch, the head on any, forks
// before the first entry and after a rewrite, compactions on branches)
// and to logs with problems (rejected records of main and of branches,
// unknown and unreadable lines, a torn last line). The index must answer
// for every one of them, and as the full pass does.
func TestTailThroughIndexBranchedAndProblems(t *testing.T) {
	answered, branched, problems := 0, 0, 0
	var declined []string
	for name, data := range branchTailLogs(t) {
		path := filepath.Join(t.TempDir(), "data", conversationsDirName, "c1.jsonl")
		writeLog(t, path, data)
		buildIndex(path)
		for _, n := range tailWindows {
			for _, w := range tailStarts() {
				t.Run(fmt.Sprintf("%s/window=%d/%s", name, n, w.name), func(t *testing.T) {
					full, ferr := parseTail(bytes.Clone(data), n, w.start())
					if ferr != nil {
						t.Fatal(ferr)
					}
					got, err := tailFromIndex(path, n, w.start())
					if err != nil {
						declined = append(declined, fmt.Sprintf("%s: %v", name, err))
						return
					}
					answered++
					if len(full.conv.Branches) > 1 {
						branched++
					}
					if len(full.conv.Problems) > 0 {
						problems++
					}
					sameTail(t, got, full)
				})
			}
		}
	}
	if len(declined) > 0 {
		slices.Sort(declined)
		t.Fatalf("the index declined %d reads, first: %s", len(declined), declined[0])
	}
	if branched < 300 || problems < 300 {
		t.Fatalf("the index answered %d reads: %d of branched logs, %d of logs with problems", answered, branched, problems)
	}
}

// TestTailThroughIndexManyProblems: past the bounds the index keeps of
// a log's problems, the tail read declines (and LoadTail reads the log
// whole), and LoadTail still gives what Load gives.
func TestTailThroughIndexManyProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString(v3Header + "\n")
	b.WriteString(uiRec(TypeUIAppend, entryJSON(t, user("u", "q"))) + "\n")
	for i := range maxTailProblems + 1 {
		fmt.Fprintf(&b, "not a record %d\n", i)
	}
	path := logPath(t)
	writeLog(t, path, []byte(b.String()))
	ix := checkIndex(t, path)
	if !ix.st.extrasLost || ix.st.problems != maxTailProblems+1 {
		t.Fatalf("the index keeps the extras of %d problems (lost %v)", ix.st.problems, ix.st.extrasLost)
	}
	if _, err := readTail(path, 8, nil); err == nil {
		t.Fatal("the index answered for more problems than it keeps")
	}
	c, err := open(t, path).LoadTail(8, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) != maxTailProblems+1 || len(c.Unknown) != maxTailProblems+1 {
		t.Fatalf("%d problems, %d unknown lines", len(c.Problems), len(c.Unknown))
	}
}

// TestBranchedTailSavesLikeWhole: on a branched log with problems, a
// writer that read its tail through the index and one that read it
// whole write the same bytes when they save the same turn, switch heads
// and save again; and the index those saves extend still answers as the
// full pass does.
func TestBranchedTailSavesLikeWhole(t *testing.T) {
	for _, name := range []string{"branched/4", "branched/5/problems", "branched/6/torn", "scripted/forks"} {
		t.Run(name, func(t *testing.T) {
			data := branchTailLogs(t)[name]
			paths := []string{
				filepath.Join(t.TempDir(), "data", conversationsDirName, "c1.jsonl"),
				filepath.Join(t.TempDir(), "data", conversationsDirName, "c1.jsonl"),
			}
			var logs [2]*Log
			var convs [2]*Conversation
			for i, p := range paths {
				writeLog(t, p, data)
				checkIndex(t, p)
				logs[i] = open(t, p)
				var err error
				if i == 0 {
					convs[i], err = logs[i].Load()
				} else {
					if _, err := readTail(p, 8, nil); err != nil {
						t.Fatalf("the tail read declined: %v", err)
					}
					convs[i], err = logs[i].LoadTail(8, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for i := range logs {
				c := convs[i]
				d := appendAll(t, c.Document, user("bt-u", "one more"), agent("bt-a", "an answer"))
				m := append(c.Messages[:len(c.Messages):len(c.Messages)], msgs("one more", "an answer")...)
				if err := logs[i].Save(d, m); err != nil {
					t.Fatal(err)
				}
				other := Main
				if c.Head == Main {
					other = c.Branches[len(c.Branches)-1].ID
				}
				if _, err := logs[i].SetHead(other); err != nil {
					t.Fatal(err)
				}
				if err := logs[i].Close(); err != nil {
					t.Fatal(err)
				}
			}
			a, b := readFile(t, paths[0]), readFile(t, paths[1])
			if convs[0].Interrupted {
				// The notice that settles an interrupted answer has an ID
				// each writer mints afresh.
				a = bytes.ReplaceAll(a, []byte(noticeID(convs[0])), []byte("notice"))
				b = bytes.ReplaceAll(b, []byte(noticeID(convs[1])), []byte("notice"))
			}
			if !bytes.Equal(a, b) {
				i := 0
				for i < min(len(a), len(b)) && a[i] == b[i] {
					i++
				}
				t.Fatalf("the logs differ after a save, from byte %d:\nwhole:\n%s\nindex:\n%s", i, a[max(0, i-300):min(len(a), i+300)], b[max(0, i-300):min(len(b), i+300)])
			}
			checkIndex(t, paths[1])
			got, err := readTail(paths[1], 8, nil)
			if err != nil {
				t.Fatalf("after a save: %v", err)
			}
			full, err := parseTail(readFile(t, paths[1]), 8, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameTail(t, got, full)
			if !maps.Equal(got.reserved, full.reserved) {
				t.Fatal("reserved IDs differ")
			}
		})
	}
}

// TestOldFormatIndexIsRebuilt: an index written in the format before
// this one (magic FOLIOIX\x02, which kept no branch's messages but
// main's) is not a page index to this folio: the first tail read rebuilds
// it once, saying so at debug level, writes it in the new format and
// answers through it, as the full pass does; the next read rebuilds
// nothing.
func TestOldFormatIndexIsRebuilt(t *testing.T) {
	path := logPath(t)
	data := branchTailLogs(t)["branched/2/problems"]
	writeLog(t, path, data)
	checkIndex(t, path)
	old := readFile(t, IndexPath(path))
	copy(old, "FOLIOIX\x02")
	if err := os.WriteFile(IndexPath(path), old, 0o600); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)
	before := indexRebuilds.Load()
	got, err := readTail(path, 8, nil)
	if err != nil {
		t.Fatalf("the tail read declined after rebuilding: %v", err)
	}
	if n := indexRebuilds.Load() - before; n != 1 {
		t.Fatalf("%d rebuilds of an old-format index; want 1", n)
	}
	if !strings.Contains(logged.String(), "rebuilding a page index") || !strings.Contains(logged.String(), "not a page index") {
		t.Fatalf("the rebuild was not logged:\n%s", logged.String())
	}
	if b := readFile(t, IndexPath(path)); !bytes.HasPrefix(b, indexMagic) {
		t.Fatalf("the rebuilt index starts %q", b[:8])
	}
	full, err := parseTail(bytes.Clone(data), 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameTail(t, got, full)
	if len(full.conv.Branches) < 2 || len(full.conv.Problems) == 0 {
		t.Fatalf("the log has %d branches and %d problems", len(full.conv.Branches), len(full.conv.Problems))
	}
	if _, err := readTail(path, 8, nil); err != nil || indexRebuilds.Load()-before != 1 {
		t.Fatalf("the next read: %v, %d rebuilds", err, indexRebuilds.Load()-before)
	}
}

// TestWriterIndexesBranchedLightly: a writer on a branched log (the head
// a fork of main just before its last prompt, a side fork before main's
// first entry) keeps the index current without reading every ID back,
// while its saves go to the fork as on-branch records and it switches
// heads; the index stays what a rebuild gives, and the tail read through
// it what the full pass gives. A batch repeating an ID the table may hold
// then takes the full resume, and a fork of the fork follows it.
func TestWriterIndexesBranchedLightly(t *testing.T) {
	path := logPath(t)
	c := editedLog(t, path)
	at := `"at":"2026-03-04T05:06:08.000Z"`
	checkIndex(t, path)
	l := open(t, path)
	conv, err := l.LoadTail(16, nil)
	if err != nil {
		t.Fatal(err)
	}
	light, full := indexLightResumes.Load(), indexFullResumes.Load()
	same := func(step string) {
		t.Helper()
		l.flushIndex()
		checkIndex(t, path)
		got, gerr := readTail(path, 16, nil)
		want, werr := parseTail(readFile(t, path), 16, nil)
		if werr != nil || gerr != nil {
			t.Fatalf("%s: %v %v", step, werr, gerr)
		}
		sameTail(t, got, want)
	}
	d, m := conv.Document, conv.Messages
	for i := range 4 {
		d = appendAll(t, d, user(fmt.Sprintf("wb-u%d", i), "more"), agent(fmt.Sprintf("wb-a%d", i), "answer"))
		m = append(m[:len(m):len(m)], msgs("more", "answer")...)
		if err := l.Save(d, m); err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprintf("save %d on the fork", i))
	}
	if _, err := l.SetHead(Main); err != nil {
		t.Fatal(err)
	}
	same("head to main")
	if _, err := l.SetHead("b1"); err != nil {
		t.Fatal(err)
	}
	same("head back to the fork")
	if got := indexLightResumes.Load() - light; got != 1 {
		t.Fatalf("%d light resumes; want the writer's one", got)
	}
	if got := indexFullResumes.Load() - full; got != 0 {
		t.Fatalf("%d full resumes after saves on a fork and head switches", got)
	}
	// Another program appends a batch to the fork repeating an ID of the
	// entries it shares with main, which only the table's "maybe" can
	// catch: rejected, and the writer's next catch-up resumes in full.
	wr, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(wr, `{"type":"on-branch",%s,"branch":"b1","record":%s}`+"\n", at, uiRec(TypeUIAppend, entryJSON(t, agent(c.Document.At(0).ID, "again"))))
	wr.Close()
	d = appendAll(t, d, agent("wb-after", "after"))
	if err := l.Save(d, m); err != nil {
		t.Fatal(err)
	}
	same("a repeated ID on the fork")
	if got := indexFullResumes.Load() - full; got != 1 {
		t.Fatalf("%d full resumes after a repeated ID; want 1", got)
	}
	if _, err := l.Fork("b1", "wb-a0", 2, "again"); err != nil {
		t.Fatal(err)
	}
	same("a fork of the fork")
	if ix := checkIndex(t, path); ix.st.problems != 1 || len(ix.st.branch("b1").reserved) != 1 {
		t.Fatalf("the index counts %d problems, b1 reserves %v", ix.st.problems, ix.st.branch("b1").reserved)
	}
}

// TestTornTailLeavesTheIndex: a branched log whose index is behind it by
// only a torn last line (no newline, not a record) is read through the
// index as it is (no extension, which could gain nothing), and the tail
// read reports the torn line as the full pass does.
func TestTornTailLeavesTheIndex(t *testing.T) {
	path := logPath(t)
	editedLog(t, path)
	checkIndex(t, path)
	data := readFile(t, path)
	data = append(bytes.Clone(data), `{"type":"on-branch","at":"2026-03-04T05:06:08.000Z","branch":"b1","rec`...)
	writeLog(t, path, data)
	index := readFile(t, IndexPath(path))
	got, err := readTail(path, 8, nil)
	if err != nil {
		t.Fatalf("the tail read declined a torn log: %v", err)
	}
	if !bytes.Equal(readFile(t, IndexPath(path)), index) {
		t.Fatal("the torn line made the tail read extend the index, which gains nothing from it")
	}
	full, err := parseTail(bytes.Clone(data), 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(problemsOf(full.conv, ProblemTorn)) != 1 {
		t.Fatalf("problems %v", full.conv.Problems)
	}
	sameTail(t, got, full)
}

// editedLog writes at path a generated log continued as EditAndResend
// leaves it: a fork b1 of main just before its last prompt, sharing the
// messages before that turn, made the head, and a side fork b2 of main
// before its first entry. It returns the log as it was before the forks.
func editedLog(t *testing.T, path string) *Conversation {
	writeGen(t, path, gen.Options{Messages: 400, Seed: 4, Summaries: true})
	c := readConv(t, readFile(t, path))
	last := -1
	for i := c.Document.Len() - 1; i > 0 && last < 0; i-- {
		if c.Document.At(i).Content.Kind() == transcript.KindUser {
			last = i
		}
	}
	k := 0
	for i, m := range c.Messages {
		if m.Role == message.User {
			k = i
		}
	}
	w, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	at := `"at":"2026-03-04T05:06:08.000Z"`
	fmt.Fprintf(w, `{"type":"branch",%s,"branch":"b1","parent":"main","afterEntry":%q,"afterMessage":%d}`+"\n", at, c.Document.At(last-1).ID, k)
	fmt.Fprintf(w, `{"type":"branch",%s,"branch":"b2","parent":"main","afterMessage":0}`+"\n", at)
	fmt.Fprintf(w, `{"type":"head",%s,"branch":"b1"}`+"\n", at)
	w.Close()
	return c
}
