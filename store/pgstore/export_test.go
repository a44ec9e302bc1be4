package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// MigrateTo brings conn's schema up to version to only, so a test can make
// a database as an older folio left it.
func MigrateTo(ctx context.Context, conn *pgx.Conn, to int) error { return migrateTo(ctx, conn, to) }
