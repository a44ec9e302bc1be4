package pgstore

import (
	"context"
	"slices"
)

// Reachability. The listener's connection is the replica's watch on the
// database: when it drops, the Mirror reports the database unreachable;
// when it is back (LISTEN again, every mirrored copy caught up from the
// sequence it last applied, the inbox read), reachable. A database that
// restarted ended every session, so each lease this replica held is gone
// with it: the Mirror probes its writers' connections and names those
// that ended, whose owners must reopen them.

// Reachable reports whether the listener is connected to the database
// (true until it first loses it).
func (m *Mirror) Reachable() bool { return !m.down.Load() }

// OnStatus sets the function told when the database becomes unreachable
// (reachable false) and when it is back (reachable true, with lost naming
// the conversations whose lease this replica held and lost meanwhile).
// Calls are serialized.
func (m *Mirror) OnStatus(f func(reachable bool, lost []string)) {
	m.statusMu.Lock()
	m.onStatus = f
	m.statusMu.Unlock()
}

func (m *Mirror) setDown() {
	if m.down.Swap(true) {
		return
	}
	m.log.Warn("database unreachable")
	m.statusMu.Lock()
	defer m.statusMu.Unlock()
	if m.onStatus != nil {
		m.onStatus(false, nil)
	}
}

// setUp is called once the listener is connected and caught up.
func (m *Mirror) setUp(ctx context.Context) {
	if !m.down.Load() {
		return
	}
	lost := m.lostWriters(ctx)
	m.down.Store(false)
	m.log.Info("database reachable again", "lost leases", len(lost))
	m.statusMu.Lock()
	defer m.statusMu.Unlock()
	if m.onStatus != nil {
		m.onStatus(true, lost)
	}
}

// lostWriters names the conversations this replica has a writer open on
// whose lease connection ended.
func (m *Mirror) lostWriters(ctx context.Context) []string {
	m.mu.Lock()
	ws := make([]*teeMedium, 0, len(m.writers))
	for w := range m.writers {
		ws = append(ws, w)
	}
	m.mu.Unlock()
	var lost []string
	for _, w := range ws {
		if !w.Medium.alive(ctx) {
			lost = append(lost, w.id)
		}
	}
	slices.Sort(lost)
	return slices.Compact(lost)
}

// A lease can also end while the listener stays connected: its session
// alone was ended (pg_terminate_backend, an idle-session timeout, a
// proxy). The listener asks every writer's connection every recoverEvery
// whether it answers (on its own goroutine, so never while an outage's
// recovery runs); the owner of one that does not is told (OnLeaseLost) so
// it closes that writer, and the conversation is then loaded under a new
// lease, which records an answer the writer left half-saved as
// interrupted.

// OnLeaseLost sets the function told that the lease of a writer this
// replica opened on conversation id ended while the database answers. It
// must close that writer (the one whose lease ended) before it returns.
func (m *Mirror) OnLeaseLost(f func(id string)) {
	m.statusMu.Lock()
	m.onLeaseLost = f
	m.statusMu.Unlock()
}

// probeWriters asks each open writer's connection whether it answers.
func (m *Mirror) probeWriters(ctx context.Context) {
	m.mu.Lock()
	ws := make([]*teeMedium, 0, len(m.writers))
	for w := range m.writers {
		ws = append(ws, w)
	}
	m.mu.Unlock()
	for _, w := range ws {
		if !w.Medium.alive(ctx) {
			go m.leaseLost(w)
		}
	}
}

// leaseLost tells the owner, once per writer, that w's lease ended, and
// records what w left unfinished.
func (m *Mirror) leaseLost(w *teeMedium) {
	if w.told.Swap(true) {
		return
	}
	// Under statusMu, as the outage's recovery (setUp) tells its lost
	// leases: whichever comes second finds the writer closed.
	m.statusMu.Lock()
	if m.down.Load() || w.closed.Load() {
		// The outage's recovery handles it, or the writer's owner closed
		// it already (and the function would close its successor).
		m.statusMu.Unlock()
		return
	}
	m.log.Warn("a writer lease ended", "conversation", w.id)
	if m.onLeaseLost != nil {
		m.onLeaseLost(w.id)
	}
	m.statusMu.Unlock()
	if err := m.recoverOne(w.id); err != nil {
		m.log.Warn("replica recovery", "conversation", w.id, "err", err)
	}
}
