package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions, applied in order, each in its own
// transaction together with its row in folio_schema. A migration is never
// edited once released; a change is a new one at the end.
var migrations = []string{
	// 1: conversations, their records, receipts and leases.
	`CREATE TABLE folio_conversations (
		id          text PRIMARY KEY,
		-- The listing as the last writer saw it; NULL entries: unknown,
		-- read the log to list it.
		title       text NOT NULL DEFAULT '',
		head        text NOT NULL DEFAULT 'main',
		version     int,
		entries     int,
		messages    int,
		problems    int,
		listed_at   timestamptz,
		created_at  timestamptz NOT NULL DEFAULT now(),
		updated_at  timestamptz NOT NULL DEFAULT now(),
		-- size: the log's length in bytes (records and their newlines);
		-- next_seq: the sequence number of the next record; epoch: bumped
		-- when the log is replaced (upgrade, compaction), so a follower
		-- knows to read it afresh.
		size        bigint NOT NULL DEFAULT 0,
		next_seq    bigint NOT NULL DEFAULT 1,
		epoch       bigint NOT NULL DEFAULT 0
	);
	CREATE TABLE folio_records (
		conversation_id text   NOT NULL REFERENCES folio_conversations (id) ON DELETE CASCADE,
		seq             bigint NOT NULL,
		off             bigint NOT NULL, -- the record's byte offset in the log
		body            bytea  NOT NULL, -- the record's exact text, without its newline
		PRIMARY KEY (conversation_id, seq)
	);
	CREATE TABLE folio_commands (
		conversation_id text   NOT NULL REFERENCES folio_conversations (id) ON DELETE CASCADE,
		n               bigserial,
		body            bytea  NOT NULL, -- one receipt, as history writes it
		PRIMARY KEY (conversation_id, n)
	);
	CREATE TABLE folio_leases (
		conversation_id text PRIMARY KEY,
		owner       text NOT NULL,
		pid         int  NOT NULL,
		backend_pid int  NOT NULL,
		since       timestamptz NOT NULL DEFAULT now()
	);`,
	// 2: commands forwarded to the replica that owns a conversation.
	`CREATE TABLE folio_inbox (
		conversation_id text NOT NULL,
		command_id      text NOT NULL,
		body            bytea NOT NULL, -- the command as the sending server encoded it
		sender          text NOT NULL,
		claimed_by      text,           -- the owner that took it; NULL while waiting
		receipt         bytea,          -- the latest receipt the owner gave
		created_at      timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (conversation_id, command_id)
	);`,
	// 3: attachments and artifacts. Bytes are stored once per
	// conversation by digest; names refer to them. Both go with their
	// conversation.
	`CREATE TABLE folio_blobs (
		conversation_id text   NOT NULL REFERENCES folio_conversations (id) ON DELETE CASCADE,
		digest          text   NOT NULL, -- sha256 of body, lowercase hex
		size            bigint NOT NULL,
		body            bytea  NOT NULL,
		PRIMARY KEY (conversation_id, digest)
	);
	CREATE TABLE folio_blob_names (
		conversation_id text  NOT NULL,
		kind            text  NOT NULL CHECK (kind IN ('attachment', 'artifact')),
		name            text  NOT NULL,
		digest          text  NOT NULL,
		meta            bytea,          -- the owner's description (an attachment's JSON)
		created_at      timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (conversation_id, kind, name),
		FOREIGN KEY (conversation_id, digest) REFERENCES folio_blobs (conversation_id, digest) ON DELETE CASCADE
	);
	CREATE INDEX folio_blob_names_digest ON folio_blob_names (conversation_id, digest);`,
	// 4: streaming messages too large for NOTIFY's
	// payload (live.go), kept a minute.
	`CREATE TABLE folio_live (
		n               bigserial PRIMARY KEY,
		conversation_id text  NOT NULL,
		body            bytea NOT NULL,
		created_at      timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX folio_live_created ON folio_live (created_at);
	-- The listing's remaining columns, so a replica lists without reading
	-- logs; NULL until the next writer notes them. The log's start and
	-- last update as RFC 3339 text, to the nanosecond the log holds
	-- (timestamptz keeps microseconds).
	ALTER TABLE folio_conversations ADD COLUMN started text, ADD COLUMN updated text, ADD COLUMN branched boolean;`,
	// 5: the search index (package search), derived from the records and
	// rebuilt from them whenever it is missing or behind. Per
	// conversation, how far it was read (the log's epoch and size), and
	// one row per entry of its head with the text a person sees and its
	// terms, which package search folds and positions itself (so both of
	// its back ends find the same words) and writes as a tsvector.
	`CREATE TABLE folio_search_conversations (
		conversation_id text PRIMARY KEY REFERENCES folio_conversations (id) ON DELETE CASCADE,
		epoch       bigint NOT NULL,
		size        bigint NOT NULL,
		next_seq    bigint NOT NULL DEFAULT 0, -- the first record not read, so a catch-up seeks by the primary key
		head        text NOT NULL DEFAULT '',
		title       text NOT NULL DEFAULT '',
		first       text NOT NULL DEFAULT '' -- the first prompt's first line, a title for untitled ones
	);
	CREATE TABLE folio_search (
		n               bigserial PRIMARY KEY,
		conversation_id text NOT NULL REFERENCES folio_search_conversations (conversation_id) ON DELETE CASCADE,
		entry           text NOT NULL, -- '' for the title
		role            text NOT NULL,
		at              bigint NOT NULL, -- Unix milliseconds; 0 when unknown
		body            text NOT NULL,   -- the text, for snippets
		terms           tsvector NOT NULL,
		UNIQUE (conversation_id, entry)
	);
	CREATE INDEX folio_search_terms ON folio_search USING gin (terms);`,
	// 6: the search index again, smaller and quicker to query. Derived
	// data, so the tables of migration 5 are dropped and the next
	// catch-up reads every log again. A row names its conversation by a
	// small integer key rather than by its ID, and its terms are only the
	// lexemes, without positions (package search checks phrases in the
	// entry's text and ranks by length): a tsvector repeats every lexeme
	// in every row, and positions doubled it. The GIN index's pending list
	// is kept small, since every query reads all of it.
	`DROP TABLE folio_search;
	DROP TABLE folio_search_conversations;
	CREATE TABLE folio_search_conversations (
		conversation_id text PRIMARY KEY REFERENCES folio_conversations (id) ON DELETE CASCADE,
		k           integer GENERATED ALWAYS AS IDENTITY UNIQUE, -- the key rows use
		epoch       bigint NOT NULL,
		size        bigint NOT NULL,
		next_seq    bigint NOT NULL DEFAULT 0, -- the first record not read, so a catch-up seeks by the primary key
		head        text NOT NULL DEFAULT '',
		title       text NOT NULL DEFAULT '',
		first       text NOT NULL DEFAULT '' -- the first prompt's first line, a title for untitled ones
	);
	CREATE TABLE folio_search (
		n     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- order of indexing: larger is newer
		conv  integer NOT NULL REFERENCES folio_search_conversations (k) ON DELETE CASCADE,
		at    bigint NOT NULL, -- Unix milliseconds; 0 when unknown
		role  text NOT NULL,
		entry text NOT NULL, -- '' for the title
		body  text NOT NULL, -- the text, for snippets and phrases
		terms tsvector NOT NULL, -- its lexemes, without positions
		UNIQUE (conv, entry)
	);
	CREATE INDEX folio_search_terms ON folio_search USING gin (terms) WITH (gin_pending_list_limit = 256);`,
	// 7: accounts (folio serve --oidc-issuer). Sessions by the SHA-256 of
	// their cookie, never the cookie; each conversation's owner (NULL: from
	// before accounts, the admins'); share links by the SHA-256 of their
	// token, gone with their conversation.
	`CREATE TABLE IF NOT EXISTS folio_sessions (
		key        text PRIMARY KEY,
		body       bytea NOT NULL, -- the session as package auth encodes it
		expires    timestamptz NOT NULL
	);
	CREATE INDEX IF NOT EXISTS folio_sessions_expires ON folio_sessions (expires);
	ALTER TABLE folio_conversations ADD COLUMN IF NOT EXISTS owner text;
	CREATE TABLE IF NOT EXISTS folio_shares (
		key             text PRIMARY KEY,
		conversation_id text NOT NULL REFERENCES folio_conversations (id) ON DELETE CASCADE,
		id              text NOT NULL UNIQUE, -- a public name for listing and revoking
		created_by      text NOT NULL,
		created_at      timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX IF NOT EXISTS folio_shares_conversation ON folio_shares (conversation_id);`,
	// 8: the search index's terms as 32-bit hashes of the folded words
	// (package search's wordHash, FNV-1a) in a sorted int4[] rather than a
	// tsvector of the words: a tsvector repeats every word's text in every
	// row, and was as large as the texts themselves. Derived data again:
	// the rows are dropped and how far each log was read is forgotten, so
	// the next catch-up reads every log. A hash no longer says which words
	// start with a prefix, so folio_search_words lists every word indexed,
	// in byte order (COLLATE "C") so that a prefix is a range of its
	// primary key. The GIN index's pending list stays small, as in 6.
	`DROP TABLE folio_search;
	TRUNCATE folio_search_conversations;
	CREATE TABLE folio_search (
		n     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- order of indexing: larger is newer
		conv  integer NOT NULL REFERENCES folio_search_conversations (k) ON DELETE CASCADE,
		at    bigint NOT NULL, -- Unix milliseconds; 0 when unknown
		role  text NOT NULL,
		entry text NOT NULL, -- '' for the title
		body  text NOT NULL, -- the text, for snippets, phrases and prefixes
		terms int4[] NOT NULL, -- the hashes of its distinct folded words, ascending
		UNIQUE (conv, entry)
	);
	CREATE INDEX folio_search_terms ON folio_search USING gin (terms) WITH (gin_pending_list_limit = 256);
	-- Every folded word a row had, never deleted with the rows (a word no
	-- row has expands to a hash that matches nothing; so the migration
	-- run again may keep it).
	CREATE TABLE IF NOT EXISTS folio_search_words (
		word text COLLATE "C" PRIMARY KEY
	);`,
}

