package transcript

import (
	"fmt"
	"time"
)

// Lease is a producer's right to write to one document lifetime (one
// generation). Every producer takes one before it starts: a stream writer, a
// tool run that will report its completion, the turn loop that will append
// the receipt, a timer. When the store's document is replaced, cleared or
// hydrated the lease retires, and every write made through it afterwards is
// dropped with ErrLeaseRetired, so late work from one conversation can never
// land in the next. Work for the new document takes a new lease.
//
// A Lease is a small value; copies are the same lease. The zero Lease is
// not usable.
type Lease struct {
	s   *Store
	gen uint64
}

// Generation is the document lifetime the lease writes to.
func (l Lease) Generation() uint64 { return l.gen }

// Active reports whether the lease's lifetime is still current. A write may
// still fail if the document is replaced after this returns; the write
// itself is what is checked.
func (l Lease) Active() bool {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	return l.gen == l.s.st.gen
}

// Do runs fn as one transaction: if fn returns nil, everything it changed is
// published together in a single snapshot; if it returns an error, nothing
// changes. If the lease has retired, fn does not run and Do returns
// ErrLeaseRetired.
//
// fn runs while the store is locked: it must not call methods of the store,
// of a lease or of a writer, and the Tx must not be kept after it returns.
func (l Lease) Do(fn func(tx *Tx) error) error {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.gen != s.st.gen {
		return ErrLeaseRetired
	}
	tx := Tx{s: s, st: s.st}
	if err := fn(&tx); err != nil {
		return err
	}
	if tx.dirty {
		s.st = tx.st
		s.publishLocked()
	}
	return nil
}

// AfterFunc runs f after d unless the lease has retired by then. The timer
// is stopped when the lease retires, and a callback that was already due
// checks the lease before it runs; f's own writes through the lease are
// checked again, so work it does after a replacement is dropped too.
func (l Lease) AfterFunc(d time.Duration, f func()) (*Timer, error) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.gen != s.st.gen {
		return nil, ErrLeaseRetired
	}
	t := &Timer{s: s}
	t.t = time.AfterFunc(d, func() {
		s.mu.Lock()
		_, armed := s.timers[t]
		delete(s.timers, t)
		current := l.gen == s.st.gen
		s.mu.Unlock()
		if armed && current {
			f()
		}
	})
	s.timers[t] = struct{}{}
	return t, nil
}

// Append adds a settled entry with a new ID and returns the ID.
func (l Lease) Append(c Content) (id string, err error) {
	err = l.Do(func(tx *Tx) error { id, err = tx.Append(c); return err })
	return id, err
}

// Open adds an open entry (a running tool, say) with a new ID.
func (l Lease) Open(c Content) (id string, err error) {
	err = l.Do(func(tx *Tx) error { id, err = tx.Open(c); return err })
	return id, err
}

// Update changes the content of the open entry id.
func (l Lease) Update(id string, c Content) error {
	return l.Do(func(tx *Tx) error { return tx.Update(id, c) })
}

// Settle settles the open entry id, with content c or, if c is nil, with
// what it holds.
func (l Lease) Settle(id string, c Content) error {
	return l.Do(func(tx *Tx) error { return tx.Settle(id, c) })
}

// SetActivity sets the main activity.
func (l Lease) SetActivity(a Activity) error {
	return l.Do(func(tx *Tx) error { tx.SetActivity(a); return nil })
}

// SetModel sets the model shown in the main footer.
func (l Lease) SetModel(m string) error {
	return l.Do(func(tx *Tx) error { tx.SetModel(m); return nil })
}

// SetPromptContext sets the main prompt-context token count.
func (l Lease) SetPromptContext(n int64) error {
	return l.Do(func(tx *Tx) error { return tx.SetPromptContext(n) })
}

// SetRetry sets or (with the zero Retry) clears the pending retry.
func (l Lease) SetRetry(r Retry) error {
	return l.Do(func(tx *Tx) error { tx.SetRetry(r); return nil })
}

// SetExpanded opens or closes the detail of entry id.
func (l Lease) SetExpanded(id string, on bool) error {
	return l.Do(func(tx *Tx) error { return tx.SetExpanded(id, on) })
}

