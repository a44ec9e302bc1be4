package transcript

import (
	"fmt"
	"slices"
)

// Put sets entry e to what another process's store holds for it, open or
// settled: a client mirroring an owner's document through its live events
// (package server/client) writes with it. An unknown ID is added at the
// end; an open entry is updated, or settled when open is false; a settled
// entry is replaced (the owner changed an earlier fact). A settled entry
// never reopens: Put of an open value for it replaces its content and it
// stays settled.
func (tx *Tx) Put(e Entry, open bool) error {
	d := tx.st.doc
	i, ok := d.Index(e.ID)
	var err error
	switch {
	case !ok && open:
		d, err = d.Open(e)
	case !ok:
		d, err = d.Append(e)
	case d.IsOpen(i) && open:
		d, err = d.Update(e.ID, e.Content)
	case d.IsOpen(i):
		d, err = d.Settle(e.ID, e.Content)
		tx.st.live.dropReveal(e.ID)
	default:
		d, err = d.Replace(e)
	}
	if err != nil {
		return err
	}
	if !ok {
		tx.s.ids.observe(e.ID)
	}
	tx.setDoc(d)
	return nil
}

// SetTotals sets the session's usage to what another process's store
// counts (Live.Totals): a mirror takes the owner's totals as they are
// rather than adding to them.
func (tx *Tx) SetTotals(u Usage) error {
	if err := u.validate(); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	if tx.st.live.Totals != u {
		tx.st.live.Totals = u
		tx.dirty = true
	}
	return nil
}

// SetChildren sets the sub-agents' regions to what another process's
// store shows of them, in start order, under the owner's region IDs (an
// approval names its region by that ID). A region the list leaves out is
// dropped. A region's usage is set as given; the totals are SetTotals'.
func (tx *Tx) SetChildren(cs []ChildRegion) error {
	for i, c := range cs {
		if c.ID == "" {
			return fmt.Errorf("children/%d: no ID", i)
		}
		if err := c.Usage.validate(); err != nil {
			return fmt.Errorf("children/%d: usage: %w", i, err)
		}
	}
	old := tx.st.live.Children
	if old.Len() == 0 && len(cs) == 0 {
		return nil
	}
	for i := range old.Len() {
		dropFeedReveals(tx, old.At(i).Feed)
	}
	tx.st.live.Children = Children{s: slices.Clone(cs)}
	tx.dirty = true
	return nil
}
