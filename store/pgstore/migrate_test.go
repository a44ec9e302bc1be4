package pgstore_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/search"
	"github.com/foliodev/folio/store/pgstore"
	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// TestMigration8RebuildsTheSearchIndex: a database at version 7 whose
// search index (a tsvector per row) claims to have read every log is
// migrated to 8, and the next search reads the logs again into the new
// tables, prefixes included.
func TestMigration8RebuildsTheSearchIndex(t *testing.T) {
	ctx := context.Background()
	// The logs, written by this folio in a schema of their own.
	src := pgtest.URL(t)
	a, err := pgstore.Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	l, err := history.OpenStore(a, "m")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d, err := transcript.NewDocument("m", []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "where did the heron go"}, Timestamp: at},
		{ID: "a1", Content: transcript.Agent{Markdown: "the heron flew north"}, Timestamp: at},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	u, err := url.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	from := pgx.Identifier{u.Query().Get("search_path")}.Sanitize()

	// A copy of them in a database at version 7, with an index that
	// claims to have read them and holds a word they do not have.
	dst := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := pgstore.MigrateTo(ctx, conn, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO folio_conversations SELECT * FROM `+from+`.folio_conversations;
		INSERT INTO folio_records SELECT * FROM `+from+`.folio_records;
		INSERT INTO folio_search_conversations (conversation_id, epoch, size, next_seq, head)
			SELECT id, epoch, size, next_seq, head FROM folio_conversations;
		INSERT INTO folio_search (conv, at, role, entry, body, terms)
			SELECT k, 0, 'prompt', 'u1', 'a stale egret', 'a egret stale'::tsvector FROM folio_search_conversations`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	b, err := pgstore.Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var typ string
	if err := b.Pool().QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'folio_search'::regclass AND attname = 'terms'`).Scan(&typ); err != nil || typ != "integer[]" {
		t.Fatalf("folio_search.terms is %q (%v); want integer[]", typ, err)
	}
	ix := search.OpenPostgres(b)
	defer ix.Close()
	for q, want := range map[string][]string{"heron": {"a1", "u1"}, "her*": {"a1", "u1"}, "north": {"a1"}, "egret": nil} {
		hits, err := ix.Search(ctx, q, search.Options{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Entry)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", q, got, want)
		}
	}
}