// AddUsage adds main-agent usage to the session totals.
func (l Lease) AddUsage(u Usage) error {
	return l.Do(func(tx *Tx) error { return tx.AddUsage(u) })
}

// Stream returns a writer for one streamed model reply in the main
// document. See StreamWriter.
func (l Lease) Stream() *StreamWriter {
	return &StreamWriter{l: l, pacing: l.s.pacing}
}

// Tx is one transaction on the store, handed to the function given to
// Lease.Do. It works on a private copy of the state; nothing is visible to
// readers until the function returns nil.
type Tx struct {
	s     *Store
	st    state
	dirty bool
}

// Document returns the main document as the transaction has it so far.
func (tx *Tx) Document() Document { return tx.st.doc }

// Live returns the live state as the transaction has it so far.
func (tx *Tx) Live() Live { return tx.st.live }

// Now reads the store's clock.
func (tx *Tx) Now() time.Time { return tx.s.now() }

// NewID mints an ID that no entry of the store holds. Every entry the
// store did not mint itself passed through IDSource.observe on its way in,
// so the counter is already past any saved ID in the same namespace and no
// lookup is needed.
func (tx *Tx) NewID() string { return tx.s.ids.Next() }

// Append adds a settled entry with a new ID to the main document.
func (tx *Tx) Append(c Content) (string, error) {
	id := tx.NewID()
	d, err := tx.st.doc.add(Entry{ID: id, Content: c, Timestamp: tx.Now()}, false, true)
	if err != nil {
		return "", err
	}
	tx.setDoc(d)
	return id, nil
}

// AppendEntry adds e, with its own ID, as a settled entry.
func (tx *Tx) AppendEntry(e Entry) error {
	d, err := tx.st.doc.Append(e)
	if err != nil {
		return err
	}
	tx.s.ids.observe(e.ID)
	tx.setDoc(d)
	return nil
}

// Open adds an open entry with a new ID to the main document.
func (tx *Tx) Open(c Content) (string, error) {
	id := tx.NewID()
	d, err := tx.st.doc.add(Entry{ID: id, Content: c, Timestamp: tx.Now()}, true, true)
	if err != nil {
		return "", err
	}
	tx.setDoc(d)
	return id, nil
}

// Update changes the content of the open entry id.
func (tx *Tx) Update(id string, c Content) error {
	d, err := tx.st.doc.Update(id, c)
	if err != nil {
		return err
	}
	tx.setDoc(d)
	return nil
}

// Settle settles the open entry id (with c, or its current content if c is
// nil) and makes all of its text visible.
func (tx *Tx) Settle(id string, c Content) error {
	d, err := tx.st.doc.Settle(id, c)
	if err != nil {
		return err
	}
	tx.setDoc(d)
	tx.st.live.dropReveal(id)
	return nil
}

// ReplaceEntry changes an earlier fact; see Document.Replace. The
// generation stays: the view lifetime goes on.
func (tx *Tx) ReplaceEntry(e Entry) error {
	d, err := tx.st.doc.Replace(e)
	if err != nil {
		return err
	}
	tx.setDoc(d)
	return nil
}

// Trim drops the main document's first k entries, which must be settled
// (see Document.Trim). The generation stays: the view lifetime goes on, and
// a view keeps its reading position by entry ID.
func (tx *Tx) Trim(k int) error {
	d, err := tx.st.doc.Trim(k)
	if err != nil {
		return err
	}
	if k > 0 {
		tx.setDoc(d)
	}
	return nil
}

func (tx *Tx) setDoc(d Document) { tx.st.doc = d; tx.dirty = true }

// SetActivity sets the main activity.
func (tx *Tx) SetActivity(a Activity) {
	if tx.st.live.Activity != a {
		tx.st.live.Activity = a
		tx.dirty = true
	}
}

// SetModel sets the main footer's model.
func (tx *Tx) SetModel(m string) {
	if tx.st.live.Model != m {
		tx.st.live.Model = m
		tx.dirty = true
	}
}

// SetPromptContext sets the main footer's prompt-context token count.
func (tx *Tx) SetPromptContext(n int64) error {
	if err := count("/promptContext", &n); err != nil {
		return err
	}
	if tx.st.live.PromptContext != n {
		tx.st.live.PromptContext = n
		tx.dirty = true
	}
	return nil
}

