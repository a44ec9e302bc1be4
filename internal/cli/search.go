package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/search"
	"github.com/foliodev/folio/tui"
)

func init() {
	register("log", newLogSearchCmd)
	register("log", newLogReindexCmd)
}

func newLogSearchCmd(stdio IO) *cobra.Command {
	var data, store string
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search every conversation's text",
		Long: "Search the prompts, answers, reasoning, tool calls, notices, failures and titles of every conversation in the data folder, " +
			"best match first (newest among equals), each with its conversation, entry and a snippet. The words of QUERY must all appear; " +
			`"a phrase" in quotes, pref* for a prefix, -word to leave out, and the filters role:prompt|answer|tool (and reasoning, notice, failure, title), ` +
			"conversation:ID, after:YYYY-MM-DD and before:YYYY-MM-DD narrow it. The index (<data>/search/index.db, or with --store the database's folio_search table) catches up with the logs first. " +
			"Open a hit with folio --resume ID, or in the web app at /c/ID?at=ENTRY.",
		Example: `folio log search migration postgres
folio log search '"connection refused"' role:tool
folio log search 'deploy* -staging after:2026-01-01' --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usage(cmd, "want a QUERY")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return logSearch(cmd, data, store, strings.Join(args, " "), asJSON, limit, stdio)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the hits as one JSON object")
	cmd.Flags().IntVar(&limit, "limit", search.DefaultLimit, fmt.Sprintf("at most this many hits (at most %d)", search.MaxLimit))
	dataFlag(cmd.Flags(), &data)
	storeFlag(cmd.Flags(), &store)
	return cmd
}

func newLogReindexCmd(stdio IO) *cobra.Command {
	var data, store string
	cmd := &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the search index from the logs",
		Long: "Forget everything the search index (<data>/search/index.db) holds and read every conversation log again. " +
			"The logs are the truth; the index is derived from them and is rebuilt by itself when it is missing or damaged, so this is rarely needed.",
		Example: "folio log reindex\nfolio log reindex --data ~/notes/folio\nfolio log reindex --store postgres://db.example/folio",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ix, done, err := openSearch(cmd, data, store)
			if err != nil {
				return err
			}
			defer done()
			start := time.Now()
			st, err := ix.Rebuild(cmd.Context())
			if err != nil {
				return failure(cmd, err)
			}
			for _, e := range st.Failed {
				fmt.Fprintf(stdio.Err, "folio: log reindex: left out %v\n", e)
			}
			_, err = fmt.Fprintf(stdio.Out, "indexed %d conversations, %d entries, %.1f MB of logs in %s\n",
				st.Read, st.Entries, float64(st.Bytes)/1e6, time.Since(start).Round(time.Millisecond))
			return err
		},
	}
	dataFlag(cmd.Flags(), &data)
	storeFlag(cmd.Flags(), &store)
	return cmd
}

// openSearch opens the search index of --store's database, or else of the
// data folder; done closes what it opened. Errors are the command's.
func openSearch(cmd *cobra.Command, data, store string) (ix search.Searcher, done func(), err error) {
	if url := storeURL(store); url != "" {
		st, err := openStore(cmd, url)
		if err != nil {
			return nil, nil, err
		}
		ix := search.OpenPostgres(st)
		return ix, func() { ix.Close(); st.Close() }, nil
	}
	dataDir, err := history.DataDir(data)
	if err != nil {
		return nil, nil, failure(cmd, err)
	}
	fix, err := search.Open(dataDir)
	if err != nil {
		return nil, nil, failure(cmd, err)
	}
	return fix, func() { fix.Close() }, nil
}

func logSearch(cmd *cobra.Command, data, store, query string, asJSON bool, limit int, stdio IO) error {
	if limit < 1 || limit > search.MaxLimit {
		return usage(cmd, "--limit %d: want 1 to %d", limit, search.MaxLimit)
	}
	if _, err := search.ParseQuery(query); err != nil {
		return usage(cmd, "%v", err)
	}
	ix, done, err := openSearch(cmd, data, store)
	if err != nil {
		return err
	}
	defer done()
	hits, err := ix.Search(cmd.Context(), query, search.Options{Limit: limit})
	if err != nil {
		if errors.Is(err, search.ErrQuery) {
			return usage(cmd, "%v", err)
		}
		return failure(cmd, err)
	}
	if asJSON {
		out := struct {
			Query string       `json:"query"`
			Hits  []search.Hit `json:"hits"`
		}{query, hits}
		if err := json.MarshalWrite(stdio.Out, out, json.Deterministic(true), jsontext.Multiline(false)); err != nil {
			return err
		}
		_, err := io.WriteString(stdio.Out, "\n")
		return err
	}
	if len(hits) == 0 {
		_, err := fmt.Fprintf(stdio.Out, "no conversation has %s\n", query)
		return err
	}
	open, close := "[", "]"
	if isTerminal(stdio.Out) {
		open, close = "\x1b[1;33m", "\x1b[0m"
	}
	var b strings.Builder
	for _, h := range hits {
		when := ""
		if !h.At.IsZero() {
			when = h.At.Local().Format("2006-01-02 15:04") + "  "
		}
		title := h.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(&b, "%s%s  %s\n", when, title, h.Role)
		snip := strings.Join(strings.Fields(h.SnippetText(open, close)), " ")
		fmt.Fprintf(&b, "  %s\n", snip)
		if h.Entry != "" {
			fmt.Fprintf(&b, "  folio --resume %s   /c/%s?at=%s\n", h.Conversation, h.Conversation, h.Entry)
		} else {
			fmt.Fprintf(&b, "  folio --resume %s\n", h.Conversation)
		}
	}
	_, err = io.WriteString(stdio.Out, b.String())
	return err
}

// search is the chat's /search: the data folder's index, caught up first.
func (s *chatSession) search(q string) ([]tui.SearchHit, error) {
	ix, err := search.Open(s.dataDir)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	hits, err := ix.Search(context.Background(), q, search.Options{Limit: 50})
	if err != nil {
		return nil, err
	}
	out := make([]tui.SearchHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, tui.SearchHit{Conversation: h.Conversation, Title: h.Title, Entry: h.Entry, Role: h.Role, At: h.At,
			Snippet: h.SnippetText(tui.SearchMarks[0], tui.SearchMarks[1]), Words: hitWords(h)})
	}
	return out, nil
}

// hitWords are the words a hit's snippet marks, one by one (a phrase's
// words too, so a line break inside it does not hide the mark).
func hitWords(h search.Hit) []string {
	var out []string
	for _, s := range h.Snippet {
		if s.Hit {
			out = append(out, strings.Fields(s.Text)...)
		}
	}
	return out
}

// find is the chat's ctrl+f: the query's hits in the current conversation,
// newest first. The index is brought up to this conversation's log only,
// its newest hits are read unranked (search.Options.Newest), and their
// positions come from one look at the log's page index, so the view reads
// the page around each hit and nothing else of the conversation.
func (s *chatSession) find(query string) (tui.FindResult, error) {
	q, err := search.ParseQuery(query)
	if err != nil {
		return tui.FindResult{}, err
	}
	s.mu.Lock()
	id, path := s.id, s.path // s.log is nil while attached
	s.mu.Unlock()
	q.Conversation = id
	ix, err := search.Open(s.dataDir)
	if err != nil {
		return tui.FindResult{}, err
	}
	defer ix.Close()
	ctx := context.Background()
	if err := ix.Update(ctx, id); err != nil {
		return tui.FindResult{}, err
	}
	hits, err := ix.Run(ctx, q, search.Options{Newest: true, Limit: search.MaxFind})
	if err != nil {
		return tui.FindResult{}, err
	}
	res := tui.FindResult{More: len(hits) == search.MaxFind}
	if len(hits) == 0 {
		return res, nil
	}
	pos, done, err := positions(path)
	if err != nil {
		return tui.FindResult{}, err
	}
	defer done()
	for _, h := range hits {
		if h.Entry == "" {
			continue // the title
		}
		at, err := pos(h.Entry)
		if err != nil {
			return tui.FindResult{}, err
		}
		if at < 0 {
			continue // not in the head any more
		}
		res.Hits = append(res.Hits, tui.FindHit{Entry: h.Entry, Pos: at, Words: hitWords(h)})
	}
	// The index's order is the order entries were indexed; the
	// conversation's is what a person steps through.
	slices.SortStableFunc(res.Hits, func(a, b tui.FindHit) int { return cmp.Compare(b.Pos, a.Pos) })
	return res, nil
}
