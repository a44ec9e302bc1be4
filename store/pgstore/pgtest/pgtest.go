// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema in the cluster FOLIO_TEST_DATABASE_URL names (start one with
// .ci/pg-start), dropped when the test ends. Without the variable a test is
// skipped, except where the suites are required (CI=true or
// FOLIO_REQUIRE_SUITES=1), where it fails.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// required reports whether the PostgreSQL suites must run rather than be
// skipped.
func required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("FOLIO_REQUIRE_SUITES") == "1"
}

// BaseURL is FOLIO_TEST_DATABASE_URL, or skips (fails where required).
func BaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("FOLIO_TEST_DATABASE_URL")
	if u == "" {
		if required() {
			t.Fatal("FOLIO_TEST_DATABASE_URL is required here (CI=true or FOLIO_REQUIRE_SUITES=1); start a cluster with .ci/pg-start")
		}
		t.Skip("set FOLIO_TEST_DATABASE_URL to run the PostgreSQL suites (eval \"$(.ci/pg-start --export)\")")
	}
	return u
}

var schemas atomic.Int64

// URL creates a schema for this test and returns the database URL that
// makes it the search path.
func URL(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to FOLIO_TEST_DATABASE_URL: %v", err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), schemas.Add(1))
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+name+` CASCADE; CREATE SCHEMA `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, `DROP SCHEMA `+name+` CASCADE`)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
