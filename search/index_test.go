package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// TestQueries is the conformance list of queries and the hits each must
// give, over a small corpus of three conversations.
func TestQueries(t *testing.T) {
	t.Parallel()
	backends(t, testQueries)
}

func testQueries(t *testing.T, e env) {
	a := e.convo("trip")
	a.save(
		at(user("u1", "Plan a trip to Zürich in June, with the kids"), t0),
		at(agent("a1", "Zurich in June is mild. Take the **train** from the airport."), t0.Add(time.Minute)),
		at(transcript.Entry{ID: "t1", Content: transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "grep timetable.txt", Status: transcript.ToolOK},
			Presentation: &transcript.Presentation{Schema: "x", Version: 1, Revision: 1, Payload: transcript.RawJSON(`{"lines":["platform seven departs 08:15"],"title":"timetable"}`)}}}, t0.Add(2*time.Minute)),
	)
	b := e.convo("code")
	b.save(
		at(user("u1", "Why does the migration fail on Postgres?"), t0.Add(24*time.Hour)),
		at(transcript.Entry{ID: "r1", Content: transcript.Reasoning{Text: "the migration lacks an index on the train table"}}, t0.Add(24*time.Hour+time.Second)),
		at(agent("a1", "The migrations run out of order; the fox jumps over the lazy dog."), t0.Add(24*time.Hour+time.Minute)),
		at(transcript.Entry{ID: "n1", Content: transcript.Notice{Text: "Привет мир — café crème", Tone: transcript.ToneInfo}}, t0.Add(25*time.Hour)),
		at(transcript.Entry{ID: "f1", Content: transcript.Failure{Reason: "x", Headline: "The provider refused", Detail: "quota exceeded for the migration job"}}, t0.Add(26*time.Hour)),
	)
	c := e.convo("other")
	c.save(at(user("u1", "the quick brown fox"), t0.Add(48*time.Hour)), at(agent("a1", "a lazy cat sleeps"), t0.Add(48*time.Hour+time.Second)))
	if err := c.log.SetTitle("Animals and sayings"); err != nil {
		t.Fatal(err)
	}
	ix := e.index()
	cases := []struct {
		q    string
		want []string // in order when ordered, else as a set
		ord  bool
	}{
		{"zurich", []string{"trip/u1", "trip/a1"}, false},
		{"ZÜRICH june", []string{"trip/u1", "trip/a1"}, false},
		{`"lazy dog"`, []string{"code/a1"}, true},
		{`lazy -dog`, []string{"other/a1"}, true},
		// A phrase's words must be next to each other, in order.
		{`"dog lazy"`, []string{}, true},
		{`"jumps the"`, []string{}, true},
		{`"jumps over the"`, []string{"code/a1"}, true},
		{`fox -"lazy dog"`, []string{"other/u1"}, true},
		{`fox -"dog lazy"`, []string{"other/u1", "code/a1"}, false},
		{`migrat*`, []string{"code/u1", "code/r1", "code/a1", "code/f1"}, false},
		{`migrat* role:prompt`, []string{"code/u1"}, true},
		{`migrat* role:answer`, []string{"code/a1"}, true},
		{`migration role:failure`, []string{"code/f1"}, true},
		{`train role:tool,reasoning`, []string{"code/r1"}, true},
		{`platform seven`, []string{"trip/t1"}, true},
		{`timetable`, []string{"trip/t1"}, true},
		{`привет`, []string{"code/n1"}, true},
		{`cafe creme`, []string{"code/n1"}, true},
		{`fox conversation:other`, []string{"other/u1"}, true},
		{`fox after:2026-03-06`, []string{"other/u1"}, true},
		{`fox before:2026-03-06`, []string{"code/a1"}, true},
		{`sayings`, []string{"other/"}, true},
		{`nowhere-to-be-found`, []string{}, true},
		{`NOT`, []string{}, true},
	}
	for _, tc := range cases {
		got := entryIDs(find(t, ix, tc.q))
		want := tc.want
		if !tc.ord {
			slices.Sort(got)
			want = slices.Clone(want)
			slices.Sort(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", tc.q, got, want)
		}
	}
	// Snippets mark the matched words.
	hits := find(t, ix, `"lazy dog"`)
	if got := hits[0].SnippetText("[", "]"); !strings.Contains(got, "[lazy dog]") {
		t.Errorf("snippet %q", got)
	}
	if h := find(t, ix, "sayings")[0]; h.Title != "Animals and sayings" {
		t.Errorf("title %q", h.Title)
	}
	if h := find(t, ix, "zurich kids")[0]; h.Title != "Plan a trip to Zürich in June, with the kids" || h.Role != RolePrompt || !h.At.Equal(t0) {
		t.Errorf("hit %+v", h)
	}
}

