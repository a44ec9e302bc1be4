package search

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// wordMasks checks and scores texts against a query's words without
// folding every word of every text into a string of its own: ranking a
// query's 1,000 candidates did that for some 100,000 words, a third of a
// query's CPU. Each word of a text becomes a bit set of the query words it
// is (or, for a prefix, starts with); an ASCII word is compared with them
// in place, folding case as it goes, and only a word with other letters is
// folded (fold) first. Terms are then sequences of bits.
type wordMasks struct {
	words  []string // the query's distinct folded words
	prefix []bool   // words[i] is matched as a prefix
	// terms and excluded are each term's words, as indexes into words.
	terms, excluded [][]int
	buf             []uint64
}

// maxMaskWords is how many distinct words a wordMasks tells apart; a query
// with more (long phrases) is checked by matcher.
const maxMaskWords = 64

// masks returns q's wordMasks, or nil when it has too many words.
func (q Query) masks() *wordMasks {
	m := &wordMasks{}
	add := func(t Term) []int {
		ws := tokens(t.Text)
		ids := make([]int, len(ws))
		for k, w := range ws {
			p := t.Prefix && k == len(ws)-1
			ids[k] = -1
			for i := range m.words {
				if m.words[i] == w.folded && m.prefix[i] == p {
					ids[k] = i
				}
			}
			if ids[k] < 0 {
				ids[k] = len(m.words)
				m.words = append(m.words, w.folded)
				m.prefix = append(m.prefix, p)
			}
		}
		return ids
	}
	for _, t := range q.Terms {
		m.terms = append(m.terms, add(t))
	}
	for _, t := range q.Excluded {
		m.excluded = append(m.excluded, add(t))
	}
	if len(m.words) > maxMaskWords {
		return nil
	}
	return m
}

// scan sets m.buf to the bit sets of text's words, one a word, as tokens
// splits and folds them (a word of marks alone is no word).
func (m *wordMasks) scan(text string) []uint64 {
	out := m.buf[:0]
	start, ascii := -1, true
	for i := 0; i < len(text); {
		c := text[i]
		var in bool
		size := 1
		if c < utf8.RuneSelf {
			in = asciiWord[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			in = unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		}
		switch {
		case in && start < 0:
			start, ascii = i, c < utf8.RuneSelf
		case in:
			ascii = ascii && c < utf8.RuneSelf
		case start >= 0:
			out = m.word(out, text[start:i], ascii)
			start = -1
		}
		i += size
	}
	if start >= 0 {
		out = m.word(out, text[start:], ascii)
	}
	m.buf = out
	return out
}

// asciiWord says which ASCII bytes are letters or digits.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// word appends w's bit set.
func (m *wordMasks) word(out []uint64, w string, ascii bool) []uint64 {
	var bits uint64
	if ascii && len(w) <= maxLexeme {
		for i, q := range m.words {
			if len(w) == len(q) || m.prefix[i] && len(w) > len(q) {
				if asciiFoldedPrefix(w, q) {
					bits |= 1 << i
				}
			}
		}
		return append(out, bits)
	}
	f := fold(w)
	if f == "" {
		return out
	}
	for i, q := range m.words {
		if f == q || m.prefix[i] && strings.HasPrefix(f, q) {
			bits |= 1 << i
		}
	}
	return append(out, bits)
}

// asciiFoldedPrefix reports whether the ASCII word w, lowercased, starts
// with the folded word q.
func asciiFoldedPrefix(w, q string) bool {
	for i := 0; i < len(q); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != q[i] {
			return false
		}
	}
	return true
}

// count is how many times the term of the words ids occurs in the scanned
// words ms (at most one when once).
func count(ms []uint64, ids []int, once bool) int {
	if len(ids) == 0 {
		return 0
	}
	n := 0
	for i := 0; i+len(ids) <= len(ms); i++ {
		k := 0
		for k < len(ids) && ms[i+k]&(1<<ids[k]) != 0 {
			k++
		}
		if k == len(ids) {
			n++
			if once {
				return n
			}
		}
	}
	return n
}

