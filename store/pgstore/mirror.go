package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foliodev/folio/history"
)

// Replicas. Several folio servers share one database; each keeps a local
// copy of every conversation it serves, a log file in its own data folder
// holding exactly the database's bytes, so its paging, snapshots and log
// follower work on a local file as they do without a database. A Mirror
// keeps those copies current:
//
//   - a writer on this replica (OpenLog) writes to the database under the
//     conversation's lease and, once the transaction committed, the same
//     records to the local copy;
//   - every append notifies AppendsChannel with "<epoch> <seq> <size> <id>";
//     Run listens, and brings the copy of each conversation it mirrors up
//     to date from the sequence number it last applied (Follow), so a
//     record is never skipped nor applied twice, and after a reconnect it
//     catches every mirrored conversation up the same way;
//   - a writer on this replica opens the log's tail through the copy and
//     its page index (ReadCopy), having brought the copy to where the
//     conversation's row says the log is, instead of reading every record
//     from the database.

// AppendsChannel is the channel every append notifies.
const AppendsChannel = "folio_appends"

// Mirror keeps a replica's local copies of conversations. Its methods are
// safe for concurrent use. It is a server.Replica, whose jobs it keeps
// apart: the copies (server.ReplicaSync: mirror.go, bound.go), the
// database's logs (ReplicaStore: mirror_store.go, blob.go), the command inbox
// (ReplicaInbox: inbox.go), streaming (ReplicaLive: live.go) and health
// (ReplicaHealth: status.go).
type Mirror struct {
	s   *Store
	dir string // the replica's data folder
	log *slog.Logger

	in  inbox   // forwarded commands (inbox.go)
	out liveOut // streaming messages (live.go)

	listener atomic.Uint32 // the listening connection's server process (tests end it)
	// recoverEvery is how often Run calls Recover (tests shorten it).
	recoverEvery time.Duration
	// copyIdle and maxCopies bound the copies kept (bound.go); guarded
	// by mu.
	copyIdle  time.Duration
	maxCopies int

	mu    sync.Mutex
	convs map[string]*mirrored
	// onChange, when set, is told after a copy changed (the server pokes
	// its follower so tabs see it without waiting for a tick); onDeleted
	// after a copy was dropped because the conversation was deleted.
	onChange, onDeleted func(id string)
	// writers are the media this replica opened (OpenLog) and has not
	// closed, whether their lease holds or not (Recover may have taken a
	// lost one's conversation over meanwhile).
	writers map[*teeMedium]struct{}

	// down: the listener lost the database and has not reconnected yet
	// (status.go).
	down        atomic.Bool
	statusMu    sync.Mutex // serializes onStatus calls
	onStatus    func(reachable bool, lost []string)
	onLeaseLost func(id string) // status.go
	// onWriterDied, when set, is told of each conversation this replica
	// serves whose writer's database session ended holding it (Recover).
	onWriterDied func(id string)
}

// mirrored is one conversation's copy: how far it has applied the log.
type mirrored struct {
	mu         sync.Mutex
	epoch, seq int64
	size       int64
	synced     bool      // epoch and seq describe the local file
	used       time.Time // the last Sync (a request that named it)
	holds      int       // Hold minus Release
}

// NewMirror keeps copies under dir/conversations.
func NewMirror(s *Store, dir string, log *slog.Logger) *Mirror {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Mirror{s: s, dir: dir, log: log, convs: map[string]*mirrored{}, recoverEvery: recoverEvery,
		copyIdle: copyIdle, maxCopies: maxCopies}
}

// OnDeleted sets the function told after a copy was dropped because its
// conversation is no longer in the database.
func (m *Mirror) OnDeleted(f func(id string)) {
	m.mu.Lock()
	m.onDeleted = f
	m.mu.Unlock()
}

// Store is the database the mirror copies from.
func (m *Mirror) Store() *Store { return m.s }

// OnChange sets the function told after a copy changed.
func (m *Mirror) OnChange(f func(id string)) {
	m.mu.Lock()
	m.onChange = f
	m.mu.Unlock()
}

func (m *Mirror) conv(id string) *mirrored {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.convs[id]
	if c == nil {
		c = &mirrored{}
		m.convs[id] = c
	}
	return c
}

func (m *Mirror) changed(id string) {
	m.mu.Lock()
	f := m.onChange
	m.mu.Unlock()
	if f != nil {
		f(id)
	}
}

// Path is the local copy of conversation id.
func (m *Mirror) Path(id string) (string, error) { return history.Path(m.dir, id) }

