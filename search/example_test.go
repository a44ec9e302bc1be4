package search_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/foliodev/folio/search"
)

// A program searches every conversation of a data folder: the index lives
// in the folder (search.Path) and catches up with the logs before it
// answers. A query a person mistyped is refused with what is wrong and
// where, never answered with nothing.
func ExampleIndex_Search() {
	data, err := os.MkdirTemp("", "folio")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(data)
	log := `{"type":"conversation","version":3,"conversationId":"c1","startedAt":"2026-03-04T05:06:09.000Z"}
{"type":"ui-append","at":"2026-03-04T05:06:10.000Z","entries":[{"id":"u1","content":{"kind":"user","text":"Why does fsync matter for the log?"},"timestamp":"2026-03-04T05:06:10.000Z"}]}
{"type":"ui-append","at":"2026-03-04T05:06:11.000Z","entries":[{"id":"a1","content":{"kind":"agent","markdown":"Without fsync a crash can lose what a save reported as written."},"timestamp":"2026-03-04T05:06:11.000Z"}]}
`
	if err := os.MkdirAll(filepath.Join(data, "conversations"), 0o700); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(data, "conversations", "c1.jsonl"), []byte(log), 0o600); err != nil {
		panic(err)
	}

	ix, err := search.Open(data)
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	fmt.Println(strings.HasPrefix(search.Path(data), data))

	ctx := context.Background()
	hits, err := ix.Search(ctx, "fsync role:answer", search.Options{Limit: 5, Timeout: search.Timeout})
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		switch h.Role {
		case search.RolePrompt:
			fmt.Print("asked: ")
		case search.RoleAnswer, search.RoleReasoning, search.RoleSummary:
			fmt.Print("answered: ")
		case search.RoleTool, search.RoleNotice, search.RoleFailure, search.RoleTitle:
			fmt.Print("shown: ")
		}
		fmt.Println(h.Conversation, h.Entry, h.SnippetText("[", "]"))
	}

	_, err = ix.Search(ctx, `"fsync matter`, search.Options{})
	var qe *search.QueryError
	fmt.Println(errors.As(err, &qe), qe.Offset)
	_, err = ix.Search(ctx, strings.Repeat("x", search.MaxQueryBytes+1), search.Options{})
	fmt.Println(errors.Is(err, search.ErrQuery))
	_, err = ix.Search(ctx, strings.Repeat("x ", search.MaxQueryTerms+1), search.Options{})
	fmt.Println(errors.Is(err, search.ErrQuery))
	// Output:
	// true
	// answered: c1 a1 Without [fsync] a crash can lose what a save reported as written.
	// true 0
	// true
	// true
}
