package history

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// sameAsRebuild fails unless the page index on disk beside the log at path
// describes what an index rebuilt from the log in one pass does: every
// branch's description, counts, last entry, provisional tail, compactions
// resolved to turns, reserved IDs and model messages, and the state's
// head, title and problems. Frame positions may differ.
func sameAsRebuild(t *testing.T, step, path string) {
	t.Helper()
	got, err := readIndexFile(IndexPath(path))
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	defer got.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	want, err := rebuildIndex(IndexPath(path), f, Inode(fi), fi.Size(), nil, false)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	defer want.Close()
	g, w := got.st, want.st
	if g.logSize != w.logSize || g.lines != w.lines || g.head != w.head || g.title != w.title ||
		g.problems != w.problems || !g.lastAt.Equal(w.lastAt) || !g.metaTime.Equal(w.metaTime) || g.extrasLost != w.extrasLost {
		t.Fatalf("%s: state %+v\nrebuilt %+v", step, g, w)
	}
	if len(g.branches) != len(w.branches) {
		t.Fatalf("%s: %d branches, rebuilt %d", step, len(g.branches), len(w.branches))
	}
	for i, gb := range g.branches {
		wb := w.branches[i]
		if gb.info != wb.info || gb.uiLines != wb.uiLines || gb.msgs != wb.msgs || gb.count != wb.count ||
			gb.lastRef != wb.lastRef || gb.first != wb.first || gb.msgsMade != wb.msgsMade {
			t.Fatalf("%s: branch %d %+v\nrebuilt %+v", step, i, gb, wb)
		}
		for _, p := range []struct {
			what      string
			got, want any
		}{{"tail", gb.tail, wb.tail}, {"compactions", gb.cov, wb.cov}, {"tail compactions", gb.tailCov, wb.tailCov}, {"reserved", gb.reserved, wb.reserved}} {
			if reflect.ValueOf(p.got).Len() == 0 && reflect.ValueOf(p.want).Len() == 0 {
				continue
			}
			if !reflect.DeepEqual(p.got, p.want) {
				t.Fatalf("%s: branch %s's %s %+v\nrebuilt %+v", step, gb.info.ID, p.what, p.got, p.want)
			}
		}
		gm, err := walkMessages(got.frames(), gb.msgChain, gb.msgs)
		if err != nil {
			t.Fatalf("%s: branch %s: %v", step, gb.info.ID, err)
		}
		wm, err := walkMessages(want.frames(), wb.msgChain, wb.msgs)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gm, wm) {
			t.Fatalf("%s: branch %s's messages differ", step, gb.info.ID)
		}
	}
}

