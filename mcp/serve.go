package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/search"
	"github.com/foliodev/folio/transcript"
)

// Bounds of the history tools' answers.
const (
	serveListMax  = 200     // conversations per list or search answer
	servePageMax  = 200     // entries per page
	servePageSize = 50      // entries per page by default
	serveTextMax  = 4 << 10 // bytes of one entry's text
)

// conversation is one conversation as the history tools list it.
type conversation struct {
	ID        string    `json:"id"`
	Title     string    `json:"title,omitempty"`
	Entries   int       `json:"entries"`
	Messages  int       `json:"messages"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// conversationList is the answer of list_conversations and search_titles.
type conversationList struct {
	Conversations []conversation `json:"conversations"`
	Total         int            `json:"total"`
	Next          int            `json:"next,omitempty"` // offset of the next page; 0 when there is none
}

// entryView is one entry of a conversation, reduced to what another agent
// reads: its kind and text (a tool entry's receipt), bounded.
type entryView struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Text      string `json:"text,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Status    string `json:"status,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// entryPage is the answer of read_conversation.
type entryPage struct {
	ID      string      `json:"id"`
	Title   string      `json:"title,omitempty"`
	Total   int         `json:"total"`
	Offset  int         `json:"offset"`
	Entries []entryView `json:"entries"`
	Next    int         `json:"next,omitempty"`
}

type listArgs struct {
	Offset int `json:"offset,omitempty" jsonschema:"how many conversations to skip, newest first"`
	Limit  int `json:"limit,omitempty" jsonschema:"at most this many (default and bound 200)"`
}

type readArgs struct {
	ID     string `json:"id" jsonschema:"the conversation ID from list_conversations"`
	Offset int    `json:"offset,omitempty" jsonschema:"index of the first entry"`
	Limit  int    `json:"limit,omitempty" jsonschema:"entries per page (default 50, at most 200)"`
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"words that must all appear in the title, any case"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many (default and bound 200)"`
}

// Source is where the history server reads conversations: a data
// folder's logs, or a store (a PostgreSQL store, pgstore) with the search
// index that lives in it.
type Source struct {
	// Data is the data folder, used when Store is nil.
	Data string
	// Store holds the conversations instead of Data's logs.
	Store history.Store
	// Index is Store's search index (search.OpenPostgres), used by the
	// search tool when Store is set.
	Index search.Searcher
}

// list lists the source's conversations, newest first.
func (src Source) list() ([]history.Summary, error) {
	if src.Store == nil {
		return history.List(src.Data)
	}
	list, err := src.Store.List()
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].UpdatedAt.After(list[j].UpdatedAt) })
	return list, nil
}

// read reads conversation id whole.
func (src Source) read(id string) (*history.Conversation, error) {
	if src.Store == nil {
		path, err := history.Path(src.Data, id)
		if err != nil {
			return nil, fmt.Errorf("no conversation %q: %w", id, err)
		}
		return history.ReadFile(path)
	}
	return history.ReadStore(src.Store, id)
}

// newHistoryServer returns an MCP server whose tools read the
// conversations of the data folder dataDir: list_conversations,
// read_conversation, search and search_titles.
func newHistoryServer(dataDir, version string) *sdk.Server {
	return newSourceServer(Source{Data: dataDir}, version)
}

