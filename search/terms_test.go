package search

import (
	"strings"
	"testing"
)

func TestSnippet(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("filler ", 30)
	for _, tc := range []struct{ q, text, want string }{
		{`"lazy dog"`, "the fox jumps over the lazy dog.", "the fox jumps over the [lazy dog]."},
		{`cafe`, "Un café crème", "Un [café] crème"},
		{`migrat*`, "the migrations run", "the [migrations] run"},
		{`fox`, long + "fox " + long, "…filler filler filler filler [fox] filler filler filler filler filler filler filler filler filler filler filler …"},
		// A phrase that runs past the window's end is marked whole.
		{`"a b c d e f g h i j k l m n o p q"`, "x a b c d e f g h i j k l m n o p q r s", "x [a b c d e f g h i j k l m n o p q] …"},
		{`zzz`, "", ""},
	} {
		q, err := ParseQuery(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		got := Hit{Snippet: q.snippet(tc.text)}.SnippetText("[", "]")
		if got != tc.want {
			t.Errorf("%s in %q: got %q, want %q", tc.q, tc.text, got, tc.want)
		}
	}
}

// FuzzSnippet: any query over any text gives a snippet whose pieces are
// all in the text, without a panic.
func FuzzSnippet(f *testing.F) {
	f.Add(`"lazy dog"`, "the lazy dog")
	f.Add(`a* "b c"`, "a b c a b c")
	f.Add(`"x y z"`, "w x y")
	f.Fuzz(func(t *testing.T, query, text string) {
		q, err := ParseQuery(query)
		if err != nil {
			return
		}
		for _, s := range q.snippet(text) {
			if p := strings.Trim(s.Text, "…"); !strings.Contains(text, p) {
				t.Fatalf("piece %q is not in %q", p, text)
			}
		}
	})
}
