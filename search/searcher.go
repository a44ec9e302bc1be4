package search

import (
	"context"

	"github.com/foliodev/folio/store/pgstore"
)

// Searcher is a search index: Index (SQLite, beside a data folder's logs)
// or PGIndex (in a PostgreSQL store, beside its records). Both read logs
// with history's Scanner, index the same text, parse the same queries and
// answer the same hits (one conformance suite runs on both).
type Searcher interface {
	// Search parses query and returns the best hits, catching up first
	// unless opts.NoCatchUp.
	Search(ctx context.Context, query string, opts Options) ([]Hit, error)
	// Run searches for a parsed query without catching up.
	Run(ctx context.Context, q Query, opts Options) ([]Hit, error)
	// CatchUp indexes what every log gained since it was read.
	CatchUp(ctx context.Context) (Stats, error)
	// Rebuild forgets everything and reads every log again.
	Rebuild(ctx context.Context) (Stats, error)
	// Update brings one conversation up to its log.
	Update(ctx context.Context, id string) error
	Close() error
}

var (
	_ Searcher = (*Index)(nil)
	_ Searcher = (*PGIndex)(nil)
)

// OpenFor opens the index of where conversations live: the PostgreSQL
// store when store is a *pgstore.Store or has one (a replica's Mirror),
// else the data folder dataDir.
func OpenFor(dataDir string, store any) (Searcher, error) {
	if st := pgStoreOf(store); st != nil {
		return OpenPostgres(st), nil
	}
	return Open(dataDir)
}

// pgStoreOf is store's PostgreSQL store, or nil.
func pgStoreOf(store any) *pgstore.Store {
	switch st := store.(type) {
	case *pgstore.Store:
		return st
	case interface{ Store() *pgstore.Store }:
		return st.Store()
	}
	return nil
}
