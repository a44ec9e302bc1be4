package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/search"
)

// searchAnswer is the answer of the search tool: the best hits first.
type searchAnswer struct {
	Query string       `json:"query"`
	Hits  []search.Hit `json:"hits"`
}

type fullSearchArgs struct {
	Query string `json:"query" jsonschema:"words that must all appear; \"a phrase\", prefix*, -excluded, role:prompt|answer|tool, conversation:ID, after:YYYY-MM-DD, before:YYYY-MM-DD"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many hits (default 20, at most 200)"`
}

// addSearch adds the search tool: full text over every conversation's
// entries through the search index of src (package search: the data
// folder's, or the store's), which it brings up to the logs first.
func addSearch(s *sdk.Server, src Source, ro *sdk.ToolAnnotations) {
	sdk.AddTool(s, &sdk.Tool{Name: "search", Annotations: ro,
		Description: "Search the text of every folio conversation (prompts, answers, reasoning, tool calls, notices, titles), " +
			"best match first, each hit with its conversation ID, entry ID and a snippet; read around a hit with read_conversation."},
		func(ctx context.Context, _ *sdk.CallToolRequest, a fullSearchArgs) (*sdk.CallToolResult, searchAnswer, error) {
			if _, err := search.ParseQuery(a.Query); err != nil {
				return nil, searchAnswer{}, err
			}
			ix := src.Index
			if ix == nil {
				fix, err := search.OpenFor(src.Data, src.Store)
				if err != nil {
					return nil, searchAnswer{}, err
				}
				defer fix.Close()
				ix = fix
			}
			hits, err := ix.Search(ctx, a.Query, search.Options{Limit: a.Limit})
			if err != nil {
				return nil, searchAnswer{}, err
			}
			return nil, searchAnswer{Query: a.Query, Hits: hits}, nil
		})
}
