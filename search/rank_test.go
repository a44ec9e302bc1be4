package search

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// The word masks check and score a text as the matcher, which folds every
// word into a string, does: the same matches and the same BM25.
func TestWordMasksAgreeWithMatcher(t *testing.T) {
	t.Parallel()
	texts := []string{
		"the fox jumps over the lazy dog. The LAZY dog sleeps",
		"Un café crème, CAFÉ noir, cafe au lait",
		"migrations migrate MIGRATION migr",
		"東京タワー 東京 京都",
		"x\u0301 y \u0301 z",
		"",
		"fsync fsyncs FSync latency-latency lat",
	}
	queries := []string{`fox`, `lazy dog`, `"lazy dog"`, `cafe`, `café -noir`, `migr*`, `"the lazy" -"dog sleeps"`,
		`東京*`, `東京`, `x y`, `fsync lat*`, `"latency lat*"`, `-fox dog`}
	for _, qs := range queries {
		q, err := ParseQuery(qs)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			fast, slow := q.ranker(), q.matcher()
			if fast.m == nil {
				t.Fatalf("%s: no masks", qs)
			}
			if got, want := fast.matches(text), slow.match(text); got != want {
				t.Errorf("%s in %q: match %v, the matcher says %v", qs, text, got, want)
			}
			if got, want := fast.score(text), slow.score(text, nil, 1); math.Abs(got-want) > 1e-9 {
				t.Errorf("%s in %q: score %v, the matcher says %v", qs, text, got, want)
			}
		}
	}
}

// FuzzWordMasks holds the masks to the matcher on any query and text.
func FuzzWordMasks(f *testing.F) {
	f.Add(`"lazy dog"`, "the Lazy dog")
	f.Add(`a* "b c" -d`, "A b c a B c")
	f.Add(`café`, "CAFE\u0301 x")
	f.Fuzz(func(t *testing.T, query, text string) {
		q, err := ParseQuery(query)
		if err != nil {
			return
		}
		fast, slow := q.ranker(), q.matcher()
		if got, want := fast.matches(text), slow.match(text); got != want {
			t.Fatalf("%q in %q: match %v, the matcher says %v", query, text, got, want)
		}
		if got, want := fast.score(text), slow.score(text, nil, 1); math.Abs(got-want) > 1e-9 {
			t.Fatalf("%q in %q: score %v, the matcher says %v", query, text, got, want)
		}
	})
}

// A long text is scored by its first scoreBytes, its length scaled to the
// whole: a term past them does not count, and twice the text is about
// twice as long.
func TestScoreReadsTheStartOfALongText(t *testing.T) {
	t.Parallel()
	q, err := ParseQuery("otter")
	if err != nil {
		t.Fatal(err)
	}
	r := q.ranker()
	filler := strings.Repeat("filler words ", scoreBytes/13+1)
	early, late := "otter "+filler, filler+"otter"
	if s := r.score(late); s != 0 {
		t.Errorf("a term past the first %d bytes scores %v", scoreBytes, s)
	}
	if a, b := r.score(early), r.score(early+filler); !(a > b && b > 0) {
		t.Errorf("the longer text scores %v, the shorter %v", b, a)
	}
}

// Rarer words weigh more, and a word in every entry still counts.
func TestIDF(t *testing.T) {
	t.Parallel()
	if !(idf(1, 1000) > idf(10, 1000) && idf(10, 1000) > idf(1000, 1000) && idf(1000, 1000) > 0) {
		t.Fatalf("idf: %v %v %v", idf(1, 1000), idf(10, 1000), idf(1000, 1000))
	}
}

