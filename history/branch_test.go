package history

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// forked saves a four-entry main branch and forks b1 after its second entry
// and message, returning the log and main's document and messages.
func forked(t *testing.T) (*Log, string, transcript.Document, []message.Message) {
	t.Helper()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, user("u1", "first"), agent("a1", "one"), user("u2", "second"), agent("a2", "two"))
	m := msgs("first", "one", "second", "two")
	if err := l.Save(d, m); err != nil {
		t.Fatal(err)
	}
	id, err := l.Fork(Main, "a1", 2, "try again")
	if err != nil {
		t.Fatal(err)
	}
	if id != "b1" {
		t.Fatalf("branch id %q", id)
	}
	return l, path, d, m
}

func TestForkSaveAndReloadYieldBothBranches(t *testing.T) {
	t.Parallel()
	l, path, mainDoc, mainMsgs := forked(t)
	c, err := l.SetHead("b1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Head != "b1" || strings.Join(ids(c.Document), ",") != "u1,a1" || len(c.Messages) != 2 {
		t.Fatalf("head %q doc %v msgs %d: the branch starts as the parent's prefix", c.Head, ids(c.Document), len(c.Messages))
	}
	bd := appendAll(t, c.Document, user("u2b", "second, edited"), agent("a2b", "two b"))
	bm := append(slices.Clone(c.Messages), msgs("second, edited", "two b")...)
	if err := l.Save(bd, bm); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, path)
	types := recordTypes(data)
	if got := strings.Join(types[len(types)-5:], ","); got != "branch,head,on-branch,on-branch,on-branch" {
		t.Fatalf("records %v", types)
	}
	if !strings.Contains(string(data), `"type":"on-branch","at":"2026-03-04T05:06:12.000Z","branch":"b1","record":{"type":"ui-append","at":"2026-03-04T05:06:12.000Z"`) {
		t.Fatalf("branch records are not wrapped:\n%s", data)
	}

	got := readConv(t, data)
	if len(got.Problems) != 0 {
		t.Fatalf("problems %v", got.Problems)
	}
	sameDoc(t, got.Document, bd)
	if len(got.Messages) != 4 || got.Messages[2].Content != "second, edited" {
		t.Fatalf("branch messages %+v", got.Messages)
	}
	md, mm, err := got.Branch(Main)
	if err != nil {
		t.Fatal(err)
	}
	sameDoc(t, md, mainDoc)
	if len(mm) != len(mainMsgs) || mm[2].Content != "second" {
		t.Fatalf("main messages %+v", mm)
	}
	b, ok := got.BranchInfo("b1")
	if !ok || b.Parent != Main || b.AfterEntry != "a1" || b.AfterMessage != 2 || b.ForkIndex != 2 || b.Title != "try again" || b.Created.IsZero() {
		t.Fatalf("branch info %+v", b)
	}
	if len(got.Branches) != 2 || got.Branches[0].ID != Main {
		t.Fatalf("branches %+v", got.Branches)
	}
	if _, _, err := got.Branch("nope"); !errors.Is(err, ErrUnknownBranch) {
		t.Fatalf("unknown branch: %v", err)
	}

	// Back to main: saves there are plain records again, and b1 is intact.
	c, err = l.SetHead(Main)
	if err != nil {
		t.Fatal(err)
	}
	sameDoc(t, c.Document, mainDoc)
	md2 := appendAll(t, c.Document, user("u3", "third"))
	if err := l.Save(md2, append(slices.Clone(c.Messages), msgs("third")...)); err != nil {
		t.Fatal(err)
	}
	data = readFile(t, path)
	types = recordTypes(data)
	if got := strings.Join(types[len(types)-3:], ","); got != "head,message,ui-append" {
		t.Fatalf("records %v", types)
	}
	got = readConv(t, data)
	sameDoc(t, got.Document, md2)
	bdoc, _, err := got.Branch("b1")
	if err != nil {
		t.Fatal(err)
	}
	sameDoc(t, bdoc, bd)
}