// TestQueriesPastTheWindow: on PostgreSQL, a query first walks a window of
// the newest rows and then reads the GIN index for the older ones; with a
// window of two rows every query goes both ways and finds the same.
func TestQueriesPastTheWindow(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, e env) {
		if e.data != "" {
			t.Skip("PostgreSQL only")
		}
		index := e.index
		e.index = func() Searcher {
			ix := index().(*PGIndex)
			ix.window = 2
			return ix
		}
		testQueries(t, e)
	})
}

// TestRecencyBreaksTies: equal relevance, the newer entry first.
func TestRecencyBreaksTies(t *testing.T) {
	t.Parallel()
	backends(t, testRecencyBreaksTies)
}

func testRecencyBreaksTies(t *testing.T, e env) {
	c := e.convo("c")
	c.save(at(user("old", "same words here"), t0), at(user("new", "same words here"), t0.Add(time.Hour)), at(user("mid", "same words here"), t0.Add(time.Minute)))
	ix := e.index()
	if got := entryIDs(find(t, ix, "words")); !slices.Equal(got, []string{"c/new", "c/mid", "c/old"}) {
		t.Fatalf("order %v", got)
	}
}

// TestCatchUpReadsOnlyWhatWasAppended: a save's update reads the bytes it
// appended, not the log.
func TestCatchUpReadsOnlyWhatWasAppended(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c := openConvo(t, data, "c")
	var es []transcript.Entry
	for i := range 200 {
		es = append(es, user(idOf("u", i), "filler text number "+idOf("", i)))
	}
	c.save(es...)
	ix := openIndex(t, data)
	st, err := ix.CatchUp(context.Background())
	if err != nil || st.Whole != 1 || st.Entries != 200 {
		t.Fatalf("first catch-up %+v %v", st, err)
	}
	before := fileSize(t, c.log.Path())
	c.save(user("late", "a late zeppelin"))
	st, err = ix.CatchUp(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Whole != 0 || st.Read != 1 || st.Entries != 1 || st.Bytes != fileSize(t, c.log.Path())-before {
		t.Fatalf("second catch-up %+v, appended %d bytes", st, fileSize(t, c.log.Path())-before)
	}
	if got := entryIDs(find(t, ix, "zeppelin")); !slices.Equal(got, []string{"c/late"}) {
		t.Fatalf("got %v", got)
	}
	// Nothing new: nothing read.
	if st, _ := ix.CatchUp(context.Background()); st.Read != 0 {
		t.Fatalf("idle catch-up read %+v", st)
	}
	// Update, what a save calls, does the same for one conversation.
	c.save(user("later", "a later dirigible"))
	if err := ix.Update(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(context.Background(), "dirigible", Options{NoCatchUp: true})
	if err != nil || len(hits) != 1 {
		t.Fatalf("after Update: %v %v", hits, err)
	}
}

func idOf(p string, i int) string { return p + strconv.Itoa(i) }

// TestSupersededEntriesLeaveTheIndex: a snapshot that replaces the
// document removes the entries it dropped.
func TestSupersededEntriesLeaveTheIndex(t *testing.T) {
	t.Parallel()
	backends(t, testSupersededEntriesLeaveTheIndex)
}

func testSupersededEntriesLeaveTheIndex(t *testing.T, e env) {
	c := e.convo("c")
	c.save(user("u1", "alpha question"), agent("a1", "bravo answer"))
	ix := e.index()
	if got := entryIDs(find(t, ix, "bravo")); !slices.Equal(got, []string{"c/a1"}) {
		t.Fatalf("before: %v", got)
	}
	c.put(user("u1", "alpha question"), agent("a2", "charlie answer"))
	if got := entryIDs(find(t, ix, "bravo")); len(got) != 0 {
		t.Fatalf("a superseded entry is still found: %v", got)
	}
	if got := entryIDs(find(t, ix, "charlie OR alpha")); len(got) != 0 {
		t.Fatalf("OR is a word, not an operator: %v", got)
	}
	if got := entryIDs(find(t, ix, "answer")); !slices.Equal(got, []string{"c/a2"}) {
		t.Fatalf("after: %v", got)
	}
	differential(t, ix, e, "answer", "question")
}

// TestOnlyTheHeadBranchIsSearched: switching branches swaps what is found.
func TestOnlyTheHeadBranchIsSearched(t *testing.T) {
	t.Parallel()
	backends(t, testOnlyTheHeadBranchIsSearched)
}

func testOnlyTheHeadBranchIsSearched(t *testing.T, e env) {
	c := e.convo("c")
	c.save(user("u1", "shared start"), agent("a1", "main ending with walrus"))
	ix := e.index()
	if got := entryIDs(find(t, ix, "walrus")); len(got) != 1 {
		t.Fatalf("main: %v", got)
	}
	b, err := c.log.Fork(history.Main, "u1", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	conv, err := c.log.SetHead(b)
	if err != nil {
		t.Fatal(err)
	}
	d := conv.Document
	if d, err = d.Append(agent("b1", "branch ending with narwhal")); err != nil {
		t.Fatal(err)
	}
	if err := c.log.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(find(t, ix, "walrus")); len(got) != 0 {
		t.Fatalf("the branch left is still searched: %v", got)
	}
	if got := entryIDs(find(t, ix, "narwhal")); !slices.Equal(got, []string{"c/b1"}) {
		t.Fatalf("branch: %v", got)
	}
	if got := entryIDs(find(t, ix, "shared")); !slices.Equal(got, []string{"c/u1"}) {
		t.Fatalf("shared: %v", got)
	}
	if _, err := c.log.SetHead(history.Main); err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(find(t, ix, "walrus narwhal")); len(got) != 0 {
		t.Fatalf("both: %v", got)
	}
	if got := entryIDs(find(t, ix, "walrus")); !slices.Equal(got, []string{"c/a1"}) {
		t.Fatalf("back on main: %v", got)
	}
	differential(t, ix, e, "ending", "shared")
}

// differential checks every hit of the queries against history's own
// reading of the log: the entry is in the head's document, and each piece
// of the snippet is in that entry's text.
func differential(t *testing.T, ix Searcher, e env, queries ...string) {
	t.Helper()
	for _, q := range queries {
		for _, h := range find(t, ix, q) {
			if h.Entry == "" {
				continue
			}
			conv, err := e.read(h.Conversation)
			if err != nil {
				t.Fatal(err)
			}
			i, ok := conv.Document.Index(h.Entry)
			if !ok {
				t.Fatalf("%s: hit %s/%s is not in the head's document", q, h.Conversation, h.Entry)
			}
			text, _, _ := entryText(conv.Document.At(i))
			for _, s := range h.Snippet {
				if p := strings.Trim(s.Text, "…"); !strings.Contains(text, p) {
					t.Fatalf("%s: snippet piece %q is not in entry %s's text %q", q, p, h.Entry, text)
				}
			}
		}
	}
}

// TestRemovedLogLeavesTheIndex: a deleted conversation is not found.
func TestRemovedLogLeavesTheIndex(t *testing.T) {
	t.Parallel()
	backends(t, testRemovedLogLeavesTheIndex)
}

func testRemovedLogLeavesTheIndex(t *testing.T, e env) {
	c := e.convo("gone")
	c.save(user("u1", "ephemeral platypus"))
	ix := e.index()
	if len(find(t, ix, "platypus")) != 1 {
		t.Fatal("not indexed")
	}
	c.log.Close()
	if err := e.store.Delete("gone"); err != nil {
		t.Fatal(err)
	}
	if got := find(t, ix, "platypus"); len(got) != 0 {
		t.Fatalf("deleted conversation found: %v", got)
	}
}

// TestDamagedIndexIsRebuilt: junk in place of the index is replaced by a
// fresh one, filled from the logs.
func TestDamagedIndexIsRebuilt(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c := openConvo(t, data, "c")
	c.save(user("u1", "resilient aardvark"))
	ix := openIndex(t, data)
	if len(find(t, ix, "aardvark")) != 1 {
		t.Fatal("not indexed")
	}
	ix.Close()
	for _, junk := range [][]byte{[]byte("this is not a database at all, just junk bytes"), bytes.Repeat([]byte{0}, 8192)} {
		os.Remove(Path(data) + "-wal")
		os.Remove(Path(data) + "-shm")
		if err := os.WriteFile(Path(data), junk, 0o600); err != nil {
			t.Fatal(err)
		}
		ix2 := openIndex(t, data)
		if got := entryIDs(find(t, ix2, "aardvark")); !slices.Equal(got, []string{"c/u1"}) {
			t.Fatalf("after damage: %v", got)
		}
		ix2.Close()
	}
}

// TestCanary: drafts and ephemeral presentation values never reach a byte
// of the index, while a retained presentation's text does.
func TestCanary(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c := openConvo(t, data, "c")
	tool := transcript.Tool{
		Receipt:      transcript.ToolReceipt{App: "shell", Summary: "ran", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "s", Version: 1, Revision: 1, Payload: transcript.RawJSON(`{"text":"CANARYDRAFTVALUE"}`), Ephemeral: true},
		Supplementals: []transcript.KeyedPresentation{
			{Key: "k1", Presentation: transcript.Presentation{Schema: "s", Version: 1, Revision: 1, Payload: transcript.RawJSON(`{"text":"CANARYEPHEMERALITEM"}`), Ephemeral: true}},
			{Key: "k2", Presentation: transcript.Presentation{Schema: "s", Version: 1, Revision: 1, Payload: transcript.RawJSON(`{"text":"retainedokapi"}`)}},
		},
	}
	c.save(user("u1", "run it"), transcript.Entry{ID: "t1", Content: tool, Timestamp: t0})
	ix := openIndex(t, data)
	if got := entryIDs(find(t, ix, "retainedokapi")); !slices.Equal(got, []string{"c/t1"}) {
		t.Fatalf("retained text: %v", got)
	}
	// Text, on the live entry, leaves them out too.
	if text, _, _ := entryText(transcript.Entry{ID: "t1", Content: tool}); strings.Contains(text, "CANARY") || !strings.Contains(text, "retainedokapi") {
		t.Fatalf("Text = %q", text)
	}
	ix.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(Path(data) + suffix)
		if err != nil {
			continue
		}
		for _, canary := range []string{"CANARYDRAFTVALUE", "CANARYEPHEMERALITEM", "canarydraftvalue", "canaryephemeralitem"} {
			if i := bytes.Index(b, []byte(canary)); i >= 0 {
				t.Fatalf("the index file %s holds an ephemeral value: %q", Path(data)+suffix, b[max(0, i-100):i+30])
			}
		}
	}
}

// TestRebuild: folio log reindex forgets everything and reads every log.
func TestRebuild(t *testing.T) {
	t.Parallel()
	backends(t, testRebuild)
}

func testRebuild(t *testing.T, e env) {
	c := e.convo("c")
	c.save(user("u1", "rebuilt pangolin"))
	ix := e.index()
	if len(find(t, ix, "pangolin")) != 1 {
		t.Fatal("not indexed")
	}
	st, err := ix.Rebuild(context.Background())
	if err != nil || st.Whole != 1 || st.Entries != 1 {
		t.Fatalf("rebuild %+v %v", st, err)
	}
	if got := entryIDs(find(t, ix, "pangolin")); !slices.Equal(got, []string{"c/u1"}) {
		t.Fatalf("after rebuild: %v", got)
	}
}

// TestQueryIsBoundedInTime: a query past its bound is ErrTimeout, not an
// empty result.
func TestQueryIsBoundedInTime(t *testing.T) {
	t.Parallel()
	data := genData(t, 2, 2000)
	ix := openIndex(t, data)
	find(t, ix, "fsync")
	_, err := ix.Search(context.Background(), "the", Options{NoCatchUp: true, Timeout: time.Microsecond})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
}

// TestMergingKeepsSegmentsFew: a catch-up that writes most of the index
// leaves FTS5 one segment (one that writes little merges nothing), and
// saves merge as they go, so no save's update
// is the one that merges many segments at once (FTS5 does that when a
// level holds 16).
func TestMergingKeepsSegmentsFew(t *testing.T) {
	t.Parallel()
	data := genData(t, 4, 600)
	ix := openIndex(t, data)
	ctx := context.Background()
	if _, err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	segments := func() int {
		t.Helper()
		var n int
		if err := ix.db.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM fts_idx`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := segments(); n != 1 {
		t.Fatalf("after a build FTS5 has %d segments, want 1", n)
	}
	// A catch-up that reads a little (another process's new conversation)
	// does not merge the whole index for it.
	openConvo(t, data, "other").save(user("o1", "a small new conversation"))
	if _, err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != 2 {
		t.Fatalf("after a small catch-up FTS5 has %d segments, want the build's and the new one", n)
	}
	c := openConvo(t, data, "saved")
	most := 0
	for i := range 40 {
		c.save(user(fmt.Sprintf("u%d", i), fmt.Sprintf("question %d about zeppelins", i)))
		if err := ix.Update(ctx, "saved"); err != nil {
			t.Fatal(err)
		}
		most = max(most, segments())
	}
	// Each save adds a segment; merged as they come, a few at a time,
	// they stay well below the 16 of a level FTS5 merges at once.
	if most > 8 {
		t.Fatalf("after saves FTS5 held up to %d segments", most)
	}
	if hits := find(t, ix, "zeppelins"); len(hits) != 40 {
		t.Fatalf("found %d of the 40 saved prompts", len(hits))
	}
}
