package transcript

// ChildWriter is a sub-agent's writer. It owns one child region of the live
// state: the child's feed of entries and its own activity, model and
// prompt context. It has no way to name the main document or the main
// footer, so starting, flushing, resetting or completing a child can never
// settle the main answer or change what the main footer shows. The one
// thing a child shares is cost: its usage is added to the session totals.
//
// Like every producer it holds a lease, and it stops working when the
// document is replaced. Its methods are safe for concurrent use.
type ChildWriter struct {
	l  Lease
	id string
}

// StartChild opens a new child region with the given label and returns its
// writer.
func (l Lease) StartChild(label string) (*ChildWriter, error) {
	var id string
	err := l.Do(func(tx *Tx) error {
		id = tx.NewID()
		tx.st.live.Children = tx.st.live.Children.add(ChildRegion{
			ID: id, Label: label, Activity: ActivityThinking, Feed: Document{id: id},
		})
		tx.dirty = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &ChildWriter{l: l, id: id}, nil
}

// ID is the child region's ID.
func (c *ChildWriter) ID() string { return c.id }

// current returns the region as of now, with the child's current epoch.
func (c *ChildWriter) current(tx *Tx) (region, error) {
	i := tx.st.live.Children.index(c.id)
	if i < 0 {
		return region{}, ErrNotFound
	}
	r := region{child: c.id, epoch: tx.st.live.Children.s[i].epoch}
	_, _, err := tx.childAt(r)
	return r, err
}

func (c *ChildWriter) do(fn func(tx *Tx, r region) error) error {
	return c.l.Do(func(tx *Tx) error {
		r, err := c.current(tx)
		if err != nil {
			return err
		}
		return fn(tx, r)
	})
}

// Stream returns a stream writer for the child's feed. A Reset retires it.
func (c *ChildWriter) Stream() (*StreamWriter, error) {
	var r region
	err := c.do(func(tx *Tx, cur region) error { r = cur; return nil })
	if err != nil {
		return nil, err
	}
	return &StreamWriter{l: c.l, r: r, pacing: c.l.s.pacing}, nil
}

// SetActivity sets the child's activity.
func (c *ChildWriter) SetActivity(a Activity) error {
	return c.do(func(tx *Tx, r region) error { return tx.regionActivity(r, a) })
}

// SetModel sets the child's model.
func (c *ChildWriter) SetModel(m string) error {
	return c.do(func(tx *Tx, r region) error { return tx.regionModel(r, m) })
}

// SetPromptContext sets the child's prompt-context token count.
func (c *ChildWriter) SetPromptContext(n int64) error {
	return c.do(func(tx *Tx, r region) error { return tx.regionPromptContext(r, n) })
}

// AddUsage counts the child's usage, in its region and in the session
// totals.
func (c *ChildWriter) AddUsage(u Usage) error {
	return c.do(func(tx *Tx, r region) error { return tx.regionUsage(r, u) })
}

// Append adds a settled entry with a new ID to the child's feed (a tool
// receipt of the child's own, say).
func (c *ChildWriter) Append(ct Content) (string, error) { return c.add(ct, false) }

// Open adds an open entry with a new ID to the child's feed.
func (c *ChildWriter) Open(ct Content) (string, error) { return c.add(ct, true) }

func (c *ChildWriter) add(ct Content, open bool) (id string, err error) {
	err = c.do(func(tx *Tx, r region) error {
		_, ch, _ := tx.childAt(r)
		id = tx.NewID()
		feed, err := ch.Feed.add(Entry{ID: id, Content: ct, Timestamp: tx.Now()}, open, true)
		if err != nil {
			return err
		}
		return tx.setFeed(r, feed)
	})
	return id, err
}

// Update changes the content of the open entry id of the child's feed (a
// running tool's presentation, say).
func (c *ChildWriter) Update(id string, ct Content) error {
	return c.do(func(tx *Tx, r region) error {
		_, ch, _ := tx.childAt(r)
		feed, err := ch.Feed.Update(id, ct)
		if err != nil {
			return err
		}
		return tx.setFeed(r, feed)
	})
}

// Settle settles the open entry id of the child's feed, with ct or, if ct
// is nil, with what it holds.
func (c *ChildWriter) Settle(id string, ct Content) error {
	return c.do(func(tx *Tx, r region) error {
		_, ch, _ := tx.childAt(r)
		feed, err := ch.Feed.Settle(id, ct)
		if err != nil {
			return err
		}
		tx.dropReveal(id)
		return tx.setFeed(r, feed)
	})
}

// Flush reveals everything the child's streams accepted so far.
func (c *ChildWriter) Flush() error {
	return c.do(func(tx *Tx, r region) error {
		_, ch, _ := tx.childAt(r)
		for i := ch.Feed.Settled(); i < ch.Feed.Len(); i++ {
			e := ch.Feed.At(i)
			if _, paced := tx.st.live.reveal[e.ID]; paced {
				tx.setReveal(e.ID, visibleLen(e.Content))
			}
		}
		return nil
	})
}

// Reset empties the child's feed, for a child that starts over. Stream
// writers made before the reset fail with ErrChildClosed.
func (c *ChildWriter) Reset() error {
	return c.do(func(tx *Tx, r region) error {
		return tx.editChild(r, func(ch *ChildRegion) error {
			dropFeedReveals(tx, ch.Feed)
			ch.Feed = Document{id: ch.ID}
			ch.epoch++
			ch.Activity = ActivityThinking
			return nil
		})
	})
}

// Complete settles whatever is open in the child's feed, marks the region
// done and idle, and closes it to further writes.
func (c *ChildWriter) Complete() error {
	return c.do(func(tx *Tx, r region) error {
		return tx.editChild(r, func(ch *ChildRegion) error {
			dropFeedReveals(tx, ch.Feed)
			for ch.Feed.Settled() < ch.Feed.Len() {
				var err error
				ch.Feed, err = ch.Feed.Settle(ch.Feed.At(ch.Feed.Settled()).ID, nil)
				if err != nil {
					return err
				}
			}
			ch.Done, ch.Activity = true, ActivityIdle
			return nil
		})
	})
}

func dropFeedReveals(tx *Tx, feed Document) {
	for i := feed.Settled(); i < feed.Len(); i++ {
		tx.dropReveal(feed.At(i).ID)
	}
}

func visibleLen(c Content) int {
	switch c := c.(type) {
	case Agent:
		return len(c.Markdown)
	case Reasoning:
		return len(c.Text)
	}
	return 0
}
