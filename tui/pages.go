package tui

import (
	"github.com/foliodev/folio/transcript"
)

// Pager reads the entries of a conversation that the engine's document
// does not hold (it holds the conversation's end: Document.Elided counts
// the entries before it). Positions count every entry of the conversation,
// the first is 0. A chat host implements it over the log's page index, so
// a page costs its own entries, not the conversation.
type Pager interface {
	// Page returns entries lo..hi (hi exclusive) and each one's stored
	// size in bytes (for the viewport's memory budget).
	Page(lo, hi int) (entries []transcript.Entry, sizes []int, err error)
}

// Finder is a Pager that also finds where an entry is in the
// conversation (a chat host's, over the log's page index), so the view can
// go to an entry the engine's document does not hold: a search hit.
type Finder interface {
	// Find returns entry id's position, or -1 when the conversation does
	// not have it.
	Find(id string) (int, error)
}

// pageEntries is how many entries one page read brings.
const pageEntries = 128

// pageBudget bounds the bytes of paged entries a viewport keeps: the pages
// around the reading position; farther ones are dropped and read again
// when the reader comes back to them.
const pageBudget = 4 << 20

// paged is the part of a conversation a viewport read through its Pager:
// entries lo..lo+len(es), before the engine's document. It is joined to
// the document when it ends where the document starts.
type paged struct {
	es    []transcript.Entry
	sizes []int
	lo    int
	bytes int
	err   string // the last page read's failure, shown until one succeeds
}

func (p *paged) hi() int { return p.lo + len(p.es) }

// joined reports whether the paged entries end where src starts.
func (v *viewport) joined() bool {
	return len(v.pg.es) > 0 && v.pg.hi() == v.src.Elided()
}

// detached reports whether the view shows paged entries apart from the
// engine's document (Home, or a scroll that dropped the pages between).
func (v *viewport) detached() bool { return len(v.pg.es) > 0 && !v.joined() }

// compose makes the document the view paints: the engine's document, with
// the paged entries before it when they join it, or the paged entries
// alone when they do not.
func (v *viewport) compose() {
	if len(v.pg.es) == 0 {
		v.doc = v.src
		return
	}
	first := v.src.FirstID()
	if v.pg.lo == 0 {
		first = ""
	}
	if !v.joined() {
		v.doc = transcript.NewCheckedWindow(v.src.ID(), v.pg.lo, first, v.pg.es)
		return
	}
	es := make([]transcript.Entry, 0, len(v.pg.es)+v.src.Len())
	es = append(es, v.pg.es...)
	settled := v.src.Settled()
	for i := range settled {
		es = append(es, v.src.At(i))
	}
	d := transcript.NewCheckedWindow(v.src.ID(), v.pg.lo, first, es)
	for i := settled; i < v.src.Len(); i++ {
		if n, err := d.Open(v.src.At(i)); err == nil {
			d = n
		}
	}
	v.doc = d
}

// keepDropped keeps, as paged entries, the entries the engine dropped from
// the start of its document (it keeps a long session's end) when the
// reader, away from the live edge, reads them or the entries next to
// them: the text being read stays without a page read. Pages apart from
// the engine's document need nothing: what they lead to is in the log.
func (v *viewport) keepDropped(doc transcript.Document) {
	k := min(doc.Elided()-v.src.Elided(), v.src.Len())
	if k <= 0 || v.detached() || doc.ID() != v.src.ID() {
		return
	}
	if len(v.pg.es) == 0 {
		v.pg.lo = v.src.Elided()
	}
	for i := range k {
		e := v.src.At(i)
		size := 0
		if b, err := transcript.EncodeEntry(e); err == nil {
			size = len(b)
		}
		v.pg.es = append(v.pg.es, e)
		v.pg.sizes = append(v.pg.sizes, size)
		v.pg.bytes += size
	}
	v.evict(true)
}

// dropPages forgets the paged entries (the live edge, a new generation).
func (v *viewport) dropPages() {
	v.pg = paged{}
	v.doc = v.src
}

