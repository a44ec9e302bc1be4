package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// wordsText is text whose words FTS5 splits and folds in ways a
// tokenizer of ASCII letters would get wrong.
var wordsText = []string{
	"Café crème, naïve façade; ÉCOLE Straße STRASSE İstanbul ǅemal",
	"decomposed cafe\u0301 and re\u0301sume\u0301; Привет мир, Ελληνικά ΣΟΦΙΑ",
	"東京タワー 東京都 北京 한국어 emoji🙂word mixed_snake-case it's o'clock",
	"résumé resumable resume résister compacté compaction compact COMPACTS",
	"ℌilbert ﬁle ①② ²³ x²y ａｂｃ full-width ＡＢＣ٣٤ Ⅻ",
	"digits 0123 12ab ab12 a1b2c3 _under_ __dunder__ $dollar #hash @at",
	strings.Repeat("x", 40000) + " after " + strings.Repeat("é", 20000),
}

// wordsCorpus is a data folder of generated conversations (many words)
// and one of wordsText, indexed.
func wordsCorpus(t *testing.T) (*convo, *Index) {
	t.Helper()
	data := genData(t, 3, 300)
	c := openConvo(t, data, "unicode")
	for i, s := range wordsText {
		c.save(user(fmt.Sprintf("u%d", i), s))
	}
	// Many words: random letters, some going on in other scripts or in
	// capitals.
	r := rand.New(rand.NewPCG(1, 2))
	tails := []string{"", "", "", "é", "ß", "ø", "ı", "Ω", "日本", "E\u0301"}
	m := openConvo(t, data, "many")
	var es []transcript.Entry
	for i := range 100 {
		var b strings.Builder
		for range 60 {
			for range 2 + r.IntN(8) {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
			b.WriteString(tails[r.IntN(len(tails))])
			if r.IntN(10) == 0 {
				b.WriteString("X9")
			}
			b.WriteByte(" ,.-_/"[r.IntN(6)])
		}
		es = append(es, agent(fmt.Sprintf("m%d", i), b.String()))
	}
	m.put(es...)
	ix := openIndex(t, data)
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, ix
}

// missingWords lists the terms FTS5 has that the words table lacks (by
// fts5vocab, which reads FTS5's own term list), and how many terms FTS5
// has.
func missingWords(t *testing.T, ix *Index) ([]string, int) {
	t.Helper()
	ctx := context.Background()
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, fts, 'row')`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM temp.vocab`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, `SELECT term FROM temp.vocab WHERE term NOT IN (SELECT w FROM words) ORDER BY term`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		if len(w) > 40 {
			w = w[:40] + "…"
		}
		missing = append(missing, w)
	}
	return missing, n
}

func TestWordsHoldEveryTerm(t *testing.T) {
	t.Parallel()
	c, ix := wordsCorpus(t)
	missing, n := missingWords(t, ix)
	if len(missing) > 0 {
		t.Errorf("%d of FTS5's %d terms are not in words: %q", len(missing), n, missing)
	}
	if n < 5000 {
		t.Fatalf("only %d terms: the corpus does not test much", n)
	}
	// A save's update writes its words as well.
	c.put(user("later", "zwölf Zebrafisch quokka42 ünïcödé"), agent("a-later", "Ægir ÆGIR quasar"))
	if err := ix.Update(context.Background(), "unicode"); err != nil {
		t.Fatal(err)
	}
	if missing, n := missingWords(t, ix); len(missing) > 0 {
		t.Errorf("after an update, %d of FTS5's %d terms are not in words: %q", len(missing), n, missing)
	}
	for _, w := range []string{"zwolf", "quokka42", "unicode", "quasar"} {
		var got int
		ix.db.QueryRow(`SELECT count(*) FROM words WHERE w = ?`, w).Scan(&got)
		if got != 1 {
			t.Errorf("words lacks %q", w)
		}
	}
}

