package search

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Terms for the PostgreSQL back end. FTS5's unicode61 tokenizer splits
// text into runs of letters and digits, lowercases them and removes
// diacritics; PostgreSQL's parsers depend on the database's locale. So the
// PostgreSQL back end does the same work here, in Go, and hands the
// database the hashes of the folded words (wordHash) and a query in the
// same hashes, which no parser reads again.

// token is one word of a text: its bytes and its folded form.
type token struct {
	start, end int
	folded     string
}

// maxLexeme bounds a folded word's bytes (the PostgreSQL back end hashes
// and lists words of at most this many).
const maxLexeme = 255

// tokens splits s into words as words does, each with its folded form.
func tokens(s string) []token { return appendTokens(nil, s) }

// appendTokens appends the words of s to out.
func appendTokens(out []token, s string) []token {
	base := len(out)
	start := -1
	for i, r := range s {
		var in bool
		if r < utf8.RuneSelf {
			in = 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
		} else {
			in = unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		}
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			out = append(out, token{start, i, fold(s[start:i])})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, token{start, len(s), fold(s[start:])})
	}
	// A word of marks alone folds to nothing.
	k := base
	for _, t := range out[base:] {
		if t.folded != "" {
			out[k] = t
			k++
		}
	}
	return out[:k]
}

// fold lowercases a word and removes its diacritics (é → e, ü → u).
func fold(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return bound(strings.ToLower(w))
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return bound(b.String())
}

func bound(w string) string {
	if len(w) > maxLexeme {
		return cut(w, maxLexeme)
	}
	return w
}

// wordHash is the hash the PostgreSQL index stores for a folded word:
// FNV-1a (32 bits) of its UTF-8 bytes, as an int32. The hashes are
// stored, so it never changes; another hash would need a migration that
// drops the index.
func wordHash(w string) int32 {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		h ^= uint32(w[i])
		h *= 16777619
	}
	return int32(h)
}

// hashes returns the hashes of the folded words ws, ascending, each once.
func hashes(ws []string, hash func(string) int32) []int32 {
	hs := make([]int32, len(ws))
	for i, w := range ws {
		hs[i] = hash(w)
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}

// rowTerms returns a text's terms for the PostgreSQL index, the hashes of
// its distinct folded words as an int4[] literal, ascending, and adds
// the words to seen. Phrases and prefixes are checked in the text
// (matcher), so the index keeps neither positions nor the words.
func rowTerms(text string, hash func(string) int32, seen map[string]struct{}) string {
	ts := tokens(text)
	ws := make([]string, len(ts))
	for i, t := range ts {
		ws[i] = t.folded
		seen[t.folded] = struct{}{}
	}
	hs := hashes(ws, hash)
	b := make([]byte, 0, 2+len(hs)*11)
	b = append(b, '{')
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(h), 10)
	}
	return string(append(b, '}'))
}

// matcher checks texts against a query (PGIndex's phrases), with the
// query's words folded once and one buffer of words for every text.
type matcher struct {
	terms, excluded []Term
	words           map[*Term][]token
	buf             []token
}

func (q Query) matcher() *matcher {
	m := &matcher{terms: q.Terms, excluded: q.Excluded, words: map[*Term][]token{}}
	for _, ts := range [][]Term{m.terms, m.excluded} {
		for i := range ts {
			m.words[&ts[i]] = tokens(ts[i].Text)
		}
	}
	return m
}

// match reports whether text has every term of the query (a phrase's
// words in order, next to each other) and none of the excluded ones, as
// FTS5 matches them.
func (m *matcher) match(text string) bool {
	m.buf = appendTokens(m.buf[:0], text)
	for i := range m.terms {
		if !m.terms[i].in(m.buf, m.words[&m.terms[i]]) {
			return false
		}
	}
	for i := range m.excluded {
		if m.excluded[i].in(m.buf, m.words[&m.excluded[i]]) {
			return false
		}
	}
	return true
}

// score is ranker.score for a query wordMasks cannot hold: each term's
// count in text against the text's length in words (times scale),
// weighted by idf (1 each when nil).
func (m *matcher) score(text string, idf []float64, scale float64) float64 {
	m.buf = appendTokens(m.buf[:0], text)
	norm := bm25K1 * (1 - bm25B + bm25B*float64(len(m.buf))*scale/bm25Avg)
	var s float64
	for i := range m.terms {
		t := &m.terms[i]
		ws := m.words[t]
		tf := 0
		for j := 0; len(ws) > 0 && j+len(ws) <= len(m.buf); j++ {
			if t.at(m.buf, j, ws) {
				tf++
			}
		}
		w := 1.0
		if idf != nil {
			w = idf[i]
		}
		s += w * float64(tf) * (bm25K1 + 1) / (float64(tf) + norm)
	}
	return s
}

// in reports whether the term, of the words ws, occurs in ts.
func (t Term) in(ts, ws []token) bool {
	if len(ws) == 0 {
		return false
	}
	for i := 0; i+len(ws) <= len(ts); i++ {
		if t.at(ts, i, ws) {
			return true
		}
	}
	return false
}

// at reports whether the term's words ws start at ts[i].
func (t Term) at(ts []token, i int, ws []token) bool {
	for k, w := range ws {
		x := ts[i+k].folded
		if x != w.folded && !(t.Prefix && k == len(ws)-1 && strings.HasPrefix(x, w.folded)) {
			return false
		}
	}
	return true
}

// snippet cuts text around the first word the query matches, about
// snippetTokens words long, and marks what matches a term (a phrase as one
// piece), as FTS5's snippet does for the SQLite back end.
func (q Query) snippet(text string) []Span {
	ts := tokens(text)
	// group[i] is, for a token that starts a match, the token after the
	// match's last; 0 elsewhere.
	group := make([]int, len(ts))
	first := -1
	for _, t := range q.Terms {
		ws := tokens(t.Text)
		for i := range ts {
			if i+len(ws) > len(ts) || len(ws) == 0 {
				break
			}
			if t.at(ts, i, ws) {
				group[i] = max(group[i], i+len(ws))
				if first < 0 || i < first {
					first = i
				}
			}
		}
	}
	if len(ts) == 0 {
		if len(text) > 200 {
			text = cut(text, 200)
		}
		return []Span{{Text: text}}
	}
	// A few words before the first hit, and a whole window when the text
	// has that many words.
	from := max(0, min(first-snippetTokens/4, len(ts)-snippetTokens))
	to := min(len(ts), from+snippetTokens)
	var out []Span
	add := func(s string, h bool) {
		if s != "" {
			out = append(out, Span{Text: s, Hit: h})
		}
	}
	pos := 0
	if from > 0 {
		add("…", false)
		pos = ts[from].start
	}
	i := from
	for i < to {
		add(text[pos:ts[i].start], false)
		j := i + 1
		if g := group[i]; g > 0 {
			j = min(g, len(ts))
			add(text[ts[i].start:ts[j-1].end], true)
		} else {
			add(text[ts[i].start:ts[i].end], false)
		}
		pos = ts[j-1].end
		i = j
	}
	to = i // a phrase may end past the window
	if to < len(ts) {
		add(text[pos:ts[to].start], false)
		add("…", false)
	} else {
		add(text[pos:], false)
	}
	// Adjacent pieces that are not hits read as one.
	k := 0
	for _, sp := range out {
		if k > 0 && !sp.Hit && !out[k-1].Hit {
			out[k-1].Text += sp.Text
			continue
		}
		out[k] = sp
		k++
	}
	return out[:k]
}