// TestWriterForksLightly: a writer's index goroutine, resumed from the ID
// table on a branched log with compactions, applies branch records without
// reading every ID back: forks of main at an entry the table holds (with
// compactions before it to resolve against the fork), at one appended
// since, in main's provisional tail, before its first entry; forks of a
// fork at an entry it shares with main and at one of its own; rejected
// forks. After each, the index is what a rebuild gives (documents, state)
// and the tail read through it what the full pass gives. Then a batch on a
// fork repeating an ID past its fork point, which the table can only call
// "maybe", takes the full resume and is accepted as the full read accepts
// it.
func TestWriterForksLightly(t *testing.T) {
	path := logPath(t)
	c := editedLog(t, path)
	d := c.Document
	comp := func(id, from, to string) transcript.Entry {
		return transcript.Entry{ID: id, Content: transcript.Compaction{Summary: "s", Covers: transcript.CompactionRange{FromID: from, ToID: to}}, Timestamp: t0}
	}
	w, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	// Compactions of main the table will hold: one of entries before it,
	// one from an entry main never had, one up to an entry after it, one up
	// to an entry appended after the table.
	fmt.Fprintln(w, uiRec(TypeUIAppend, entryJSON(t, comp("lf-c1", d.At(2).ID, d.At(10).ID)), entryJSON(t, comp("lf-c2", "gone", d.At(5).ID)),
		entryJSON(t, user("lf-p1", "q")), entryJSON(t, comp("lf-c3", d.At(3).ID, "lf-p2")), entryJSON(t, comp("lf-c4", d.At(4).ID, "lf-m3")),
		entryJSON(t, agent("lf-p2", "a"))))
	w.Close()
	checkIndex(t, path)
	l := open(t, path)
	if _, err := l.LoadTail(16, nil); err != nil {
		t.Fatal(err)
	}
	light, full := indexLightResumes.Load(), indexFullResumes.Load()
	same := func(step string) {
		t.Helper()
		l.flushIndex()
		checkIndex(t, path)
		sameAsRebuild(t, step, path)
		got, gerr := readTail(path, 16, nil)
		want, werr := parseTail(readFile(t, path), 16, nil)
		if werr != nil || gerr != nil {
			t.Fatalf("%s: %v %v", step, werr, gerr)
		}
		sameTail(t, got, want)
	}
	app := func(lines ...string) {
		t.Helper()
		w, err := openAppend(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range lines {
			fmt.Fprintln(w, line)
		}
		w.Close()
	}
	at := `"at":"2026-03-04T05:06:08.000Z"`
	fork := func(id, parent, after string, msgs int) string {
		return fmt.Sprintf(`{"type":"branch",%s,"branch":%q,"parent":%q,"afterEntry":%q,"afterMessage":%d}`, at, id, parent, after, msgs)
	}
	on := func(id, rec string) string {
		return fmt.Sprintf(`{"type":"on-branch",%s,"branch":%q,"record":%s}`, at, id, rec)
	}
	mid := d.At(d.Len() / 2).ID
	id, err := l.Fork(Main, "lf-p2", 3, "after the compactions")
	if err != nil {
		t.Fatal(err)
	}
	same("a fork of main at an entry the table holds")
	if ix := checkIndex(t, path); len(ix.st.branch(id).cov) != 4 || ix.st.branch(id).cov[2].ToTurn < 0 {
		t.Fatalf("the fork does not resolve main's compactions against itself: %+v", ix.st.branch(id).cov)
	}
	if _, err := l.Fork(Main, "lf-c3", 0, "before lf-p2"); err != nil {
		t.Fatal(err)
	}
	midFork, err := l.Fork(Main, mid, 0, "mid")
	if err != nil {
		t.Fatal(err)
	}
	same("forks of main before and among its compactions")
	app(uiRec(TypeUIAppend, entryJSON(t, user("lf-m1", "q")), entryJSON(t, agent("lf-m2", "a")), entryJSON(t, agent("lf-m3", "a"))))
	app(fork("held", Main, "lf-m1", 0), fork("held2", Main, "lf-m3", 0))
	same("a fork of main at an entry appended since the table")
	app(uiRec(TypeUIOpen, entryJSON(t, agent("lf-t1", "partial")), entryJSON(t, agent("lf-t2", "more"))))
	app(fork("tail", Main, "lf-t1", 0), fork("none", Main, "", 0))
	same("forks of main in its tail and before its first entry")
	app(on("b1", uiRec(TypeUIAppend, entryJSON(t, agent("lf-b1", "own")))))
	app(fork("shared", "b1", d.At(1).ID, 0), fork("own", "b1", "lf-b1", 0), fork("b2-fork", "b2", "", 0))
	same("forks of a fork")
	app(fork("bad", Main, "nowhere", 0), fork("past", "b1", "lf-m1", 0), fork("held", Main, mid, 0), fork("late", Main, d.At(1).ID, 99))
	same("rejected forks")
	app(on(id, uiRec(TypeUIAppend, entryJSON(t, agent("lf-x", "on the fork")))), on("held", uiRec(TypeUIAppend, entryJSON(t, agent("lf-y", "on held")))))
	same("appends to the forks")
	if got := indexLightResumes.Load() - light; got != 1 {
		t.Fatalf("%d light resumes; want the writer's one", got)
	}
	if got := indexFullResumes.Load() - full; got != 0 {
		t.Fatalf("%d full resumes after forks", got)
	}
	before, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	// An ID of main's past the mid fork's point: not on that fork, so
	// accepted there; one before it: shared, so rejected.
	app(on(midFork, uiRec(TypeUIAppend, entryJSON(t, agent(d.At(d.Len()-1).ID, "past the fork")))),
		on(midFork, uiRec(TypeUIAppend, entryJSON(t, agent(d.At(0).ID, "shared")))))
	same("IDs of main's on a fork")
	if got := indexFullResumes.Load() - full; got != 1 {
		t.Fatalf("%d full resumes after IDs the table may hold; want 1", got)
	}
	cv, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	fd, _, err := cv.Branch(midFork)
	if err != nil {
		t.Fatal(err)
	}
	if fd.At(fd.Len()-1).ID != d.At(d.Len()-1).ID || len(cv.Problems) != len(before.Problems)+1 {
		t.Fatalf("the full read did not accept the later ID and reject the shared one: %d problems, %d before", len(cv.Problems), len(before.Problems))
	}
}

// TestLightForksDifferential: random mixes of records (appends, open
// tails and snapshots of main and of branches, forks of any branch at any
// known entry or none, head switches, batches repeating IDs of the
// table's, of a branch's own or of another branch's, compactions, forks
// that fail) appended in batches to a log whose writer's index goroutine
// resumed from the ID table. After each batch the index is what a
// rebuild gives and the tail read through it what the full pass gives;
// and a Scanner from ResumeScanner at the start reads every batch as a
// Scanner that read the log from its start does, ending with the same
// branches. Every tenth batch a new writer opens, and resumes from the
// table whatever forks the log has, while main starts with the table's
// entries.
func TestLightForksDifferential(t *testing.T) {
	lightBatches, reopened := 0, 0
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 16))
			path := logPath(t)
			c := editedLog(t, path)
			// Forks with entries of their own before the table is written.
			pre, err := openAppend(path)
			if err != nil {
				t.Fatal(err)
			}
			at := `"at":"2026-03-04T05:06:08.000Z"`
			fmt.Fprintf(pre, `{"type":"branch",%s,"branch":"o1","parent":"main","afterEntry":%q,"afterMessage":0}`+"\n", at, c.Document.At(c.Document.Len()/2).ID)
			fmt.Fprintf(pre, `{"type":"on-branch",%s,"branch":"o1","record":%s}`+"\n", at, uiRec(TypeUIAppend, entryJSON(t, user("o-1", "q")), entryJSON(t, agent("o-2", "a"))))
			fmt.Fprintf(pre, `{"type":"branch",%s,"branch":"o2","parent":"o1","afterEntry":"o-1","afterMessage":0}`+"\n", at)
			fmt.Fprintf(pre, `{"type":"on-branch",%s,"branch":"o2","record":%s}`+"\n", at, uiRec(TypeUIAppend, entryJSON(t, agent("o-3", "a"))))
			pre.Close()
			checkIndex(t, path)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			size := int64(len(readFile(t, path)))
			s, err := ResumeScanner(path, f, size)
			if err != nil || !s.Partial() {
				t.Fatalf("ResumeScanner: %v, partial %v", err, s != nil && s.Partial())
			}
			ref := NewScanner()
			for _, err := range ref.Records(io.NewSectionReader(f, 0, size)) {
				if err != nil {
					t.Fatal(err)
				}
			}
			l := open(t, path)
			if _, err := l.LoadTail(16, nil); err != nil {
				t.Fatal(err)
			}
			resumes := indexLightResumes.Load()
			if err := l.SetTitle("differential"); err != nil { // starts the index goroutine
				t.Fatal(err)
			}
			l.flushIndex()
			if indexLightResumes.Load() != resumes+1 {
				t.Fatal("the writer's index goroutine did not resume from the ID table")
			}
			ref.Records(io.NewSectionReader(f, size, int64(len(readFile(t, path)))-size))(func(Record, error) bool { return true })
			s.Records(io.NewSectionReader(f, size, int64(len(readFile(t, path)))-size))(func(Record, error) bool { return true })
			d := c.Document
			table := make([]string, d.Len())
			for i := range d.Len() {
				table[i] = d.At(i).ID
			}
			known := []string{"", "nowhere", "o-1", "o-2", "o-3"}
			branches := []string{Main, "b1", "b2", "o1", "o2", "ghost"}
			n := 0
			fresh := func() string { n++; known = append(known, fmt.Sprintf("r%d", n)); return known[len(known)-1] }
			id := func() string {
				switch p := rnd.IntN(80); {
				case p == 0:
					return table[rnd.IntN(len(table))]
				case p < 8:
					return known[1+rnd.IntN(len(known)-1)]
				}
				return fresh()
			}
			entry := func() string {
				if rnd.IntN(120) == 0 {
					e := transcript.Entry{ID: fresh(), Content: transcript.Compaction{Summary: "s",
						Covers: transcript.CompactionRange{FromID: table[rnd.IntN(len(table))], ToID: known[1+rnd.IntN(len(known)-1)]}}, Timestamp: t0}
					return entryJSON(t, e)
				}
				if rnd.IntN(2) == 0 {
					return entryJSON(t, user(id(), "q"))
				}
				return entryJSON(t, agent(id(), "a"))
			}
			record := func() string {
				br := branches[rnd.IntN(len(branches))]
				var rec string
				switch p := rnd.IntN(40); {
				case p < 6:
					b := fmt.Sprintf("f%d", len(branches))
					if rnd.IntN(8) > 0 {
						branches = append(branches, b)
					}
					after := known[rnd.IntN(len(known))]
					if rnd.IntN(3) == 0 {
						after = table[rnd.IntN(len(table))]
					}
					return fmt.Sprintf(`{"type":"branch",%s,"branch":%q,"parent":%q,"afterEntry":%q,"afterMessage":0}`, at, b, br, after)
				case p < 9:
					return fmt.Sprintf(`{"type":"head",%s,"branch":%q}`, at, br)
				case p < 12:
					rec = uiRec(TypeUIOpen, entry())
				case p == 12:
					rec = uiRec(TypeUITranscript, entry(), entry())
				default:
					es := []string{entry()}
					for rnd.IntN(3) == 0 {
						es = append(es, entry())
					}
					rec = uiRec(TypeUIAppend, es...)
				}
				if br == Main {
					return rec
				}
				return fmt.Sprintf(`{"type":"on-branch",%s,"branch":%q,"record":%s}`, at, br, rec)
			}
			full := indexFullResumes.Load()
			for batch := range 30 {
				step := fmt.Sprintf("batch %d", batch)
				if batch%10 == 9 {
					// A writer opened now resumes from the table, forks and
					// all, while main still starts with the table's entries.
					l.Close()
					// Counted from before the open: LoadTail may already
					// save (an interrupted answer it settles), which starts
					// the index goroutine at a time of its own.
					resumes := indexLightResumes.Load()
					l = open(t, path)
					if _, err := l.LoadTail(16, nil); err != nil {
						t.Fatal(err)
					}
					ix, err := readIndexFile(IndexPath(path))
					if err != nil {
						t.Fatal(err)
					}
					table := len(ix.st.tables) > 0
					ix.Close()
					full = indexFullResumes.Load()
					if err := l.SetTitle(step); err != nil {
						t.Fatal(err)
					}
					l.flushIndex()
					if got := indexLightResumes.Load() - resumes; table && got != 1 {
						t.Fatalf("%s: %d light resumes of a writer opened on an index with a table", step, got)
					}
					ref.Records(io.NewSectionReader(f, s.Offset(), int64(len(readFile(t, path)))-s.Offset()))(func(Record, error) bool { return true })
					s.Records(io.NewSectionReader(f, s.Offset(), int64(len(readFile(t, path)))-s.Offset()))(func(Record, error) bool { return true })
					if table {
						reopened++
					}
				}
				if indexFullResumes.Load() == full {
					lightBatches++
				}
				w, err := openAppend(path)
				if err != nil {
					t.Fatal(err)
				}
				for range 1 + rnd.IntN(4) {
					fmt.Fprintln(w, record())
				}
				w.Close()
				l.flushIndex()
				checkIndex(t, path)
				sameAsRebuild(t, step, path)
				got, gerr := readTail(path, 16, nil)
				want, werr := parseTail(readFile(t, path), 16, nil)
				if werr != nil {
					t.Fatal(werr)
				}
				if gerr == nil {
					sameTail(t, got, want)
				}
				from, end := s.Offset(), int64(len(readFile(t, path)))
				var gr, wr []Record
				for rec, err := range s.Records(io.NewSectionReader(f, from, end-from)) {
					if err != nil {
						t.Fatalf("%s: %v", step, err)
					}
					rec.Batch = nil
					gr = append(gr, rec)
				}
				for rec, err := range ref.Records(io.NewSectionReader(f, from, end-from)) {
					if err != nil {
						t.Fatal(err)
					}
					rec.Batch = nil
					wr = append(wr, rec)
				}
				if !reflect.DeepEqual(gr, wr) {
					t.Fatalf("%s: records differ:\nlight %+v\nwhole %+v", step, gr, wr)
				}
			}
			sameBranches(t, s, ref)
		})
	}
	// The mixes are not all taken by the full resume at once.
	if reopened < 4 {
		t.Fatalf("only %d of 24 writers opened on an index with a table", reopened)
	}
	if lightBatches < 60 {
		t.Fatalf("only %d batches of 240 found the writer's Scanner light", lightBatches)
	}
}

