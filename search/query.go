package search

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of a query.
const (
	MaxQueryBytes = 512 // a longer query is refused
	MaxQueryTerms = 32  // words, phrases and prefixes, excluded ones included
)

// Query is a parsed search query.
type Query struct {
	// Terms must all match; Excluded must not. A Term is one word or a
	// phrase (several words in order) and may end in a prefix.
	Terms, Excluded []Term
	Roles           []string  // role: filters; any of them (empty: all)
	Conversation    string    // conversation: filter
	After, Before   time.Time // after:/before: filters (zero: open)
}

// Term is one word, a "phrase", or a prefix* as the person wrote it.
type Term struct {
	Text   string
	Phrase bool
	Prefix bool
}

// roleAliases maps what a person may write after role: to the stored
// roles.
var roleAliases = map[string][]string{
	"prompt": {RolePrompt}, "user": {RolePrompt}, "you": {RolePrompt},
	"answer": {RoleAnswer}, "agent": {RoleAnswer}, "assistant": {RoleAnswer},
	"reasoning": {RoleReasoning}, "thinking": {RoleReasoning},
	"tool": {RoleTool}, "notice": {RoleNotice}, "failure": {RoleFailure},
	"summary": {RoleSummary}, "title": {RoleTitle},
}

var filterNames = []string{"role", "conversation", "after", "before"}

// ParseQuery reads a query as a person writes it:
//
//	words            every word must appear (any case, any accents)
//	"a phrase"       these words in this order
//	pref*            a word starting with pref
//	-word, -"a b"    leave out entries that have it
//	role:prompt      only prompts (also answer, reasoning, tool, notice,
//	                 failure, summary, title); role:a,b for either
//	conversation:ID  only that conversation (also conv:)
//	after:2026-01-31 from that day on (UTC), before:2026-02-01 until
//	                 that day; or a full RFC 3339 time
//
// A malformed query (an unbalanced quote, an unknown filter, a bad date, no
// word to look for, too long) is a *QueryError saying what and where.
func ParseQuery(s string) (Query, error) {
	var q Query
	if len(s) > MaxQueryBytes {
		return q, &QueryError{Offset: MaxQueryBytes, Msg: fmt.Sprintf("the query is %d bytes long; at most %d are allowed", len(s), MaxQueryBytes)}
	}
	if !utf8.ValidString(s) {
		return q, &QueryError{Msg: "the query is not valid UTF-8"}
	}
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		start := i
		neg := false
		if r == '-' && i+1 < len(s) && !isSpaceAt(s, i+1) {
			neg = true
			i++
		}
		var t Term
		if i < len(s) && s[i] == '"' {
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return q, &QueryError{Offset: i, Msg: `this quote is not closed: add a closing " (or remove it)`}
			}
			t = Term{Text: s[i+1 : i+1+end], Phrase: true}
			i += end + 2
			if i < len(s) && s[i] == '*' {
				t.Prefix = true
				i++
			}
		} else {
			j := i
			for j < len(s) {
				r, n := utf8.DecodeRuneInString(s[j:])
				if unicode.IsSpace(r) || r == '"' {
					break
				}
				j += n
			}
			word := s[i:j]
			if k := strings.IndexByte(word, ':'); k > 0 && !neg && isFilterName(word[:k]) && !strings.HasPrefix(word[k+1:], "//") {
				if err := q.filter(strings.ToLower(word[:k]), word[k+1:], start); err != nil {
					return q, err
				}
				i = j
				continue
			}
			if j < len(s) && s[j] == '"' {
				return q, &QueryError{Offset: j, Msg: `a quote must start a phrase: put a space before it`}
			}
			t = Term{Text: word}
			if strings.HasSuffix(word, "*") {
				t.Text, t.Prefix = strings.TrimRight(word, "*"), true
			}
			i = j
		}
		if len(words(t.Text)) == 0 {
			if t.Phrase {
				return q, &QueryError{Offset: start, Msg: "this phrase has no letters or digits to look for"}
			}
			continue // punctuation alone, as the index ignores it
		}
		if neg {
			q.Excluded = append(q.Excluded, t)
		} else {
			q.Terms = append(q.Terms, t)
		}
		if len(q.Terms)+len(q.Excluded) > MaxQueryTerms {
			return q, &QueryError{Offset: start, Msg: fmt.Sprintf("too many words: at most %d", MaxQueryTerms)}
		}
	}
	if len(q.Terms) == 0 {
		msg := "nothing to search for: write a word"
		if len(q.Excluded) > 0 {
			msg = "only excluded words: add a word that must appear"
		}
		return q, &QueryError{Offset: len(s), Msg: msg}
	}
	if !q.After.IsZero() && !q.Before.IsZero() && !q.After.Before(q.Before) {
		return q, &QueryError{Offset: 0, Msg: "after: is not earlier than before: so nothing can match"}
	}
	return q, nil
}

func isSpaceAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

// isFilterName reports whether name reads as a filter: letters only. A
// word like "http://x" or "12:30" is not one; "foo:bar" is, and an unknown
// one is refused rather than searched for as text.
func isFilterName(name string) bool {
	for _, r := range name {
		if !unicode.IsLetter(r) || r > unicode.MaxASCII {
			return false
		}
	}
	return true
}

func (q *Query) filter(name, value string, at int) error {
	if value == "" {
		return &QueryError{Offset: at, Msg: fmt.Sprintf("%s: needs a value right after the colon", name)}
	}
	switch name {
	case "role", "kind":
		for _, v := range strings.Split(value, ",") {
			rs, ok := roleAliases[strings.ToLower(v)]
			if !ok {
				return &QueryError{Offset: at, Msg: fmt.Sprintf("unknown role %q: use one of %s", v, strings.Join(roles, ", "))}
			}
			for _, r := range rs {
				if !slices.Contains(q.Roles, r) {
					q.Roles = append(q.Roles, r)
				}
			}
		}
	case "conversation", "conv", "in":
		if q.Conversation != "" && q.Conversation != value {
			return &QueryError{Offset: at, Msg: "two different conversation: filters"}
		}
		q.Conversation = value
	case "after", "before", "since", "until":
		t, err := parseDate(value)
		if err != nil {
			return &QueryError{Offset: at, Msg: fmt.Sprintf("%s:%s is not a date: write YYYY-MM-DD or an RFC 3339 time", name, value)}
		}
		if name == "after" || name == "since" {
			q.After = t
		} else {
			q.Before = t
		}
	default:
		return &QueryError{Offset: at, Msg: fmt.Sprintf("unknown filter %q: use %s, or put the word in quotes to search for it", name+":", strings.Join(filterNames, ":, ")+":")}
	}
	return nil
}

// parseDate reads a day (UTC) or an exact time. after: includes its day
// and before: excludes its day, as mail search reads them.
func parseDate(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), nil
	}
	return time.Parse(time.DateOnly, v)
}

// words splits s as the index's tokenizer does, near enough: runs of
// letters, digits and marks. It is used to drop terms that hold none.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
}

// matchWith renders the query's text part in FTS5's syntax. Every term is
// a quoted string (quotes doubled), so no user text is read as FTS5
// operators; a prefix is the string followed by *, or, when exp lists its
// words, those words: ("w1" OR "w2" …).
func (q Query) matchWith(exp map[Term][]string) string {
	var b strings.Builder
	for i, t := range q.Terms {
		if i > 0 {
			b.WriteString(" AND ")
		}
		t.write(&b, exp[t])
	}
	if len(q.Excluded) > 0 {
		b.WriteString(" NOT (")
		for i, t := range q.Excluded {
			if i > 0 {
				b.WriteString(" OR ")
			}
			t.write(&b, exp[t])
		}
		b.WriteString(")")
	}
	return b.String()
}

func (t Term) write(b *strings.Builder, words []string) {
	if len(words) > 0 {
		b.WriteByte('(')
		for i, w := range words {
			if i > 0 {
				b.WriteString(" OR ")
			}
			b.WriteByte('"')
			b.WriteString(strings.ReplaceAll(w, `"`, `""`))
			b.WriteByte('"')
		}
		b.WriteByte(')')
		return
	}
	b.WriteByte('"')
	b.WriteString(strings.ReplaceAll(t.Text, `"`, `""`))
	b.WriteByte('"')
	if t.Prefix {
		b.WriteString(" *")
	}
}
