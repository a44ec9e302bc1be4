package pgstore

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/auth"
)

// accountsVersion is the migration that added accounts, found by what it
// makes (never by number: later migrations may follow).
func accountsVersion(t *testing.T) int {
	for i, m := range migrations {
		if strings.Contains(m, "CREATE TABLE IF NOT EXISTS folio_sessions") {
			return i + 1
		}
	}
	t.Fatal("no migration makes folio_sessions")
	return 0
}

// A database from before accounts (a copy of today's data imported into it)
// migrates, the conversation keeps its records and has no owner (it is
// the admins'), and running the migration again changes nothing.
func TestAccountsMigration(t *testing.T) {
	u := freshURL(t)
	s := newTestStoreAt(t, u)
	data, err := os.ReadFile("../../history/testdata/linear-before-branches.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.Import(s, "c-old00001", data, nil); err != nil {
		t.Fatal(err)
	}
	before, _, err := s.ReadLog("c-old00001")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v := accountsVersion(t)
	// Back to the schema before accounts: the migration's objects go, as
	// on a database an older folio made.
	if _, err := s.pool.Exec(ctx, `DROP TABLE folio_sessions, folio_shares; ALTER TABLE folio_conversations DROP COLUMN owner`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM folio_schema WHERE version >= $1`, v); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s2 := newTestStoreAt(t, u)
		if o, err := s2.Owner("c-old00001"); err != nil || o != "" {
			t.Fatalf("an older conversation's owner: %q %v", o, err)
		}
		after, _, err := s2.ReadLog("c-old00001")
		if err != nil || string(after) != string(before) {
			t.Fatalf("the log changed in the migration: %v", err)
		}
		// Re-running the migration on a migrated schema is harmless.
		if _, err := s2.pool.Exec(ctx, migrations[v-1]); err != nil {
			t.Fatalf("the accounts migration again: %v", err)
		}
	}
	if err := s.SetOwner("c-old00001", "id2"); err != nil {
		t.Fatal(err)
	}
	if all, err := s.AllOwners(); err != nil || all["c-old00001"] != "id2" {
		t.Fatalf("owners after assigning: %v %v", all, err)
	}
}

func TestSessionsStore(t *testing.T) {
	s := newTestStore(t)
	x := NewSessions(s)
	ctx := context.Background()
	key := strings.Repeat("ab", 32)
	if _, err := x.Get(ctx, key); err != auth.ErrNoSession {
		t.Fatalf("an unknown session: %v", err)
	}
}
