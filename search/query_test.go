package search

import (
	"errors"
	"strings"
	"testing"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, match string
		roles           []string
		conv            string
	}{
		{"words", "alpha beta", `"alpha" AND "beta"`, nil, ""},
		{"phrase", `"red fox" den`, `"red fox" AND "den"`, nil, ""},
		{"prefix", "migr*", `"migr" *`, nil, ""},
		{"exclusion", "fox -dog -\"lazy cat\"", `"fox" NOT ("dog" OR "lazy cat")`, nil, ""},
		{"fts operators are text", "NOT OR AND NEAR(a b)", `"NOT" AND "OR" AND "AND" AND "NEAR(a" AND "b)"`, nil, ""},
		{"quote inside word is escaped", `it"s`, "", nil, ""},
		{"role filter", "fox role:prompt,answer", `"fox"`, []string{RolePrompt, RoleAnswer}, ""},
		{"conversation filter", "fox conversation:c-1", `"fox"`, nil, "c-1"},
		{"url is a word", "http://example.com", `"http://example.com"`, nil, ""},
		{"unicode", "Привет 東京 café", `"Привет" AND "東京" AND "café"`, nil, ""},
		{"lone dash and punctuation dropped", "fox - !!", `"fox"`, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := ParseQuery(c.in)
			if c.match == "" {
				if err == nil {
					t.Fatalf("ParseQuery(%q) = %q, want an error", c.in, q.matchWith(nil))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := q.matchWith(nil); got != c.match {
				t.Errorf("match = %s, want %s", got, c.match)
			}
			if strings.Join(q.Roles, ",") != strings.Join(c.roles, ",") || q.Conversation != c.conv {
				t.Errorf("filters = %v %q", q.Roles, q.Conversation)
			}
		})
	}
}

func TestParseQueryDates(t *testing.T) {
	t.Parallel()
	q, err := ParseQuery("fox after:2026-01-31 before:2026-02-02T10:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if q.After.Format("2006-01-02T15") != "2026-01-31T00" || q.Before.Format("2006-01-02T15") != "2026-02-02T10" {
		t.Errorf("after %v before %v", q.After, q.Before)
	}
}

func TestMalformedQueriesSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`say "hello`, "quote is not closed"},
		{`fox colour:red`, `unknown filter "colour:"`},
		{`fox role:robot`, `unknown role "robot"`},
		{`fox after:yesterday`, "is not a date"},
		{`fox role:`, "needs a value"},
		{`-fox`, "only excluded words"},
		{``, "nothing to search for"},
		{`role:prompt`, "nothing to search for"},
		{`"!!"`, "no letters or digits"},
		{strings.Repeat("a", MaxQueryBytes+1), "at most 512"},
		{strings.Repeat("a ", MaxQueryTerms+1), "too many words"},
		{"fox after:2026-02-01 before:2026-01-01", "not earlier"},
		{"a\xffb", "UTF-8"},
	}
	for _, c := range cases {
		_, err := ParseQuery(c.in)
		var qe *QueryError
		if !errors.As(err, &qe) || !errors.Is(err, ErrQuery) {
			t.Errorf("ParseQuery(%.40q) = %v, want a QueryError", c.in, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseQuery(%.40q): %v, want it to say %q", c.in, err, c.want)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`a "b c" -d e* role:tool`, `"`, `-"x"*`, `conv:1 after:2026-01-01`, "東京*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			return
		}
		// Every term reaches FTS5 quoted: the expression's quotes pair up.
		m := q.matchWith(nil)
		if strings.Count(m, `"`)%2 != 0 || len(q.Terms) == 0 {
			t.Fatalf("ParseQuery(%q) → %s", s, m)
		}
	})
}