// match reports what matcher.match does.
func (m *wordMasks) match(text string) bool {
	ms := m.scan(text)
	for _, ids := range m.terms {
		if count(ms, ids, true) == 0 {
			return false
		}
	}
	for _, ids := range m.excluded {
		if count(ms, ids, true) > 0 {
			return false
		}
	}
	return true
}

// BM25's parameters, and the average entry's length in words it assumes.
const (
	bm25K1  = 1.2
	bm25B   = 0.75
	bm25Avg = 32.0
)

// ranker scores texts by BM25 for a query: each term's count in the text
// (a phrase's occurrences, a prefix's words) against the text's length in
// words, weighted by the term's inverse document frequency (idf; every
// term weighs 1 without).
type ranker struct {
	m   *wordMasks
	old *matcher // a query with more words than wordMasks tells apart
	idf []float64
}

func (q Query) ranker() *ranker {
	r := &ranker{m: q.masks()}
	if r.m == nil {
		r.old = q.matcher()
	}
	return r
}

// matches reports whether text has the query's terms and none of its
// excluded ones.
func (r *ranker) matches(text string) bool {
	if r.m == nil {
		return r.old.match(text)
	}
	return r.m.match(text)
}

// scoreBytes is how much of an entry's text ranking reads: a term's count
// is its count there, and the entry's length in words is that part's,
// scaled to the whole text's bytes. The candidates of common words are
// often the longest entries (up to 64 KiB), and reading them whole was
// most of a query's scoring.
const scoreBytes = 8 << 10

// headBytes is how much of a text's start score needs to see: scoreBytes
// and the byte after them, where cut looks for the start of a character.
const headBytes = scoreBytes + 1

func (r *ranker) score(text string) float64 { return r.scoreHead(text, len(text)) }

// scoreHead is score of a text of size bytes that starts with head, which
// holds at least its first headBytes (all of it when it is shorter): what
// score reads of a long text, so the rest need not be fetched.
func (r *ranker) scoreHead(text string, size int) float64 {
	scale := 1.0
	if size > scoreBytes {
		part := cut(text, scoreBytes)
		scale = float64(size) / float64(len(part))
		text = part
	}
	if r.m == nil {
		return r.old.score(text, r.idf, scale)
	}
	ms := r.m.scan(text)
	norm := bm25K1 * (1 - bm25B + bm25B*float64(len(ms))*scale/bm25Avg)
	var s float64
	for i, ids := range r.m.terms {
		tf := float64(count(ms, ids, false))
		w := 1.0
		if r.idf != nil {
			w = r.idf[i]
		}
		s += w * tf * (bm25K1 + 1) / (tf + norm)
	}
	return s
}

// idf is BM25's inverse document frequency of a term found in df of n
// entries (Lucene's form, never negative).
func idf(df, n float64) float64 {
	df = min(max(df, 0), n)
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// idfs weighs each of q's terms by its inverse document frequency among n
// entries, df saying in how many entries a word (or a prefix) is: a
// phrase weighs as the sum of its words (as Lucene weighs one), each word
// looked up once. A query of one term needs none: every candidate has it,
// so its weight orders nothing (nil).
func (q Query) idfs(n float64, df func(Term) (float64, error)) ([]float64, error) {
	if len(q.Terms) < 2 || n <= 0 {
		return nil, nil
	}
	seen := map[Term]float64{}
	weigh := func(t Term) (float64, error) {
		if w, ok := seen[t]; ok {
			return w, nil
		}
		d, err := df(t)
		if err != nil {
			return 0, err
		}
		seen[t] = idf(d, n)
		return seen[t], nil
	}
	out := make([]float64, len(q.Terms))
	for i, t := range q.Terms {
		ws := words(t.Text)
		if len(ws) <= 1 {
			w, err := weigh(Term{Text: t.Text, Prefix: t.Prefix})
			if err != nil {
				return nil, err
			}
			out[i] = w
			continue
		}
		for k, word := range ws {
			w, err := weigh(Term{Text: word, Prefix: t.Prefix && k == len(ws)-1})
			if err != nil {
				return nil, err
			}
			out[i] += w
		}
	}
	return out, nil
}