// Sync brings the local copy of id up to the database and keeps it current
// from then on (Run). A conversation the database does not have has no
// copy: one left from before is removed.
func (m *Mirror) Sync(ctx context.Context, id string) error {
	c := m.conv(id)
	c.mu.Lock()
	c.used = time.Now()
	c.mu.Unlock()
	return m.sync(ctx, id)
}

// sync is Sync without counting it as a use of the copy (the listener's
// catch-up).
func (m *Mirror) sync(ctx context.Context, id string) error {
	p, err := m.Path(id)
	if err != nil {
		return err
	}
	c := m.conv(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	return m.syncLocked(ctx, id, p, c)
}

// syncLocked is sync with c (id's copy, at p) locked.
func (m *Mirror) syncLocked(ctx context.Context, id, p string, c *mirrored) error {
	epoch, seq := c.epoch, c.seq
	if !c.synced {
		epoch = -1 // read it whole: whatever the file holds is rewritten
	}
	t, err := m.s.Follow(ctx, id, epoch, seq)
	if errors.Is(err, fs.ErrNotExist) {
		if c.synced || fileExists(p) {
			os.Remove(p)
			os.Remove(history.SummaryPath(p))
			c.synced, c.size = false, 0
			m.changed(id)
			m.mu.Lock()
			f := m.onDeleted
			m.mu.Unlock()
			if f != nil {
				f(id)
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.applyLocked(p, t); err != nil {
		c.synced = false
		return err
	}
	if t.Reset || len(t.Records) > 0 {
		m.changed(id)
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// applyLocked writes a Tail to the local copy at p.
func (c *mirrored) applyLocked(p string, t Tail) error {
	if t.Reset {
		if len(t.Records) == 0 {
			// A row without records yet: no log.
			os.Remove(p)
		} else if err := writeFile(p, t.Records); err != nil {
			return err
		}
		c.epoch, c.seq, c.size, c.synced = t.Epoch, t.Seq, int64(len(t.Records)), true
		return nil
	}
	if len(t.Records) == 0 {
		return nil
	}
	if t.Offset != c.size {
		return fmt.Errorf("pgstore: mirror of %s: records at byte %d, the copy has %d", p, t.Offset, c.size)
	}
	if err := appendFile(p, t.Records); err != nil {
		return err
	}
	c.seq, c.size = t.Seq, c.size+int64(len(t.Records))
	return nil
}

// writeFile replaces p with data through a temporary file and a rename, so
// a reader sees the old copy or the new one.
func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp := p + ".mirror"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// appendFile appends whole records in one write. The copy is a cache of
// the database: it is not fsynced, and a replica that restarts rewrites it.
func appendFile(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

var _ history.CopyMedium = (*teeMedium)(nil)

// Run listens for appends until ctx ends and keeps every mirrored copy
// current. When the connection drops it reconnects (backing off up to
// five seconds) and catches every copy up before listening on. Every
// recoverEvery it also runs Recover.
func (m *Mirror) Run(ctx context.Context) error {
	sent := make(chan struct{})
	defer func() { <-sent }()
	go func() { m.send(ctx); close(sent) }()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		listened, err := m.listen(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if listened {
			backoff = 100 * time.Millisecond // it worked until now: retry soon
		}
		m.setDown()
		m.log.Warn("database listener", "err", err, "retry", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	return nil
}

// listen is one connection's life: LISTEN, catch up, then apply
// notifications as they come.
func (m *Mirror) listen(ctx context.Context) (listened bool, err error) {
	cfg := m.s.cfg.Copy()
	cfg.RuntimeParams["application_name"] = listenerApp // counted by changes that need every replica (authcache.go)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	m.listener.Store(conn.PgConn().PID())
	for _, ch := range []string{AppendsChannel, inboxChannel, receiptsChannel, liveChannel, authChannel} {
		if _, err := conn.Exec(ctx, `LISTEN `+ch); err != nil {
			return false, err
		}
	}
	// From here every change of a session or owner is heard: the caches
	// may answer, until this connection is lost (authcache.go).
	ac := m.s.auth()
	ac.up()
	defer ac.down()
	// Whatever was appended while nobody listened.
	m.mu.Lock()
	ids := make([]string, 0, len(m.convs))
	for id := range m.convs {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	for _, id := range ids {
		if err := m.sync(ctx, id); err != nil {
			m.log.Warn("replica catch-up", "conversation", id, "err", err)
		}
	}
	m.pending(ctx)
	m.setUp(ctx)
	next := time.Now().Add(m.recoverEvery)
	for {
		if time.Now().After(next) {
			m.probeWriters(ctx)
			m.sweep()
			if err := m.Recover(ctx); err != nil {
				m.log.Warn("replica recovery", "err", err)
			}
			next = time.Now().Add(m.recoverEvery)
		}
		wctx, cancel := context.WithDeadline(ctx, next)
		n, err := conn.WaitForNotification(wctx)
		woke := wctx.Err() != nil
		cancel()
		if err != nil && ctx.Err() == nil && woke && !conn.IsClosed() {
			// Time to look for dead writers. A database that went away
			// without a word (a network partition) leaves the connection
			// looking open: ask it, so the replica says it is unreachable.
			pctx, cancel := context.WithTimeout(ctx, listenerPing)
			err := conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				return true, fmt.Errorf("pgstore: the listener's connection does not answer: %w", err)
			}
			continue
		}
		if err != nil {
			return true, err
		}
		if n.Channel == liveChannel {
			m.liveNoteIn(ctx, n.Payload)
			continue
		}
		if n.Channel == authChannel {
			if ack := ac.note(n.Payload); ack != "" {
				go m.s.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_notify($1, $2)`, authChannel, ack)
			}
			continue
		}
		if n.Channel != AppendsChannel {
			var in note
			if json.Unmarshal([]byte(n.Payload), &in) == nil {
				m.inboxNote(ctx, in)
			}
			continue
		}
		epoch, seq, id, ok := parseNote(n.Payload)
		if !ok {
			continue
		}
		if epoch < 0 {
			ac.owners.Drop(id) // deleted: its owner goes with it
		}
		m.mu.Lock()
		c := m.convs[id]
		m.mu.Unlock()
		if c == nil {
			continue // not served here
		}
		c.mu.Lock()
		current := c.synced && c.epoch == epoch && c.seq >= seq
		c.mu.Unlock()
		if current {
			continue // this replica wrote it, or already read it
		}
		if err := m.sync(ctx, id); err != nil {
			m.log.Warn("replica sync", "conversation", id, "err", err)
		}
	}
}

// parseNote reads "<epoch> <seq> <size> <id>".
func parseNote(p string) (epoch, seq int64, id string, ok bool) {
	f := strings.SplitN(p, " ", 4)
	if len(f) != 4 {
		return 0, 0, "", false
	}
	var err1, err2 error
	epoch, err1 = strconv.ParseInt(f[0], 10, 64)
	seq, err2 = strconv.ParseInt(f[1], 10, 64)
	return epoch, seq, f[3], err1 == nil && err2 == nil
}

// recoverEvery is how often Run looks for conversations whose writer died.
const recoverEvery = 5 * time.Second

// listenerPing bounds the listener's check that its connection answers,
// made every recoverEvery.
const listenerPing = 5 * time.Second

// Recover finds the conversations this replica serves whose writer died
// holding them (a lease row whose database session is gone), and loads
// each under its lease: history settles an answer that writer left
// half-written as interrupted, and the append reaches every replica's tabs.
// A conversation another writer holds again is left alone.
func (m *Mirror) Recover(ctx context.Context) error {
	rows, err := m.s.pool.Query(ctx, `SELECT conversation_id FROM folio_leases l
		WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a
			WHERE a.pid = l.backend_pid AND a.backend_start <= l.since)`) // a reused PID started later
	if err != nil {
		return fmt.Errorf("pgstore: recover: %w", err)
	}
	var dead []string
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			dead = append(dead, id)
		}
	}
	rows.Close()
	var errs []error
	for _, id := range dead {
		m.mu.Lock()
		_, served := m.convs[id]
		died := m.onWriterDied
		m.mu.Unlock()
		if !served {
			continue
		}
		if died != nil {
			died(id) // whichever replica recovers it, the turn ran there
		}
		errs = append(errs, m.recoverOne(id))
	}
	return errors.Join(errs...)
}

// OnWriterDied sets the function told, from Recover, of a conversation
// this replica serves whose writer's database session ended while it held
// the lease: a replica that died (killed, or its machine gone). What that
// writer's engine relayed as running, queued or waiting ran nowhere any
// more. The function is told before the conversation is recovered, on
// every replica that serves it, and again at the next Recover if no
// replica could recover it.
func (m *Mirror) OnWriterDied(f func(id string)) {
	m.mu.Lock()
	m.onWriterDied = f
	m.mu.Unlock()
}

// recoverOne loads conversation id under its lease, which its last writer
// lost, so that an answer it left half-written is recorded as interrupted.
func (m *Mirror) recoverOne(id string) error {
	l, err := m.OpenLog(id)
	if errors.Is(err, history.ErrLocked) {
		return nil // taken over already
	}
	if err != nil {
		return err
	}
	c, err := l.Load()
	if err == nil && c.Interrupted {
		m.log.Info("recorded an answer its writer left unfinished", "conversation", id, "writer", l.TookOverFrom())
	}
	return errors.Join(err, l.Close())
}