// read reads entries lo..hi through the pager, noting a failure.
func (v *viewport) read(lo, hi int) ([]transcript.Entry, []int, bool) {
	if v.Pager == nil || lo >= hi {
		return nil, nil, false
	}
	es, sizes, err := v.Pager.Page(lo, hi)
	if err != nil || len(es) != hi-lo {
		if err == nil {
			v.pg.err = "earlier entries could not be read: the page came back short"
		} else {
			v.pg.err = "earlier entries could not be read: " + err.Error()
		}
		return nil, nil, false
	}
	v.pg.err = ""
	return es, sizes, true
}

// pageBack reads the page before the document the view paints. It
// reports whether entries were added.
func (v *viewport) pageBack() bool {
	top := v.doc.Elided()
	if top == 0 {
		return false
	}
	lo := max(top-pageEntries, 0)
	es, sizes, ok := v.read(lo, top)
	if !ok {
		return false
	}
	v.pg.es = append(append([]transcript.Entry(nil), es...), v.pg.es...)
	v.pg.sizes = append(append([]int(nil), sizes...), v.pg.sizes...)
	v.pg.lo = lo
	for _, s := range sizes {
		v.pg.bytes += s
	}
	v.evict(false)
	v.compose()
	return true
}

// pageAhead reads the page after detached paged entries, joining them to
// the engine's document when it reaches it. It reports whether entries
// were added.
func (v *viewport) pageAhead() bool {
	if !v.detached() {
		return false
	}
	hi := min(v.pg.hi()+pageEntries, v.src.Elided())
	es, sizes, ok := v.read(v.pg.hi(), hi)
	if !ok {
		return false
	}
	v.pg.es = append(v.pg.es, es...)
	v.pg.sizes = append(v.pg.sizes, sizes...)
	for _, s := range sizes {
		v.pg.bytes += s
	}
	v.evict(true)
	v.compose()
	return true
}

// evict drops paged entries past the budget from the end away from the
// reading position: the top when the reader moves down (fromTop), the
// bottom when they move up. Whole pages go, never the anchor's.
func (v *viewport) evict(fromTop bool) {
	for v.pg.bytes > pageBudget && len(v.pg.es) > 2*pageEntries {
		n := pageEntries
		var gone []int
		if fromTop {
			gone = v.pg.sizes[:n]
			if v.anchorIn(v.pg.es[:n]) {
				return
			}
			v.pg.es, v.pg.sizes, v.pg.lo = v.pg.es[n:], v.pg.sizes[n:], v.pg.lo+n
		} else {
			k := len(v.pg.es) - n
			if v.anchorIn(v.pg.es[k:]) {
				return
			}
			gone = v.pg.sizes[k:]
			v.pg.es, v.pg.sizes = v.pg.es[:k:k], v.pg.sizes[:k:k]
		}
		for _, s := range gone {
			v.pg.bytes -= s
		}
	}
}

func (v *viewport) anchorIn(es []transcript.Entry) bool {
	for _, e := range es {
		if e.ID == v.anchorID {
			return true
		}
	}
	return false
}

// pageAt makes the paged entries the page around position at, before the
// engine's document, in place of any others. It reports whether the page
// was read.
func (v *viewport) pageAt(at int) bool {
	lo := max(0, at-pageEntries/2)
	hi := min(lo+pageEntries, v.src.Elided())
	es, sizes, ok := v.read(lo, hi)
	if !ok {
		return false
	}
	v.pg = paged{es: es, sizes: sizes, lo: lo}
	for _, s := range sizes {
		v.pg.bytes += s
	}
	v.compose()
	return true
}

// PagedBytes is the stored size of the paged entries the view holds.
func (v *viewport) PagedBytes() int { return v.pg.bytes }

// top moves to the conversation's first entry: one page read when the
// engine's document does not hold it.
func (v *viewport) top() {
	if v.src.Elided() > 0 && v.Pager != nil && v.doc.Elided() > 0 {
		es, sizes, ok := v.read(0, min(pageEntries, v.src.Elided()))
		if ok {
			v.pg = paged{es: es, sizes: sizes}
			for _, s := range sizes {
				v.pg.bytes += s
			}
			v.compose()
		}
	}
}