func TestLinearConversationsStayPlain(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, user("u1", "hi"))
	if err := l.Save(d, msgs("hi")); err != nil {
		t.Fatal(err)
	}
	d, _ = d.Open(agent("a1", "part"))
	if err := l.Save(d, msgs("hi")); err != nil {
		t.Fatal(err)
	}
	d, _ = d.Settle("a1", transcript.Agent{Markdown: "done"})
	if err := l.Save(d, msgs("hi", "done")); err != nil {
		t.Fatal(err)
	}
	if head, _ := l.Head(); head != Main {
		t.Fatalf("head %q", head)
	}
	for _, typ := range recordTypes(readFile(t, path)) {
		if isBranchType(typ) {
			t.Fatalf("a linear conversation wrote %q", typ)
		}
	}
	// SetHead to the head it already has writes nothing.
	before := readFile(t, path)
	if _, err := l.SetHead(Main); err != nil {
		t.Fatal(err)
	}
	if string(readFile(t, path)) != string(before) {
		t.Fatal("SetHead(main) on a linear log wrote something")
	}
}

func TestForkRefusesWhatIsNotThere(t *testing.T) {
	t.Parallel()
	l, path, _, _ := forked(t)
	before := readFile(t, path)
	if _, err := l.Fork("b9", "", 0, ""); !errors.Is(err, ErrUnknownBranch) {
		t.Fatalf("unknown parent: %v", err)
	}
	if _, err := l.Fork(Main, "zz", 0, ""); !errors.Is(err, ErrForkPoint) {
		t.Fatalf("unknown entry: %v", err)
	}
	if _, err := l.Fork(Main, "a1", 5, ""); !errors.Is(err, ErrForkPoint) {
		t.Fatalf("too many messages: %v", err)
	}
	if _, err := l.SetHead("b7"); !errors.Is(err, ErrUnknownBranch) {
		t.Fatalf("unknown head: %v", err)
	}
	if string(readFile(t, path)) != string(before) {
		t.Fatal("a refused fork wrote something")
	}
	// Forks of forks, and before the first entry.
	b2, err := l.Fork("b1", "", 0, "")
	if err != nil || b2 != "b2" {
		t.Fatalf("fork of a fork: %q %v", b2, err)
	}
	c, err := l.SetHead(b2)
	if err != nil {
		t.Fatal(err)
	}
	if c.Document.Len() != 0 || len(c.Messages) != 0 {
		t.Fatalf("a fork before the first entry has %v", ids(c.Document))
	}
	if err := l.Save(doc(t, user("x1", "fresh start")), msgs("fresh start")); err != nil {
		t.Fatal(err)
	}
	got := readConv(t, readFile(t, path))
	if got.Head != "b2" || strings.Join(ids(got.Document), ",") != "x1" || len(got.Branches) != 3 {
		t.Fatalf("head %q doc %v branches %+v", got.Head, ids(got.Document), got.Branches)
	}
}

