package pgstore

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/history/storetest"
	"github.com/foliodev/folio/store/pgstore/pgtest"
)

func freshURL(t testing.TB) string { return pgtest.URL(t) }

func newTestStore(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), freshURL(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// terminate ends a backend as a crash would, and waits until it is gone.
func terminate(t testing.TB, s *Store, pid uint32) {
	t.Helper()
	var ok bool
	if err := s.pool.QueryRow(context.Background(), `SELECT pg_terminate_backend($1, 10000)`, int32(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d): %v %v", pid, ok, err)
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) history.Store { return newTestStore(t) },
		Crash: func(t *testing.T, hs history.Store, k int) func() bool {
			return crashAt(t, hs.(*Store), k)
		},
		Kill: func(t *testing.T, m history.Medium) {
			pm := m.(*Medium)
			terminate(t, pm.s, pm.BackendPID())
		},
	})
}

// crashAt ends a save's database session just before its statement k, once;
// the func it returns stops that and reports whether it fired.
func crashAt(t *testing.T, s *Store, k int) func() bool {
	var fired bool
	s.step = func(m *Medium, i int) {
		if i == k && !fired {
			fired = true
			terminate(t, s, m.BackendPID())
		}
	}
	return func() bool { s.step = nil; return fired }
}

// TestConformanceThroughReplicaCopies runs the suite on the media a
// replica's writers use (Mirror.OpenLog's), which write the local copy
// after each commit and read a log's tail through it (ReadCopy).
func TestConformanceThroughReplicaCopies(t *testing.T) {
	pgtest.BaseURL(t) // skips here without a database, not in each subtest
	tails := copyTails.Load()
	defer func() {
		if copyTails.Load() == tails {
			t.Error("no tail was read through a copy")
		}
	}()
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) history.Store {
			s := newTestStore(t)
			return replicaStore{s, NewMirror(s, t.TempDir(), nil)}
		},
		Crash: func(t *testing.T, hs history.Store, k int) func() bool {
			return crashAt(t, hs.(replicaStore).Store, k)
		},
		Kill: func(t *testing.T, m history.Medium) {
			pm := m.(*teeMedium).Medium
			terminate(t, pm.s, pm.BackendPID())
		},
	})
}

// replicaStore is a Store whose media are a replica's writers'.
type replicaStore struct {
	*Store
	m *Mirror
}

func (r replicaStore) Open(id string) (history.Medium, error) { return r.m.openTee(id) }

// Replicas starting at once migrate the schema once, and each sees it
// complete.
func TestMigrationsFromManyReplicasAtOnce(t *testing.T) {
	u := freshURL(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := Open(context.Background(), u)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s := newTestStoreAt(t, u)
	var n, v int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*), max(version) FROM folio_schema`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != schemaVersion() || v != schemaVersion() {
		t.Fatalf("folio_schema has %d rows up to version %d; want %d", n, v, schemaVersion())
	}
	// A database migrated by a newer folio is refused.
	if _, err := s.pool.Exec(context.Background(), `INSERT INTO folio_schema (version) VALUES ($1)`, schemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), u); err == nil {
		t.Fatal("opened a database with a newer schema")
	}
}

func newTestStoreAt(t testing.TB, u string) *Store {
	t.Helper()
	s, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A writer whose lease connection ended writes nothing more, and the next
// writer learns who died holding the conversation.
func TestLeaseLostFencesTheWriter(t *testing.T) {
	s := newTestStore(t, WithTimeout(20*time.Second))
	l, err := history.OpenStore(s, "c1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m, _ := s.OpenMedium("c2")
	defer m.Close()
	if err := l.SetTitle("first"); err != nil {
		t.Fatal(err)
	}
	var pid int32
	if err := s.pool.QueryRow(context.Background(), `SELECT backend_pid FROM folio_leases WHERE conversation_id = 'c1'`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	terminate(t, s, uint32(pid))
	l2, err := history.OpenStore(s, "c1")
	if err != nil {
		t.Fatalf("the lease was not freed by the dead connection: %v", err)
	}
	defer l2.Close()
	if l2.TookOverFrom() != os.Getpid() {
		t.Fatalf("TookOverFrom %d, want this process %d", l2.TookOverFrom(), os.Getpid())
	}
	if err := l2.SetTitle("second"); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle("late"); err == nil {
		t.Fatal("the writer whose lease ended wrote on")
	}
	c, err := history.ReadStore(s, "c1")
	if err != nil || c.Title != "second" {
		t.Fatalf("title %q %v", c.Title, err)
	}
}