// newSourceServer returns the history server over src. Its tools only
// read, through package history's listing and reader, and take no log's
// lock.
func newSourceServer(src Source, version string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "folio-history", Version: version}, nil)
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(s, &sdk.Tool{Name: "list_conversations", Annotations: ro,
		Description: "List folio's conversations, newest first, with title, entry count and last update."},
		func(_ context.Context, _ *sdk.CallToolRequest, a listArgs) (*sdk.CallToolResult, conversationList, error) {
			all, err := conversations(src)
			if err != nil {
				return nil, conversationList{}, err
			}
			return nil, window(all, a.Offset, a.Limit), nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "search_titles", Annotations: ro,
		Description: "Find folio conversations whose title contains every word of the query (any case), newest first."},
		func(_ context.Context, _ *sdk.CallToolRequest, a searchArgs) (*sdk.CallToolResult, conversationList, error) {
			all, err := conversations(src)
			if err != nil {
				return nil, conversationList{}, err
			}
			words := strings.Fields(strings.ToLower(a.Query))
			var hits []conversation
			for _, c := range all {
				t := strings.ToLower(c.Title)
				ok := len(words) > 0
				for _, w := range words {
					ok = ok && strings.Contains(t, w)
				}
				if ok {
					hits = append(hits, c)
				}
			}
			return nil, window(hits, 0, a.Limit), nil
		})
	addSearch(s, src, ro)
	sdk.AddTool(s, &sdk.Tool{Name: "read_conversation", Annotations: ro,
		Description: "Read one page of a folio conversation's entries (user and agent text, reasoning, tool receipts)."},
		func(_ context.Context, _ *sdk.CallToolRequest, a readArgs) (*sdk.CallToolResult, entryPage, error) {
			p, err := readPage(src, a)
			return nil, p, err
		})
	return s
}

// ServeSource runs the history server over src (folio mcp serve passes
// stdio, and the data folder or --store's database as src) until the
// client disconnects or ctx ends.
func ServeSource(ctx context.Context, src Source, version string, t sdk.Transport) error {
	return newSourceServer(src, version).Run(ctx, t)
}

func conversations(src Source) ([]conversation, error) {
	list, err := src.list()
	if err != nil {
		return nil, err
	}
	out := make([]conversation, 0, len(list))
	for _, s := range list {
		if s.Err != nil {
			continue
		}
		out = append(out, conversation{ID: s.ID, Title: s.Title, Entries: s.Entries, Messages: s.Messages, UpdatedAt: s.UpdatedAt})
	}
	return out, nil
}

func window(all []conversation, off, limit int) conversationList {
	if limit <= 0 || limit > serveListMax {
		limit = serveListMax
	}
	off = min(max(off, 0), len(all))
	end := min(off+limit, len(all))
	l := conversationList{Conversations: all[off:end], Total: len(all)}
	if l.Conversations == nil {
		l.Conversations = []conversation{}
	}
	if end < len(all) {
		l.Next = end
	}
	return l
}

func readPage(src Source, a readArgs) (entryPage, error) {
	conv, err := src.read(a.ID)
	if err != nil {
		return entryPage{}, fmt.Errorf("conversation %q: %w", a.ID, err)
	}
	es := conv.Document.Entries()
	limit := a.Limit
	if limit <= 0 {
		limit = servePageSize
	}
	limit = min(limit, servePageMax)
	off := min(max(a.Offset, 0), len(es))
	end := min(off+limit, len(es))
	p := entryPage{ID: a.ID, Title: conv.Title, Total: len(es), Offset: off, Entries: make([]entryView, 0, end-off)}
	for _, e := range es[off:end] {
		p.Entries = append(p.Entries, view(e))
	}
	if end < len(es) {
		p.Next = end
	}
	return p, nil
}

func view(e transcript.Entry) entryView {
	v := entryView{ID: e.ID, Kind: string(e.Content.Kind())}
	switch c := e.Content.(type) {
	case transcript.User:
		v.Text = c.Text
	case transcript.Agent:
		v.Text = c.Markdown
	case transcript.Reasoning:
		v.Text = c.Text
	case transcript.Steering:
		v.Text = c.Text
	case transcript.Notice:
		v.Text = c.Text
	case transcript.Failure:
		v.Text = strings.TrimSpace(c.Headline + "\n" + c.Detail)
	case transcript.Tool:
		v.Tool, v.Status, v.Text = c.Receipt.App, string(c.Receipt.Status), c.Receipt.Summary
	}
	if t, cut := clip(v.Text, serveTextMax); cut {
		v.Text, v.Truncated = t, true
	}
	return v
}