func TestBranchRecordsAreCheckedLikeAnyOther(t *testing.T) {
	t.Parallel()
	at := `"at":"2026-03-04T05:06:09.000Z"`
	ui := func(typ, es string) string { return `{"type":"` + typ + `",` + at + `,"entries":[` + es + `]}` }
	on := func(b, rec string) string {
		return `{"type":"on-branch",` + at + `,"branch":"` + b + `","record":` + rec + `}`
	}
	e := func(id string) string { return entryJSON(t, user(id, id)) }
	data := logOf(v3Header,
		ui(TypeUIAppend, e("u1")+","+e("a1")), // 2
		`{"type":"branch",`+at+`,"branch":"b1","parent":"main","afterEntry":"u1","afterMessage":0}`, // 3
		on("b9", ui(TypeUIAppend, e("x"))),                                                          // 4: unknown branch
		on("b1", ui(TypeUIAppend, e("u1"))),                                                         // 5: u1 is in b1's prefix
		on("b1", ui(TypeUIAppend, e("b"))),                                                          // 6
		on("b1", `{"type":"branch",`+at+`,"branch":"b3","parent":"b1","afterMessage":0}`),           // 7: no nesting
		`{"type":"branch",`+at+`,"branch":"b1","parent":"main","afterMessage":0}`,                   // 8: b1 exists
		`{"type":"branch",`+at+`,"branch":"b2","parent":"main","afterEntry":"zz","afterMessage":0}`, // 9
		`{"type":"branch",`+at+`,"branch":"b2","parent":"main","afterMessage":3}`,                   // 10
		`{"type":"head",`+at+`,"branch":"b5"}`,                                                      // 11
		`{"type":"head",`+at+`,"branch":"b1"}`,                                                      // 12
		on("main", ui(TypeUIAppend, e("m"))),                                                        // 13
		on("b1", ui(TypeUIAppend, `{"id":"bad"}`)),                                                  // 14: rejected, reserves nothing
		on("b1", ui(TypeUIAppend, e("bad"))),                                                        // 15
		ui(TypeUIAppend, e("bad")),                                                                  // 16
	)
	c := readConv(t, data)
	if c.Head != "b1" || strings.Join(ids(c.Document), ",") != "u1,b,bad" {
		t.Fatalf("head %q doc %v", c.Head, ids(c.Document))
	}
	md, _, _ := c.Branch(Main)
	if strings.Join(ids(md), ",") != "u1,a1,bad" {
		t.Fatalf("main %v", ids(md))
	}
	var rejected []string
	for _, p := range c.Problems {
		if p.Kind != ProblemRejected {
			t.Fatalf("unexpected problem %v", p)
		}
		rejected = append(rejected, itoa(p.Line)+" "+p.Pointer)
	}
	want := []string{"4 /branch", "5 /record/entries/0/id", "7 /record/type", "8 /branch", "9 /afterEntry",
		"10 /afterMessage", "11 /branch", "13 /branch", "14 /record/entries/0/timestamp"}
	if strings.Join(rejected, "|") != strings.Join(want, "|") {
		t.Fatalf("rejected\n%v\nwant\n%v\n%v", rejected, want, c.Problems)
	}
	if !strings.Contains(c.Problems[1].Error(), `on branch "b1"`) {
		t.Fatalf("a wrapped record's problem does not name its branch: %v", c.Problems[1])
	}
	// Version 2 logs know nothing of branches: the records are kept as unknown.
	v2 := logOf(`{"type":"conversation","version":2,"conversationId":"c1"}`, `{"type":"head",`+at+`,"branch":"main"}`)
	if c := readConv(t, v2); len(problemsOf(c, ProblemUnknown)) != 1 {
		t.Fatalf("v2 problems %v", c.Problems)
	}
}

// TestCrashAtEveryOffsetOfABranchAppend cuts a branch save at every offset:
// the reader yields exactly the complete records, on the right branch.
func TestCrashAtEveryOffsetOfABranchAppend(t *testing.T) {
	t.Parallel()
	l, path, _, _ := forked(t)
	c, err := l.SetHead("b1")
	if err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	d := appendAll(t, c.Document, user("u2b", "edited \"q\" ü"))
	d, _ = d.Open(agent("s", "partial"))
	if err := l.Save(d, append(slices.Clone(c.Messages), msgs("edited")...)); err != nil {
		t.Fatal(err)
	}
	after := readFile(t, path)
	for k := len(before); k <= len(after); k++ {
		got := readConv(t, after[:k])
		want := readConv(t, completePrefix(after, k))
		sameConv(t, got, want, "offset "+itoa(k))
		if got.Head != "b1" {
			t.Fatalf("offset %d: head %q", k, got.Head)
		}
		md, _, _ := got.Branch(Main)
		if md.Len() != 4 {
			t.Fatalf("offset %d: main lost entries", k)
		}
		if len(problemsOf(got, ProblemRejected))+len(problemsOf(got, ProblemUnreadable)) != 0 {
			t.Fatalf("offset %d: %v", k, got.Problems)
		}
	}
	// A save after a torn branch record re-terminates it and reads clean.
	writeLog(t, path, after[:len(after)-7])
	l.Close()
	l2 := open(t, path)
	c2, err := l2.Load()
	if err != nil {
		t.Fatal(err)
	}
	if c2.Head != "b1" {
		t.Fatalf("head %q", c2.Head)
	}
	d2 := appendAll(t, c2.Document, agent("a2b", "answer"))
	if err := l2.Save(d2, c2.Messages); err != nil {
		t.Fatal(err)
	}
	sameDoc(t, readConv(t, readFile(t, path)).Document, d2)
}