// A word few entries have weighs more than one most have: of two entries
// of the same length, each with one word three times and the other once,
// the one with the rarer word three times ranks first, though the other
// is newer (the tie-break without weights).
func TestRankingWeighsRareWords(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c := openConvo(t, data, "weights")
	var es []transcript.Entry
	for i := range 20 {
		es = append(es, user(fmt.Sprintf("f%d", i), "common filler words here"))
	}
	es = append(es, agent("older", "rare rare rare common"), agent("newer", "common common common rare"))
	c.save(es...)
	ix := openIndex(t, data)
	hits, err := ix.Search(context.Background(), "common rare", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Entry != "older" {
		t.Fatalf("hits %+v, want older first", hits)
	}
}

// Run ranks its candidates from the start of their texts and reads the
// whole text of the hits only: the hits, their order, scores and snippets
// are those of ranking every candidate's whole text, as read by the plain
// query, for texts around scoreBytes long, a character across the cut,
// and the words before, across and after it.
func TestRankingFromTheStartOfTextsFindsTheSameHits(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c := openConvo(t, data, "long")
	var es []transcript.Entry
	filler := strings.Repeat("filler café ", scoreBytes/12)
	for i := range 60 {
		pad := cut(filler, scoreBytes-200+i*7%400) // a length around scoreBytes
		var text string
		switch i % 4 {
		case 0:
			text = "otter seal " + pad + " otter"
		case 1:
			text = pad + "é otter seal otter seal " + strings.Repeat("x", i)
		case 2:
			text = strings.Repeat("otter ", i%5+1) + "seal " + pad + strings.Repeat(" seal otter", i)
		default:
			text = "seal otter"
		}
		es = append(es, user(fmt.Sprintf("e%d", i), text))
	}
	// The byte after the first scoreBytes is inside a character.
	es = append(es, user("cut", "otter "+strings.Repeat("a", scoreBytes-7)+"é seal otter"))
	c.save(es...)
	ix := openIndex(t, data)
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	long := 0
	for _, qs := range []string{"otter", "otter seal", `"otter seal"`, "seal -café", `"seal otter"`, "ott*"} {
		q, err := ParseQuery(qs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ix.Run(context.Background(), q, Options{Limit: 30})
		if err != nil {
			t.Fatal(err)
		}
		// The plain query: every candidate's whole text, ranked.
		m, err := ix.matchFor(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := ix.db.Query(`SELECT d.rowid, d.entry, d.at, d.body || d.rest FROM fts JOIN docs d ON d.rowid = `+topRowidSQL+` - fts.rowid
			WHERE fts MATCH ? ORDER BY fts.rowid LIMIT `+fmt.Sprint(candidates), m)
		if err != nil {
			t.Fatal(err)
		}
		r := q.ranker()
		if r.idf, err = ix.idfs(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		var want []ranked
		for rows.Next() {
			var c ranked
			if err := rows.Scan(&c.n, &c.entry, &c.at, &c.body); err != nil {
				t.Fatal(err)
			}
			if len(c.body) > scoreBytes {
				long++
			}
			c.score = r.score(c.body)
			want = append(want, c)
		}
		rows.Close()
		newestFirst := slices.Clone(want)
		slices.SortStableFunc(want, func(a, b ranked) int {
			if a.score != b.score {
				return cmp.Compare(b.score, a.score)
			}
			return cmp.Compare(b.n, a.n) // one timestamp for all
		})
		// Newest: the newest matches, each with the snippet of its whole
		// text.
		newest, err := ix.Run(context.Background(), q, Options{Limit: 30, Newest: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(newest) != min(len(newestFirst), 30) {
			t.Errorf("%s: %d newest hits, want %d", qs, len(newest), min(len(newestFirst), 30))
		}
		for i, h := range newest {
			if w := newestFirst[i]; h.Entry != w.entry || !reflect.DeepEqual(h.Snippet, q.snippet(w.body)) {
				t.Errorf("%s: newest hit %d is %s (snippet %q), the plain query's %s (snippet %q)",
					qs, i, h.Entry, h.SnippetText("[", "]"), w.entry, Hit{Snippet: q.snippet(w.body)}.SnippetText("[", "]"))
			}
		}
		want = want[:min(len(want), 30)]
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: %d hits, the plain query ranks %d", qs, len(got), len(want))
		}
		for i, h := range got {
			w := want[i]
			if h.Entry != w.entry || h.Score != -w.score || !reflect.DeepEqual(h.Snippet, q.snippet(w.body)) {
				t.Errorf("%s: hit %d is %s (score %v, snippet %q), the plain query's %s (score %v, snippet %q)",
					qs, i, h.Entry, h.Score, h.SnippetText("[", "]"), w.entry, -w.score, Hit{Snippet: q.snippet(w.body)}.SnippetText("[", "]"))
			}
		}
	}
	if long < 100 {
		t.Errorf("only %d candidates were longer than scoreBytes", long)
	}
}

// splitText keeps at least headBytes in the head, starts the rest on a
// character, and loses no byte.
func TestSplitText(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "short", strings.Repeat("a", headBytes), strings.Repeat("a", headBytes+1),
		strings.Repeat("a", headBytes-1) + "é" + "tail", strings.Repeat("a", headBytes-2) + "東京" + "tail", strings.Repeat("é", headBytes)} {
		head, rest := splitText(text)
		if head+rest != text {
			t.Errorf("%d bytes split into %d and %d that do not make it up", len(text), len(head), len(rest))
		}
		if rest != "" && (len(head) < headBytes || !startsRune(rest[0])) {
			t.Errorf("%d bytes: head %d bytes, rest starts with %#x", len(text), len(head), rest[0])
		}
		if len(text) <= headBytes && rest != "" {
			t.Errorf("%d bytes: split though short", len(text))
		}
	}
}

// An index of schema 4, which kept an entry's text in one column, is
// rebuilt when it is opened, and its long texts are found and cut into
// snippets past their first part again.
func TestIndexOfSchema4IsRebuilt(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c := openConvo(t, data, "old")
	c.save(user("long", strings.Repeat("filler ", headBytes/7+10)+"narwhal"), user("short", "a narwhal"))
	ix, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The previous schema's shape: no rest column, version 4.
	for _, q := range []string{`UPDATE docs SET body = body || rest`, `ALTER TABLE docs DROP COLUMN rest`, `UPDATE meta SET value = '4' WHERE key = 'version'`} {
		if _, err := ix.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ix.Close()
	ix = openIndex(t, data)
	if !ix.Rebuilt() {
		t.Fatal("an index of schema 4 was not rebuilt")
	}
	hits := find(t, ix, "narwhal")
	if got := entryIDs(hits); !slices.Equal(got, []string{"old/short", "old/long"}) {
		t.Fatalf("hits %v", got)
	}
	if s := hits[1].SnippetText("[", "]"); !strings.HasSuffix(s, "[narwhal]") {
		t.Errorf("the long entry's snippet is %q", s)
	}
}
