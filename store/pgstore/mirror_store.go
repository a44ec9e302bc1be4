package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/history"
)

// This file is the Mirror's ReplicaStore job: the database's conversations
// as a replica writes and lists them. A log is opened for writing through a
// tee that writes the database first and then the local copy.

// OpenLog opens conversation id for writing under its lease; what it
// writes reaches the local copy as soon as the database has it.
func (m *Mirror) OpenLog(id string, opts ...history.Option) (*history.Log, error) {
	tm, err := m.openTee(id)
	if err != nil {
		return nil, err
	}
	return history.OpenMedium(tm, id, opts...), nil
}

// openTee takes id's lease and returns the medium OpenLog writes through.
func (m *Mirror) openTee(id string) (*teeMedium, error) {
	p, err := m.Path(id)
	if err != nil {
		return nil, err
	}
	pm, err := m.s.OpenMedium(id)
	if err != nil {
		return nil, err
	}
	m.own(id, 1)
	tm := &teeMedium{Medium: pm, m: m, id: id, path: p}
	m.mu.Lock()
	if m.writers == nil {
		m.writers = map[*teeMedium]struct{}{}
	}
	m.writers[tm] = struct{}{}
	m.mu.Unlock()
	return tm, nil
}

// teeMedium is a lease's medium that also writes its committed records to
// the replica's copy.
type teeMedium struct {
	*Medium
	m      *Mirror
	id     string
	path   string
	closed atomic.Bool
	told   atomic.Bool // leaseLost was told about this writer
}

func (t *teeMedium) Append(records []byte) error { return t.write(records, false) }

// Close releases the lease; this replica no longer owns the conversation.
func (t *teeMedium) Close() error {
	err := t.Medium.Close()
	if !t.closed.Swap(true) {
		t.m.own(t.id, -1)
		t.m.mu.Lock()
		delete(t.m.writers, t)
		t.m.mu.Unlock()
	}
	return err
}

func (t *teeMedium) Replace(data []byte) error { return t.write(data, true) }

func (t *teeMedium) write(data []byte, replace bool) error {
	c := t.m.conv(t.id)
	c.mu.Lock()
	defer c.mu.Unlock()
	pos, err := t.Medium.writeAt(data, replace)
	if err != nil {
		return err
	}
	tail := Tail{Epoch: pos.newEpoch, Seq: pos.seq}
	switch {
	case replace:
		tail.Reset, tail.Records = true, data
	case !pos.fresh && c.synced && c.epoch == pos.epoch && c.size == pos.size:
		tail.Records, tail.Offset = data, pos.size
	default:
		// A copy that is not at the point this write continued: made
		// afresh from the database (this lease's connection, so exactly
		// what was just committed).
		full, err := t.Medium.readCommitted(context.Background())
		if err != nil {
			c.synced = false
			return nil // the database has the records; the next Sync copies them
		}
		tail.Reset, tail.Records = true, full
	}
	if err := c.applyLocked(t.path, tail); err != nil {
		c.synced = false
		t.m.log.Warn("replica copy", "conversation", t.id, "err", err)
	}
	t.m.changed(t.id)
	return nil
}

// ReadCopy reads the log through this replica's copy of it
// (history.CopyMedium), so an engine opening the conversation reads its
// tail through the copy's page index instead of every record from the
// database. The conversation's row, read under the lease, says where the
// log is; the copy is brought there from the sequence number it last
// applied (Follow: only what is new), and its index up to the copy. read
// then runs under the copy's lock, which every change to the copy takes
// (the listener's appends and renames, the tee's writes, the sweep), so
// it reads one whole copy of exactly that log. Under the lease the log
// cannot move meanwhile; a copy that cannot be brought there (the lease
// was lost and another writer went on) is errCopyElsewhere, and the log is
// read from the database, where a lost lease says so.
func (t *teeMedium) ReadCopy(read func(path string, size int64) error) error {
	ctx, cancel := t.s.ctx()
	defer cancel()
	pos, err := t.Medium.position(ctx)
	if err != nil {
		return err
	}
	c := t.m.conv(t.id)
	c.mu.Lock()
	c.used = time.Now() // an engine opening it: kept as a request's (Sync)
	if !c.at(pos) {
		err = t.m.syncLocked(ctx, t.id, t.path, c)
	}
	at := c.at(pos)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if !at {
		return fmt.Errorf("%w (%s)", errCopyElsewhere, t.Name())
	}
	// The tail read would bring the index up itself, but under the
	// copy's lock; a copy without an index takes a pass over it, which
	// must not hold up the listener, so it is done here, unlocked.
	indexCopy(t.path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(pos) {
		return fmt.Errorf("%w (%s)", errCopyElsewhere, t.Name())
	}
	if err := read(t.path, pos.size); err != nil {
		return err
	}
	t.Medium.readAt(pos)
	copyTails.Add(1)
	return nil
}

// at reports whether the copy holds the log at p.
func (c *mirrored) at(p logPos) bool {
	return c.synced && c.epoch == p.epoch && c.seq == p.next-1 && c.size == p.size
}

// indexCopy brings the page index beside the copy at p up to the copy,
// best effort: by what was appended since (history.OpenIndex extends it),
// or in one pass over the copy when it has none or one of another file.
func indexCopy(p string) {
	f, err := os.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	if ix, err := history.OpenIndex(p, f, 0); err == nil {
		ix.Close()
	}
}

// Commands reads conversation id's command receipts from the database,
// each command's last.
func (m *Mirror) Commands(id string) ([]history.CommandRecord, error) {
	data, err := m.s.Commands(id)
	if err != nil {
		return nil, fmt.Errorf("pgstore: receipts of %s: %w", id, err)
	}
	return history.DecodeCommands(data), nil
}

// List lists the database's conversations.
func (m *Mirror) List() ([]history.Summary, error) { return m.s.List() }

// Delete deletes id from the database and its local copy.
func (m *Mirror) Delete(id string) error {
	if err := m.s.Delete(id); err != nil {
		return err
	}
	return m.Sync(context.Background(), id)
}

// Create writes a new conversation's first line (its header) under the
// lease; history.ErrLocked or an error naming an existing log if another
// has it.
func (m *Mirror) Create(id string, header []byte) error {
	pm, err := m.s.OpenMedium(id)
	if err != nil {
		return err
	}
	defer pm.Close()
	if _, err := pm.Read(); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			err = fs.ErrExist
		}
		return fmt.Errorf("create %s: %w", id, err)
	}
	if err := pm.Replace(header); err != nil {
		return err
	}
	return m.Sync(context.Background(), id)
}
