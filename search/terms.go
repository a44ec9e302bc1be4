package search

import (
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
// database finished lexemes with their positions (a tsvector literal) and
// a tsquery built from the parsed query, which no parser reads again.

// token is one word of a text: its bytes and its folded form.
type token struct {
	start, end int
	folded     string
}

// maxLexeme bounds a lexeme's bytes (PostgreSQL allows 2 KiB).
const maxLexeme = 255

// tokens splits s into words as words does, each with its folded form.
func tokens(s string) []token {
	var out []token
	start := -1
	for i, r := range s {
		in := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
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
	k := 0
	for _, t := range out {
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

// Limits of a tsvector: positions run to 16383, and a lexeme keeps at
// most 256 of them.
const (
	maxPosition  = 16383
	maxPositions = 256
)

// tsvector writes the text's words as a tsvector literal: every folded
// word with the positions it has.
func tsvector(text string) string {
	ts := tokens(text)
	pos := map[string][]int{}
	var order []string
	for i, t := range ts {
		p, ok := pos[t.folded]
		if !ok {
			order = append(order, t.folded)
		}
		if len(p) < maxPositions {
			pos[t.folded] = append(p, min(i+1, maxPosition))
		}
	}
	var b strings.Builder
	for i, w := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		lexeme(&b, w)
		b.WriteByte(':')
		last := 0
		for j, p := range pos[w] {
			if p == last {
				continue // positions past the limit all read maxPosition
			}
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
			last = p
		}
	}
	return b.String()
}

// lexeme writes w quoted for a tsvector or tsquery literal.
func lexeme(b *strings.Builder, w string) {
	b.WriteByte('\'')
	for _, r := range w {
		if r == '\'' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
}

// tsquery renders the query's text part as a tsquery literal, term for
// term as match renders it for FTS5: a term of several words is a phrase
// (<->), a prefix term's last word matches as a prefix (:*).
func (q Query) tsquery() string {
	var b strings.Builder
	for i, t := range q.Terms {
		if i > 0 {
			b.WriteString(" & ")
		}
		t.tsquery(&b)
	}
	if len(q.Excluded) > 0 {
		b.WriteString(" & !(")
		for i, t := range q.Excluded {
			if i > 0 {
				b.WriteString(" | ")
			}
			t.tsquery(&b)
		}
		b.WriteString(")")
	}
	return b.String()
}

func (t Term) tsquery(b *strings.Builder) {
	ws := tokens(t.Text)
	b.WriteByte('(')
	for i, w := range ws {
		if i > 0 {
			b.WriteString(" <-> ")
		}
		lexeme(b, w.folded)
		if t.Prefix && i == len(ws)-1 {
			b.WriteString(":*")
		}
	}
	b.WriteByte(')')
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
			ok := true
			for k, w := range ws {
				x := ts[i+k].folded
				if x != w.folded && !(t.Prefix && k == len(ws)-1 && strings.HasPrefix(x, w.folded)) {
					ok = false
					break
				}
			}
			if ok {
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