// TestExtendForksLightly: a reader that finds the index behind the log
// extends it from the ID table when what the log gained forks main (at an
// entry the table holds, after one appended since, before its first) and
// a fork of it, and the index is what a rebuild gives.
func TestExtendForksLightly(t *testing.T) {
	path := logPath(t)
	c := editedLog(t, path)
	checkIndex(t, path)
	d := c.Document
	at := `"at":"2026-03-04T05:06:08.000Z"`
	w, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(w, uiRec(TypeUIAppend, entryJSON(t, user("ex-u", "q"))))
	for _, f := range [][2]string{{"x1", d.At(d.Len() / 3).ID}, {"x2", "ex-u"}, {"x3", ""}} {
		fmt.Fprintf(w, `{"type":"branch",%s,"branch":%q,"parent":"main","afterEntry":%q,"afterMessage":0}`+"\n", at, f[0], f[1])
	}
	fmt.Fprintf(w, `{"type":"branch",%s,"branch":"x4","parent":"b1","afterEntry":%q,"afterMessage":0}`+"\n", at, d.At(4).ID)
	w.Close()
	extends, rebuilds := indexLightExtends.Load(), indexRebuilds.Load()
	checkIndex(t, path)
	if indexLightExtends.Load() != extends+1 || indexRebuilds.Load() != rebuilds {
		t.Fatalf("%d light extensions, %d rebuilds", indexLightExtends.Load()-extends, indexRebuilds.Load()-rebuilds)
	}
	sameAsRebuild(t, "extended", path)
}