// TestCompactionKeepsWhatForksNeed: main is snapshotted after a fork, so
// main's records before the snapshot are superseded for main but still
// make b1's prefix; compaction keeps them and every branch reads the same.
func TestCompactionKeepsWhatForksNeed(t *testing.T) {
	t.Parallel()
	l, path, mainDoc, mainMsgs := forked(t)
	c, err := l.SetHead("b1")
	if err != nil {
		t.Fatal(err)
	}
	bd := appendAll(t, c.Document, user("u2b", "other"))
	if err := l.Save(bd, c.Messages); err != nil {
		t.Fatal(err)
	}
	bd2, err := bd.Replace(user("u2b", "other, changed"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(bd2, c.Messages); err != nil { // a ui-transcript on b1
		t.Fatal(err)
	}
	if _, err := l.SetHead(Main); err != nil {
		t.Fatal(err)
	}
	md, err := mainDoc.Replace(user("u1", "first, changed"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(md, mainMsgs); err != nil { // a ui-transcript on main
		t.Fatal(err)
	}
	want := readConv(t, readFile(t, path))
	res, err := l.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if res.Dropped != 1 {
		t.Fatalf("dropped %d records, want b1's superseded append only:\n%s", res.Dropped, readFile(t, path))
	}
	got := readConv(t, readFile(t, path))
	if len(got.Problems) != 0 {
		t.Fatal(got.Problems)
	}
	for _, b := range want.Branches {
		wd, wm, _ := want.Branch(b.ID)
		gd, gm, err := got.Branch(b.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameDoc(t, gd, wd)
		if len(gm) != len(wm) {
			t.Fatalf("branch %s: %d messages, want %d", b.ID, len(gm), len(wm))
		}
	}
	bdoc, _, _ := got.Branch("b1")
	if bdoc.At(0).Content.(transcript.User).Text != "first" {
		t.Fatal("b1's prefix lost the entry it forked with")
	}
	if again, _ := l.Compact(); again.Dropped != 0 {
		t.Fatal("compacting twice dropped more")
	}
}

// TestLinearBytesAsBeforeBranches replays saves, a rename and a compaction
// of a conversation that never branches, and compares the file with the
// bytes the writer produced before branches existed.
func TestLinearBytesAsBeforeBranches(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, user("u1", "hi"), agent("a1", "hello"))
	if err := l.Save(d, msgs("hi", "hello")); err != nil {
		t.Fatal(err)
	}
	d, _ = d.Open(agent("s", "part"))
	mustSave := func(d transcript.Document, m []message.Message) {
		t.Helper()
		if err := l.Save(d, m); err != nil {
			t.Fatal(err)
		}
	}
	mustSave(d, msgs("hi", "hello"))
	d, _ = d.Settle("s", transcript.Agent{Markdown: "done"})
	mustSave(d, append(msgs("hi", "hello"), message.Text(message.User, "more")))
	d2, _ := d.Replace(user("u1", "changed"))
	mustSave(d2, msgs("x"))
	if err := l.SetTitle("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	mustSave(appendAll(t, d2, user("u9", "last")), msgs("x", "y"))
	want := readFile(t, "testdata/linear-before-branches.jsonl")
	if got := readFile(t, path); string(got) != string(want) {
		t.Fatalf("a linear log changed:\n%s\nwant\n%s", got, want)
	}
}