// schemaLock is the advisory lock key that serializes migrations.
const schemaLock = int64(0x666f6c696f) // "folio"

// migrate brings the schema to the newest version, under schemaLock so that
// replicas starting together run each migration once.
func migrate(ctx context.Context, conn *pgx.Conn) error {
	return migrateTo(ctx, conn, len(migrations))
}

// migrateTo is migrate up to version to (tests make older databases).
func migrateTo(ctx context.Context, conn *pgx.Conn, to int) (err error) {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, schemaLock); err != nil {
		return fmt.Errorf("pgstore: lock the schema: %w", err)
	}
	defer func() {
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, schemaLock); err == nil && uerr != nil {
			err = fmt.Errorf("pgstore: unlock the schema: %w", uerr)
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS folio_schema (
		version    int PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("pgstore: schema table: %w", err)
	}
	var have int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM folio_schema`).Scan(&have); err != nil {
		return fmt.Errorf("pgstore: schema version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("%w (database at version %d, this folio knows %d)", ErrSchemaNewer, have, len(migrations))
	}
	for v := have + 1; v <= to; v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO folio_schema (version) VALUES ($1)`, v)
			return err
		})
		if err != nil {
			return fmt.Errorf("pgstore: migration %d: %w", v, err)
		}
	}
	return nil
}

// schemaVersion is the schema version this folio migrates to.
func schemaVersion() int { return len(migrations) }
