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
