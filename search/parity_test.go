package search

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"
)

// The web app marks a hit's words with its own copy of the word rules
// (web/src/search/terms.ts), which its tests hold to a table of cases.
// This holds the table to the rules here, so a change to either side that
// the other lacks fails one of the two suites.
func TestWebTermsParityTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "web", "src", "search", "terms.parity.json"))
	if err != nil {
		t.Fatal(err)
	}
	type tok struct {
		Text   string `json:"text"`
		Folded string `json:"folded"`
	}
	var cases []struct {
		In     string `json:"in"`
		Tokens []tok  `json:"tokens"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("terms.parity.json: %v", err)
	}
	if len(cases) < 10 {
		t.Fatalf("terms.parity.json holds %d cases; want the table", len(cases))
	}
	for _, c := range cases {
		got := []tok{}
		for _, k := range tokens(c.In) {
			got = append(got, tok{Text: c.In[k.start:k.end], Folded: k.folded})
		}
		want := c.Tokens
		if want == nil {
			want = []tok{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("tokens(%q) = %+v; the web's table says %+v", c.In, got, want)
		}
	}
}
