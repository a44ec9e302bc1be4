package transcript

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Store is the single writer of one conversation's source document and live
// state. Producers write through leases (see Lease); views read the Snapshot
// values it publishes. Its methods are safe for concurrent use.
type Store struct {
	ids    *IDSource
	now    func() time.Time
	pacing Pacing

	mu     sync.Mutex
	st     state
	subs   []*Subscription
	timers map[*Timer]struct{} // lease timers of the current generation

	cur atomic.Pointer[Snapshot]
}

// state is everything a Snapshot is made of. Its parts are values or
// copy-on-write, so a transaction can work on a copy and drop it on error.
type state struct {
	doc  Document
	gen  uint64
	live Live
}

// Option configures a Store.
type Option func(*Store)

// WithPacing sets how stream writers reveal text; the zero Pacing reveals
// accepted text at once. The default is DefaultPacing.
func WithPacing(p Pacing) Option { return func(s *Store) { s.pacing = p } }

// WithDocument starts the store on d instead of an empty document.
func WithDocument(d Document) Option { return func(s *Store) { s.st.doc = d } }

// NewStore returns a store holding an empty document (or the one given with
// WithDocument) at generation 1.
func NewStore(opts ...Option) *Store {
	s := &Store{now: time.Now, pacing: DefaultPacing, timers: map[*Timer]struct{}{}}
	s.st.gen = 1
	for _, o := range opts {
		o(s)
	}
	if s.ids == nil {
		s.ids = NewIDSource()
	}
	s.observeAll(s.st.doc)
	s.mu.Lock()
	s.publishLocked()
	s.mu.Unlock()
	return s
}

// Snapshot returns the latest published snapshot.
func (s *Store) Snapshot() Snapshot { return *s.cur.Load() }

// IDs returns the source the store mints entry IDs from.
func (s *Store) IDs() *IDSource { return s.ids }

// Lease returns a lease on the current document lifetime.
func (s *Store) Lease() Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Lease{s: s, gen: s.st.gen}
}

// LeaseAt returns a lease on generation gen, which is retired from the
// start unless gen is current. A view acting on what it showed uses the
// generation of the snapshot it showed, so its action cannot land on a
// document that replaced it in the meantime.
func (s *Store) LeaseAt(gen uint64) Lease { return Lease{s: s, gen: gen} }

// Replace makes d the source document in one transaction: the generation
// advances, every outstanding lease retires (their timers are stopped and
// their later writes fail with ErrLeaseRetired), and the per-lifetime live
// state (activity, retry, expanded detail, reveal cursors, child regions,
// prompt context) starts over. The model and the session totals carry on.
func (s *Store) Replace(d Document) Snapshot { return s.newLifetime(d, false) }

// Clear starts an empty document with the given ID, like Replace, and also
// zeroes the session totals: a cleared conversation is a new session.
func (s *Store) Clear(docID string) Snapshot { return s.newLifetime(Document{id: docID}, true) }

// Hydrate loads a saved document, like Clear. Hydrating the same history
// again still starts a new generation; reading positions do not survive.
// Saved entries keep their IDs, and IDs minted afterwards never repeat them.
//
// A resumed conversation is settled history: an entry that was open when it
// was saved (a reply cut off mid-stream) is settled with the text it had,
// and nothing resumes writing to it.
func (s *Store) Hydrate(d Document) Snapshot {
	for d.Settled() < d.Len() {
		// The first entry past the settled prefix is always open.
		next, err := d.Settle(d.At(d.Settled()).ID, nil)
		if err != nil {
			break // cannot happen for an open entry; keep what we have
		}
		d = next
	}
	return s.newLifetime(d, true)
}

func (s *Store) newLifetime(d Document, newSession bool) Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.timers {
		t.t.Stop()
	}
	clear(s.timers)
	s.observeAll(d)
	old := s.st.live
	s.st = state{doc: d, gen: s.st.gen + 1, live: Live{Model: old.Model, Totals: old.Totals, turn: old.turn}}
	if newSession {
		s.st.live.Totals, s.st.live.turn = Usage{}, nil
	}
	s.publishLocked()
	return *s.cur.Load()
}

// observeAll moves the ID counter past every ID of d in the store's
// namespace, so minting never repeats a saved ID. It reads each ID once,
// when a document is installed, instead of looking every new ID up.
func (s *Store) observeAll(d Document) {
	for _, e := range d.All() {
		s.ids.observe(e.ID)
	}
}

func (s *Store) publishLocked() {
	snap := &Snapshot{Document: s.st.doc, Generation: s.st.gen, Live: s.st.live}
	s.cur.Store(snap)
	for _, sub := range s.subs {
		sub.offer(*snap)
	}
}

// Subscription delivers coalesced snapshots. Its channel holds at most one
// snapshot, always the newest: a burst of writes while the reader is busy
// leaves exactly one snapshot waiting, and it is the last one. A reader
// therefore never sees every intermediate state but always sees the final
// one.
type Subscription struct {
	s *Store
	c chan Snapshot
}

// Subscribe returns a subscription whose channel already holds the current
// snapshot.
func (s *Store) Subscribe() *Subscription {
	sub := &Subscription{s: s, c: make(chan Snapshot, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	sub.c <- *s.cur.Load()
	s.subs = append(s.subs, sub)
	return sub
}

// C returns the channel snapshots arrive on. It is closed by Close.
func (sub *Subscription) C() <-chan Snapshot { return sub.c }

// Close stops deliveries and closes the channel. It is safe to call twice.
func (sub *Subscription) Close() {
	s := sub.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.subs, sub); i >= 0 {
		s.subs = slices.Delete(s.subs, i, i+1)
		close(sub.c)
	}
}

// offer replaces whatever is waiting in the channel with snap. Only the
// store sends, and only while holding its lock, so after the slot is
// emptied the second send cannot block; a reader that takes the old value
// concurrently just leaves the slot empty sooner.
func (sub *Subscription) offer(snap Snapshot) {
	select {
	case sub.c <- snap:
		return
	default:
	}
	select {
	case <-sub.c:
	default:
	}
	sub.c <- snap
}

// Timer is a timer owned by a lease. It is stopped when its lease retires,
// and a callback already on its way when that happens does not run.
type Timer struct {
	s *Store
	t *time.Timer
}

// Stop prevents the callback from running, if it has not started. It
// reports whether it stopped it.
func (t *Timer) Stop() bool {
	t.s.mu.Lock()
	delete(t.s.timers, t)
	t.s.mu.Unlock()
	return t.t.Stop()
}
