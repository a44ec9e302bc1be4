package tui

import (
	"io"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"strconv"
	"strings"

	"github.com/foliodev/folio/transcript"
)

// Classic is the classic view's projection of the document: it decides what
// to print into the terminal's own scrollback, once, and what to redraw in
// the small live region below it.
//
// Settled runs are printed in order, each exactly once. A streaming
// answer's complete markdown blocks (see StableEnd) are printed as soon as
// they are complete; only the unfinished last block, and whatever follows
// the first open entry, stays in the live region. A run of tool receipts
// or reasoning steps at the end of the document also stays live until
// something follows it, since another receipt might still join its row.
//
// Classic keeps cursors, never text: the position of the first entry not
// yet printed (counted over the whole conversation, so the engine dropping
// printed entries from its document's start moves nothing) and, for a streaming answer, how many bytes of its markdown are
// printed. Promotion is an output optimization; the document stays the only
// transcript.
//
// Classic is lazy: until Mount, Sync does nothing at all, so a fullscreen
// session pays nothing for it. It is not safe for concurrent use.
type Classic struct {
	cache   *renderCache
	mounted bool
	gen     uint64
	next    int    // first entry not printed in full, counting Elided entries
	nextID  string // its ID when it is partly printed
	partial int    // bytes of nextID's markdown printed
	printed bool   // whether any line of nextID was printed
	tail    *Tail  // what a new generation prints (classic_tail.go)
}

// NewClassic returns an unmounted classic projection painting with p (which
// should be made with ForClassic).
func NewClassic(p *Painter) *Classic { return &Classic{cache: newRenderCache(p)} }

// Frame is one update of the classic view: lines to print above the live
// region, in order and never again, and the live region's new lines.
type Frame struct {
	Print []string
	Live  []string
}

// PrintCmd returns the Bubble Tea command that prints f.Print above an
// inline program's view (tea.Println), or nil when there is nothing to
// print. Use it with View when Bubble Tea draws the classic view instead of
// Inline.
func (f Frame) PrintCmd() tea.Cmd {
	if len(f.Print) == 0 {
		return nil
	}
	return tea.Println(strings.Join(f.Print, "\n"))
}

// View is the live region as Bubble Tea view content.
func (f Frame) View() string { return strings.Join(f.Live, "\n") }

// Mount starts the projection. The first Sync prints the document from its
// beginning.
func (c *Classic) Mount() {
	if !c.mounted {
		*c = Classic{cache: c.cache, mounted: true, tail: c.tail}
	}
}

// Unmount stops the projection; later Syncs do nothing until Mount.
func (c *Classic) Unmount() { c.mounted = false }

// Mounted reports whether the projection is mounted.
func (c *Classic) Mounted() bool { return c.mounted }

// Sync brings the projection up to doc (of generation gen) at width
// columns, with a live region of at most height lines (the newest lines
// are kept when it is taller). A new generation prints the new document
// from its beginning; what is already in scrollback stays there.
func (c *Classic) Sync(doc transcript.Document, gen uint64, width, height int) Frame {
	if !c.mounted {
		return Frame{}
	}
	var f Frame
	if gen != c.gen {
		c.gen, c.next, c.nextID, c.partial, c.printed = gen, 0, "", 0, false
		c.cache.resetStreams()
		// A document that arrives whole (a resume) prints its end only.
		start := c.tailStart(doc, width)
		c.next = doc.Elided() + start
		if l := c.earlierLine(doc, start); l != "" {
			f.Print = append(f.Print, l) // the run after it brings its blank line
		}
	}
	defer c.cache.endFrame()
	never := func(string) bool { return false }
	el := doc.Elided()
	i := max(c.next-el, 0)
	for i < doc.Len() {
		b := runAt(doc, i)
		e := doc.At(b.start)
		if a, ok := e.Content.(transcript.Agent); ok {
			open := doc.IsOpen(b.start)
			f.Print = append(f.Print, c.promote(e.ID, separated(doc, b), a.Markdown, width, open)...)
			if open {
				break
			}
			i = b.end
			c.next, c.nextID, c.partial, c.printed = el+i, "", 0, false
			continue
		}
		if c.hasOpen(doc, b) || (family(e.Content) != "" && b.end == doc.Len()) {
			break
		}
		p := c.cache.run(doc, b, width, never)
		for j := range p.Len() {
			f.Print = append(f.Print, p.Line(j))
		}
		i = b.end
		c.next = el + i
	}
	// The live region: the unprinted tail of a streaming answer, then every
	// run after it.
	for i < doc.Len() {
		b := runAt(doc, i)
		e := doc.At(b.start)
		if a, ok := e.Content.(transcript.Agent); ok && e.ID == c.nextID {
			tail := c.cache.painter.markdownBlock(a.Markdown[c.partial:], width)
			if len(tail) > 0 && (c.printed || separated(doc, b)) {
				f.Live = append(f.Live, "")
			}
			f.Live = append(f.Live, tail...)
		} else {
			p := c.cache.run(doc, b, width, never)
			for j := range p.Len() {
				f.Live = append(f.Live, p.Line(j))
			}
		}
		i = b.end
	}
	if height > 0 && len(f.Live) > height {
		f.Live = f.Live[len(f.Live)-height:]
	}
	return f
}

