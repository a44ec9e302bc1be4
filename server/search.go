package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/foliodev/folio/search"
)

// searchAnswer is GET /api/v2/search's answer (protocol.schema.json's
// searchAnswer): the best hits first.
type searchAnswer struct {
	Query string       `json:"query"`
	Hits  []search.Hit `json:"hits"`
}

// searchConversations answers GET /api/v2/search?q=QUERY&limit=N over the
// data folder's search index (package search), which it brings up to the
// logs first. A malformed query is 400 bad-query, saying what is wrong; a
// query that runs past its time bound is 503 search-timeout.
func (s *Server) searchConversations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	// order=newest lists the newest matches first, unranked: the web
	// app's next and previous hit inside one conversation, up to
	// search.MaxFind of them.
	newest := false
	switch o := r.URL.Query().Get("order"); o {
	case "", "rank":
	case "newest":
		newest = true
	default:
		httpError(w, http.StatusBadRequest, "bad-request", "order must be rank or newest, not "+strconv.Quote(o))
		return
	}
	limit, most := search.DefaultLimit, search.MaxLimit
	if newest {
		most = search.MaxFind
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > most {
			httpError(w, http.StatusBadRequest, "bad-request", "limit must be 1 to "+strconv.Itoa(most))
			return
		}
		limit = n
	}
	if _, err := search.ParseQuery(q); err != nil {
		httpError(w, http.StatusBadRequest, "bad-query", err.Error())
		return
	}
	// A replica's conversations live in its PostgreSQL store, and so does
	// their index.
	ix, err := search.OpenFor(s.opts.DataDir, s.opts.Replica)
	if err != nil {
		s.opts.Logger.Error("search index", "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot open the search index")
		return
	}
	defer ix.Close()
	hits, err := ix.Search(r.Context(), q, search.Options{Limit: limit, Newest: newest})
	switch {
	case errors.Is(err, search.ErrTimeout):
		httpError(w, http.StatusServiceUnavailable, "search-timeout", "the search took too long; narrow it with more words or a filter")
		return
	case err != nil:
		s.opts.Logger.Error("search", "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "search failed")
		return
	}
	// With accounts, a person finds only in conversations they may open.
	visible, err := s.visibleFilter(r.Context())
	if err != nil {
		s.opts.Logger.Error("cannot read owners", "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "search failed")
		return
	}
	mine := hits[:0]
	for _, h := range hits {
		if visible(h.Conversation) {
			mine = append(mine, h)
		}
	}
	writeJSON(w, http.StatusOK, searchAnswer{Query: q, Hits: mine})
}
