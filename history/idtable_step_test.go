package history

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// TestWriterTableGrowsInSteps: a writer's index goroutine on a long live
// log holds the IDs of at most a step of main's entries: it adds a segment
// to the ID table each step, merging the newest ones, so the table has few
// segments; compaction entries on main that cover entries the table holds
// resolve to the turns a rebuild gives, and the state frame each commit
// writes does not grow with them. After every few saves the index is
// what a rebuild gives, also after the writer compacted the index (a
// rebuild spilling to the new file as it goes) and resumed from it. A
// batch another program appends repeating an ID of the log's start (far
// behind every step) is refused as a full read refuses it, and the writer
// is light again after it.
func TestWriterTableGrowsInSteps(t *testing.T) {
	defer func(n, sp int, sl int64) { tableStep, spillBytes, indexSlack = n, sp, sl }(tableStep, spillBytes, indexSlack)
	// Small steps, and compactions of the index (rebuilds that write the
	// new index as they go, a little at a time) now and then.
	tableStep, spillBytes, indexSlack = 32, 2048, 8<<10
	compactions, rebuilds := indexCompactions.Load(), indexRebuilds.Load()
	path := logPath(t)
	l := open(t, path)
	d := doc(t)
	var ids []string
	// stateLen is the size of the index's last state frame, less its
	// parts that are bounded but vary with how the index goroutine
	// batched the saves: the table's segments (at most a few) and the
	// entries and compactions after the last frame (at most a step).
	stateLen := func() int {
		ix, err := readIndexFile(IndexPath(path))
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		hd := make([]byte, 4)
		if _, err := ix.f.ReadAt(hd, ix.pos); err != nil {
			t.Fatal(err)
		}
		whole := int(binary.LittleEndian.Uint32(hd))
		if whole != len(encodeState(ix.st)) {
			t.Fatalf("the state frame holds %d bytes; its state encodes to %d", whole, len(encodeState(ix.st)))
		}
		st := *ix.st
		st.tables = nil
		st.branches = nil
		for _, b := range ix.st.branches {
			c := *b
			c.tail, c.tailCov = nil, nil
			st.branches = append(st.branches, &c)
		}
		return len(encodeState(&st))
	}
	firstState, checks := 0, 0
	held := func(step string) {
		t.Helper()
		l.flushIndex()
		w := l.m.(*fileMedium).ixw
		if w == nil || w.s == nil {
			t.Fatalf("%s: no index writer", step)
		}
		if w.table == nil {
			t.Fatalf("%s: the writer is not light", step)
		}
		if n := w.s.r.ids.len(); n >= tableStep+8 {
			t.Fatalf("%s: the writer holds %d IDs; a step is %d", step, n, tableStep)
		}
		for _, e := range w.s.r.entries {
			if e.Content != nil {
				t.Fatalf("%s: the writer holds entry %s whole, not its ID alone", step, e.ID)
			}
		}
	}
	for i := range 400 {
		u, a := fmt.Sprintf("s-u%d", i), fmt.Sprintf("s-a%d", i)
		es := []transcript.Entry{user(u, "question"), agent(a, "answer")}
		if i%37 == 36 {
			// A compaction reaching back to the log's start, and one
			// over the last few turns.
			from := ids[3]
			if i%2 == 0 {
				from = ids[len(ids)-10]
			}
			es = append(es, transcript.Entry{ID: fmt.Sprintf("s-c%d", i), Timestamp: t0,
				Content: transcript.Compaction{Summary: "earlier", Covers: transcript.CompactionRange{FromID: from, ToID: ids[len(ids)-2]}}})
		}
		d = appendAll(t, d, es...)
		for _, e := range es {
			ids = append(ids, e.ID)
		}
		if err := l.Save(d, nil); err != nil {
			t.Fatal(err)
		}
		if i%40 == 39 {
			step := fmt.Sprintf("save %d", i)
			held(step)
			sameAsRebuild(t, step, path)
			checks++
			if firstState == 0 {
				firstState = stateLen()
			}
		}
	}
	ix := checkIndex(t, path)
	main := ix.st.branches[0]
	if len(ix.st.tables) == 0 || len(ix.st.tables) > 8 || main.count-ix.st.tableN() >= tableStep {
		t.Fatalf("the table has %d segments up to entry %d of %d", len(ix.st.tables), ix.st.tableN(), main.count)
	}
	if n := indexCompactions.Load() - compactions; n < 2 {
		t.Fatalf("%d compactions of the index", n)
	}
	// Every rebuild was a compaction, the first save's or a check's
	// (sameAsRebuild): the index a compaction wrote was good, none had
	// to be rebuilt again.
	if n := indexRebuilds.Load() - rebuilds - (indexCompactions.Load() - compactions); n != int64(1+checks) {
		t.Fatalf("%d rebuilds besides compactions; want the first save's and the checks' %d", n, 1+checks)
	}
	if len(main.cov) < 10 {
		t.Fatalf("the index holds %d compactions", len(main.cov))
	}
	for _, c := range main.cov {
		if c.FromTurn < 0 || c.ToTurn < 0 {
			t.Fatalf("compaction %s is not resolved: %+v", c.EntryID, c)
		}
	}
	// Each commit writes a state frame: it must not carry every
	// compaction the log has (they are in a frame of their own).
	if n := stateLen(); n > firstState+64 {
		t.Fatalf("the state frame grew from %d to %d bytes with %d compactions", firstState, n, len(main.cov))
	}

	full := indexFullResumes.Load()
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "%s\n", uiRec(TypeUIAppend, entryJSON(t, agent(ids[2], "again"))))
	f.Close()
	for i := range 3 {
		d = appendAll(t, d, agent(fmt.Sprintf("s-after%d", i), "after"))
		if err := l.Save(d, nil); err != nil {
			t.Fatal(err)
		}
	}
	held("a repeated ID")
	sameAsRebuild(t, "a repeated ID", path)
	if got := indexFullResumes.Load() - full; got != 1 {
		t.Fatalf("%d full resumes after a repeated ID; want 1", got)
	}
	ix = checkIndex(t, path)
	if ix.st.problems != 1 {
		t.Fatalf("the index counts %d problems; want the rejected batch", ix.st.problems)
	}
	c, err := Read(bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Document.Len() != ix.st.branches[0].count+len(ix.st.branches[0].tail) {
		t.Fatalf("the log reads %d entries; the index has %d", c.Document.Len(), ix.st.branches[0].count)
	}
}
