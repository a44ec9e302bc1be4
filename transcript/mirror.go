package transcript

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
