package pgstore

import (
	"os"
	"slices"
	"time"

	"github.com/foliodev/folio/history"
)

// Bounding the copies. A replica copies a conversation when a request
// names it, and from then on its listener keeps the copy current. Copies
// nobody uses are dropped: every recoverEvery the listener drops each copy
// that no Hold keeps, no writer of this replica has open, and no request
// named for copyIdle, and then the least recently named ones beyond
// maxCopies. A dropped conversation is copied afresh from the database
// when a request names it again.

// copyIdle is how long an unused copy is kept.
const copyIdle = 10 * time.Minute

// maxCopies bounds the copies kept of conversations not in use.
const maxCopies = 1000

// Hold keeps conversation id's copy (the server holds the copies of the
// conversations it has live state for) until as many Release calls.
func (m *Mirror) Hold(id string) {
	c := m.conv(id)
	c.mu.Lock()
	c.holds++
	c.used = time.Now()
	c.mu.Unlock()
}

// Release undoes a Hold.
func (m *Mirror) Release(id string) {
	c := m.conv(id)
	c.mu.Lock()
	c.holds--
	c.used = time.Now()
	c.mu.Unlock()
}

// setBounds sets copyIdle and maxCopies (tests).
func (m *Mirror) setBounds(idle time.Duration, most int) {
	m.mu.Lock()
	m.copyIdle, m.maxCopies = idle, most
	m.mu.Unlock()
}

// Copies is how many conversations the mirror keeps copies of.
func (m *Mirror) Copies() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.convs)
}

// sweep drops the copies nobody uses (see the section comment).
func (m *Mirror) sweep() {
	type cand struct {
		id   string
		used time.Time
	}
	m.mu.Lock()
	ids := make([]string, 0, len(m.convs))
	for id := range m.convs {
		ids = append(ids, id)
	}
	idle, most := m.copyIdle, m.maxCopies
	m.mu.Unlock()
	var free []cand
	for _, id := range ids {
		if m.owns(id) {
			continue
		}
		m.mu.Lock()
		c := m.convs[id]
		m.mu.Unlock()
		if c == nil {
			continue
		}
		c.mu.Lock()
		if c.holds <= 0 {
			free = append(free, cand{id, c.used})
		}
		c.mu.Unlock()
	}
	slices.SortFunc(free, func(a, b cand) int { return b.used.Compare(a.used) }) // newest first
	for i, f := range free {
		if i >= most || time.Since(f.used) > idle {
			m.drop(f.id, f.used)
		}
	}
}

// drop forgets conversation id's copy, last used at used, unless it came
// into use meanwhile (held, written here, or named again since).
func (m *Mirror) drop(id string, used time.Time) {
	m.mu.Lock()
	c := m.convs[id]
	m.mu.Unlock()
	if c == nil {
		return
	}
	// A copy's lock comes before the mirror's (as in Sync).
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holds > 0 || m.owns(id) || c.used.After(used) {
		return
	}
	m.mu.Lock()
	if m.convs[id] == c {
		delete(m.convs, id)
	}
	m.mu.Unlock()
	if p, err := m.Path(id); err == nil {
		os.Remove(p)
		os.Remove(history.SummaryPath(p))
	}
}
