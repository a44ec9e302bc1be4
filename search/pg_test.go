package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/transcript"
)

func sameIDs(t *testing.T, ix Searcher, q string, want ...string) {
	t.Helper()
	got := entryIDs(find(t, ix, q))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %v, want %v", q, got, want)
	}
}

// TestPGPrefixOfTooManyWords: a prefix that starts more than maxExpansion
// words is left out of the SQL and checked in the text, as a term and as
// an exclusion; one that starts a few is expanded.
func TestPGPrefixOfTooManyWords(t *testing.T) {
	st := pgStore(t)
	var many []string
	for i := range maxExpansion + 44 {
		many = append(many, fmt.Sprintf("zqa%d", i))
	}
	c := env{t: t, store: st}.convo("p")
	c.save(user("u1", strings.Join(many, " ")), user("u2", "a needle alone"), user("u3", "a needle by zqa77"),
		user("u4", "zqabc only"), user("u5", "nothing here"))
	ix := OpenPostgres(st)
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ix.expand(context.Background(), "zqa"); err != nil || ok {
		t.Fatalf("zqa expands within the bound (%v, %v); the test needs more words", ok, err)
	}
	sameIDs(t, ix, "zqa*", "p/u1", "p/u3", "p/u4")
	sameIDs(t, ix, "needle zqa*", "p/u3")
	sameIDs(t, ix, "needle -zqa*", "p/u2")
	sameIDs(t, ix, "zqab*", "p/u4")
	sameIDs(t, ix, "a -zqab*", "p/u2", "p/u3")
	sameIDs(t, ix, "zqx*")
}

// TestPGHashCollisionIsNoHit: a row found through another word with the
// same hash is dropped when its text is checked.
func TestPGHashCollisionIsNoHit(t *testing.T) {
	st := pgStore(t)
	c := env{t: t, store: st}.convo("h")
	c.save(user("u1", "apple pie"), user("u2", "banana split"), user("u3", "cherry tart"))
	ix := OpenPostgres(st)
	ix.hash = func(w string) int32 {
		if w == "apple" || w == "banana" {
			return 7
		}
		return wordHash(w)
	}
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM folio_search WHERE terms @> '{7}'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows have the shared hash (%v); want 2", n, err)
	}
	sameIDs(t, ix, "apple", "h/u1")
	sameIDs(t, ix, "banana", "h/u2")
	sameIDs(t, ix, "ban*", "h/u2")
	sameIDs(t, ix, "apple pie", "h/u1")
	hits, err := ix.Search(context.Background(), "apple", Options{Newest: true, Limit: MaxFind})
	if err != nil || len(hits) != 1 || hits[0].Entry != "u1" {
		t.Errorf("apple, newest: %v %v", entryIDs(hits), err)
	}
}

// TestWordHash: the stored hash is FNV-1a 32 of the word's bytes; a
// change would make every index in a database wrong.
func TestWordHash(t *testing.T) {
	for w, want := range map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968} {
		if got := uint32(wordHash(w)); got != want {
			t.Errorf("wordHash(%q) = %#x, want %#x", w, got, want)
		}
	}
}

// TestAbove: above(p) bounds the strings that start with p.
func TestAbove(t *testing.T) {
	for p, want := range map[string]string{"lat": "lau", "caf\u00e9": "caf\u00ea", "\ud7ff": "\ue000", "x\U0010FFFE": "x\U0010FFFF"} {
		if got, ok := above(p); !ok || got != want {
			t.Errorf("above(%q) = %q %v, want %q", p, got, ok, want)
		}
	}
	if _, ok := above("x\U0010FFFF"); ok {
		t.Error("above of U+10FFFF")
	}
}

// TestPGStatsByHash: the table's statistics of terms are read back keyed
// by the words' hashes (Run's choice between walking and the GIN index).
func TestPGStatsByHash(t *testing.T) {
	st := pgStore(t)
	c := env{t: t, store: st}.convo("s")
	var es []transcript.Entry
	for i := range 100 {
		es = append(es, user(idOf("u", i), fmt.Sprintf("a heron number %d", i)))
	}
	c.save(es...)
	ix := OpenPostgres(st)
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(context.Background(), `ANALYZE folio_search`); err != nil {
		t.Fatal(err)
	}
	s := ix.stats(context.Background())
	if f := s.freq[wordHash("heron")]; f < 0.9 || s.rows < 100 {
		t.Fatalf("heron's frequency %v of %v rows; want every row (%d hashes known)", f, s.rows, len(s.freq))
	}
	if f, ok := s.freq[wordHash("42")]; ok && f > 0.1 {
		t.Errorf("a word of one row has the frequency %v", f)
	}
}