// ftsRows lists the fts rows that match the FTS5 query m.
func ftsRows(t *testing.T, ix *Index, m string) []int64 {
	t.Helper()
	rows, err := ix.db.Query(`SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid`, m)
	if err != nil {
		t.Fatalf("%s: %v", m, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExpandedPrefixFindsWhatFTS5Finds(t *testing.T) {
	t.Parallel()
	_, ix := wordsCorpus(t)
	ctx := context.Background()
	var queries []string
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	for _, a := range chars {
		queries = append(queries, string(a)+"*")
		for _, b := range chars {
			queries = append(queries, string(a)+string(b)+"*")
		}
	}
	queries = append(queries, "Caf*", "RES*", "stra*", "compac*", "CoMpAc*", "xxxx*", "ist*", "ab12*",
		"caf* -res*", "stra* compac*", `"cafe creme"*`, "café*", "東京*", "prive*", "résum*")
	expanded, nonASCII := 0, 0
	for _, s := range queries {
		q, err := ParseQuery(s)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := ix.expand(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(exp) == 0 {
			continue
		}
		expanded++
		for _, ws := range exp {
			for _, w := range ws {
				if !isASCII(w) {
					nonASCII++
				}
			}
		}
		got, want := ftsRows(t, ix, q.matchWith(exp)), ftsRows(t, ix, q.matchWith(nil))
		if !slices.Equal(got, want) {
			t.Errorf("%s: expanded to %s finds %d rows, FTS5's prefix query %d", s, q.matchWith(exp), len(got), len(want))
		}
	}
	// The checks above compare something: many prefixes were expanded,
	// some to words that are not ASCII.
	if expanded < 500 || nonASCII < 1000 {
		t.Errorf("%d queries expanded, %d non-ASCII words among the expansions", expanded, nonASCII)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func TestPrefixIsExpanded(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c := openConvo(t, data, "c")
	c.save(user("u1", "compaction compact COMPARE compacté"), agent("a1", "many words"))
	var many []string
	for i := range maxExpansion + 1 {
		many = append(many, fmt.Sprintf("pre%04d", i))
	}
	c.save(agent("a2", strings.Join(many, " ")))
	ix := openIndex(t, data)
	if _, err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ q, match string }{
		{"compac*", `("compact" OR "compacte" OR "compaction")`},
		{"COMPAC*", `("compact" OR "compacte" OR "compaction")`},
		{"compa* -compac*", `("compact" OR "compacte" OR "compaction" OR "compare") NOT (("compact" OR "compacte" OR "compaction"))`},
		{"compaction*", `("compaction")`},
		{"pre0*", `"pre0" *`}, // more than maxExpansion words
		{"pre025*", `("pre0250" OR "pre0251" OR "pre0252" OR "pre0253" OR "pre0254" OR "pre0255" OR "pre0256")`},
		{"zzz*", `"zzz" *`},                 // no word: FTS5's own
		{"compacté*", `"compacté" *`},       // not ASCII: FTS5's own
		{`"many words"*`, `"many words" *`}, // a phrase: FTS5's own
		{"compaction", `"compaction"`},
	} {
		q, err := ParseQuery(c.q)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ix.matchFor(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if m != c.match {
			t.Errorf("%s: FTS5 query %s, want %s", c.q, m, c.match)
		}
	}
	if hits := find(t, ix, "compac*"); len(hits) != 1 || hits[0].Entry != "u1" {
		t.Errorf("compac* finds %v", entryIDs(hits))
	}
	if hits := find(t, ix, "pre025*"); len(hits) != 1 || hits[0].Entry != "a2" {
		t.Errorf("pre025* finds %v", entryIDs(hits))
	}
}

// BenchmarkWordSetAdd gathers the words of a generated conversation's
// entries, as a writer does for every row it writes.
func BenchmarkWordSetAdd(b *testing.B) {
	var buf strings.Builder
	if _, err := gen.Write(&buf, gen.Options{Messages: 3000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	s := history.NewScanner()
	for _, err := range s.Records(strings.NewReader(buf.String())) {
		if err != nil {
			b.Fatal(err)
		}
	}
	var texts []string
	n := 0
	for _, e := range s.Document() {
		if text, _, ok := entryText(e); ok {
			texts = append(texts, text)
			n += len(text)
		}
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		var ws wordSet
		for _, t := range texts {
			ws.add(t)
		}
	}
}