// SetRetry sets or clears the pending retry.
func (tx *Tx) SetRetry(r Retry) {
	if tx.st.live.Retry != r {
		tx.st.live.Retry = r
		tx.dirty = true
	}
}

// SetExpanded opens or closes the detail of entry id of the main document.
func (tx *Tx) SetExpanded(id string, on bool) error {
	if _, ok := tx.st.doc.Index(id); !ok {
		return fmt.Errorf("expand %q: %w", id, ErrNotFound)
	}
	if tx.st.live.Expanded.Has(id) != on {
		tx.st.live.Expanded = tx.st.live.Expanded.with(id, on)
		tx.dirty = true
	}
	return nil
}

// AddUsage adds main-agent usage to the session totals. Negative or
// non-finite amounts are refused.
func (tx *Tx) AddUsage(u Usage) error {
	if err := u.validate(); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	tx.st.live.Totals = tx.st.live.Totals.Add(u)
	tx.dirty = true
	return nil
}

// setReveal moves the visible prefix of a paced entry.
func (tx *Tx) setReveal(id string, n int) {
	if cur, ok := tx.st.live.reveal[id]; !ok || cur != n {
		tx.st.live.setReveal(id, n)
		tx.dirty = true
	}
}

func (tx *Tx) dropReveal(id string) {
	if _, ok := tx.st.live.reveal[id]; ok {
		tx.st.live.dropReveal(id)
		tx.dirty = true
	}
}

// region names where a writer's entries and footer facts go: the main
// document, or one child's feed. A child writer can only ever name its own
// region, which is what keeps children away from the main answer and footer.
type region struct {
	child string // "" for the main document
	epoch uint64 // the child's epoch the writer was made in
}

func (tx *Tx) childAt(r region) (int, ChildRegion, error) {
	i := tx.st.live.Children.index(r.child)
	if i < 0 {
		return 0, ChildRegion{}, fmt.Errorf("child %q: %w", r.child, ErrNotFound)
	}
	c := tx.st.live.Children.s[i]
	if c.Done || c.epoch != r.epoch {
		return 0, ChildRegion{}, fmt.Errorf("child %q: %w", r.child, ErrChildClosed)
	}
	return i, c, nil
}

// editChild applies fn to a copy of r's child region and stores it.
func (tx *Tx) editChild(r region, fn func(c *ChildRegion) error) error {
	i, c, err := tx.childAt(r)
	if err != nil {
		return err
	}
	if err := fn(&c); err != nil {
		return err
	}
	tx.st.live.Children = tx.st.live.Children.set(i, c)
	tx.dirty = true
	return nil
}

func (tx *Tx) feed(r region) (Document, error) {
	if r.child == "" {
		return tx.st.doc, nil
	}
	_, c, err := tx.childAt(r)
	return c.Feed, err
}

func (tx *Tx) setFeed(r region, d Document) error {
	if r.child == "" {
		tx.setDoc(d)
		return nil
	}
	return tx.editChild(r, func(c *ChildRegion) error { c.Feed = d; return nil })
}

func (tx *Tx) regionActivity(r region, a Activity) error {
	if r.child == "" {
		tx.SetActivity(a)
		return nil
	}
	return tx.editChild(r, func(c *ChildRegion) error { c.Activity = a; return nil })
}

func (tx *Tx) regionModel(r region, m string) error {
	if r.child == "" {
		tx.SetModel(m)
		return nil
	}
	return tx.editChild(r, func(c *ChildRegion) error { c.Model = m; return nil })
}

func (tx *Tx) regionPromptContext(r region, n int64) error {
	if r.child == "" {
		return tx.SetPromptContext(n)
	}
	if err := count("/promptContext", &n); err != nil {
		return err
	}
	return tx.editChild(r, func(c *ChildRegion) error { c.PromptContext = n; return nil })
}

// regionUsage counts usage for r. A child's usage goes to its region and to
// the session totals alike.
func (tx *Tx) regionUsage(r region, u Usage) error {
	if r.child == "" {
		return tx.AddUsage(u)
	}
	if err := u.validate(); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	if err := tx.editChild(r, func(c *ChildRegion) error { c.Usage = c.Usage.Add(u); return nil }); err != nil {
		return err
	}
	tx.st.live.Totals = tx.st.live.Totals.Add(u)
	return nil
}
