package search

import (
	"context"
	"sync"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore"
	"github.com/foliodev/folio/store/pgstore/pgtest"
)

// The conformance suite: the tests that take an env run on both back ends,
// the data folder's SQLite index and a PostgreSQL store's index (in the
// throwaway cluster .ci/pg-start makes; skipped without
// FOLIO_TEST_DATABASE_URL, failing without it where the suites are
// required, as pgtest says).

// env is one back end under test: where conversations are written and the
// index over them.
type env struct {
	t     *testing.T
	store history.Store
	index func() Searcher
	// data is the data folder (files only), for file-level checks.
	data string
}

var pgMu sync.Mutex

// pgStore opens a store in a schema of its own. Leases are advisory locks
// of the whole cluster, and the tests share conversation IDs: one
// PostgreSQL test at a time.
func pgStore(t *testing.T) *pgstore.Store {
	t.Helper()
	url := pgtest.URL(t)
	pgMu.Lock()
	t.Cleanup(pgMu.Unlock)
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// backends runs f once per back end, as subtests named for them.
func backends(t *testing.T, f func(t *testing.T, e env)) {
	t.Run("files", func(t *testing.T) {
		t.Parallel()
		data := newData(t)
		f(t, env{t: t, store: history.Files{Dir: data}, data: data, index: func() Searcher { return openIndex(t, data) }})
	})
	t.Run("postgres", func(t *testing.T) {
		st := pgStore(t)
		f(t, env{t: t, store: st, index: func() Searcher {
			ix := OpenPostgres(st)
			t.Cleanup(func() { ix.Close() })
			return ix
		}})
	})
}

// convo opens conversation id of the env's store for writing.
func (e env) convo(id string) *convo {
	e.t.Helper()
	var l *history.Log
	var err error
	if e.data != "" {
		path, perr := history.Path(e.data, id)
		if perr != nil {
			e.t.Fatal(perr)
		}
		l, err = history.Open(path)
	} else {
		l, err = history.OpenStore(e.store, id)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { l.Close() })
	return &convo{t: e.t, id: id, log: l}
}

// read is history's reading of conversation id.
func (e env) read(id string) (*history.Conversation, error) {
	return history.ReadStore(e.store, id)
}