func (c *Classic) hasOpen(doc transcript.Document, b block) bool {
	for i := b.start; i < b.end; i++ {
		if doc.IsOpen(i) {
			return true
		}
	}
	return false
}

// promote returns the lines of answer id that became printable: its
// complete blocks while it streams, everything left once it settled.
func (c *Classic) promote(id string, sep bool, src string, width int, open bool) []string {
	if c.nextID != id {
		c.nextID, c.partial, c.printed = id, 0, false
	}
	if c.partial > len(src) {
		// The text changed under us (it should only grow); start over
		// rather than print a broken slice.
		c.partial = 0
	}
	end := len(src)
	if open {
		end = stableEnd(src, c.partial)
	}
	var out []string
	for _, blk := range splitBlocks(src[c.partial:end]) {
		lines := c.cache.painter.markdownBlock(blk, width)
		if len(lines) == 0 {
			continue
		}
		if c.printed || sep {
			out = append(out, "")
		}
		out = append(out, lines...)
		c.printed = true
	}
	c.partial = end
	return out
}

// Inline writes classic frames to a terminal without the alternate screen:
// printed lines go into the normal flow (and so into scrollback) above the
// live region, and the live region is redrawn in place, from its first
// changed line only.
//
// Resizing: most terminals rewrap their lines when they get narrower, so
// after Resize the writer assumes each old live line now takes as many rows
// as its width needs, and redraws the whole live region. Set Reflow to false
// for a terminal that cuts lines instead of rewrapping them.
type Inline struct {
	w      io.Writer
	live   []string // the live lines on screen; the cursor ends the last one
	width  int      // the terminal's width, 0 while unknown
	resize bool     // the width changed since the last Write
	buf    strings.Builder

	Reflow bool
}

// NewInline returns an Inline writing to w.
func NewInline(w io.Writer) *Inline { return &Inline{w: w, Reflow: true} }

// Resize tells the writer the terminal is now width columns wide.
func (in *Inline) Resize(width int) {
	if width != in.width {
		in.resize = in.width != 0 || len(in.live) > 0
		in.width = width
	}
}

// rows is how many terminal rows the live lines on screen take now.
func (in *Inline) rows() int {
	if !in.Reflow || in.width <= 0 {
		return len(in.live)
	}
	n := 0
	for _, l := range in.live {
		n += max(1, (ansi.StringWidth(l)+in.width-1)/in.width)
	}
	return n
}

// eraseDown erases from the start of the cursor's row to the end of the
// screen, and leaves the cursor at the start of that row. It erases the row
// (EL 2) and then the rest of the screen from the second column, rather than
// with one ED 0 from the first column: tmux (scroll-on-clear, on by
// default) takes an ED 0 from the top-left corner for clearing the screen
// and copies everything on it into its scrollback. Whenever the live region
// starts on the top row (a fresh pane, or a region that fills the screen
// after a resize) each redraw would leave a copy of the old chrome there.
const eraseDown = "\r\x1b[2K\x1b[2G\x1b[J\r"

// Write draws f and returns the number of bytes written.
func (in *Inline) Write(f Frame) (int, error) {
	in.buf.Reset()
	keep := 0
	if len(f.Print) == 0 && !in.resize {
		for keep < len(in.live) && keep < len(f.Live) && in.live[keep] == f.Live[keep] {
			keep++
		}
		if keep == len(in.live) && keep == len(f.Live) {
			return 0, nil
		}
		if keep == len(in.live) && keep > 0 {
			// Everything on screen stays; continue after the last line.
			keep--
		}
	}
	// Move to the start of live line keep and erase from there down.
	if len(in.live) > 0 {
		in.buf.WriteByte('\r')
		if up := in.rows() - 1 - keep; up > 0 {
			in.buf.WriteString("\x1b[" + strconv.Itoa(up) + "A")
		}
	}
	in.buf.WriteString(eraseDown)
	for _, l := range f.Print {
		in.buf.WriteString(l)
		in.buf.WriteString("\r\n")
	}
	for i := keep; i < len(f.Live); i++ {
		in.buf.WriteString(f.Live[i])
		if i < len(f.Live)-1 {
			in.buf.WriteString("\r\n")
		}
	}
	in.live = append(in.live[:0], f.Live...)
	in.resize = false
	return io.WriteString(in.w, in.buf.String())
}

// Clear empties the screen and its scrollback (for /clear); the next Write
// draws its live region from the top.
func (in *Inline) Clear() {
	in.live = nil
	in.resize = false
	_, _ = io.WriteString(in.w, "\x1b[H\x1b[2J\x1b[3J")
}
