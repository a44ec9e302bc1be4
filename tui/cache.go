package tui

import (
	"container/list"
	"crypto/sha256"
	"strings"

	"github.com/foliodev/folio/transcript"
)

// renderCache holds painted runs so a frame paints only what it shows, once.
//
// Settled runs are keyed by their entries' fingerprints, the width, which
// members are expanded, and the painter's theme and view: a key names its
// lines exactly, because settled facts never change. Keys are content
// addresses, so a cached run stays valid across documents and generations.
// Painted lines are kept in an LRU bounded by their bytes (cacheBytes);
// heights (an int per run) are kept apart and outlive evicted lines, so
// walking over text already measured costs a map lookup, not a repaint.
// Heights are bounded by count (maxHeights): a long live session settles
// a run per entry, and its memory must not grow with them.
//
// Open entries are not cached by fingerprint (their fingerprint changes on
// every update). A streaming answer keeps a stream state by entry ID: the
// lines of its stable markdown prefix, extended as complete blocks arrive,
// so each frame renders only the unstable tail. When the answer settles,
// its state seeds the cache entry of the settled fact.
//
// A renderCache is not safe for concurrent use; the view that owns it calls it
// from one goroutine (Bubble Tea's update loop).
type renderCache struct {
	painter  *Painter
	lines    map[runKey]*list.Element
	lru      *list.List // of *cached, most recent first
	total    int        // bytes of lines held (lineBytes)
	maxBytes int
	heights  map[runKey]int
	streams  map[string]*stream
	frame    uint64

	// Renders counts paints of settled runs and of streaming blocks; tests
	// use it to prove work is skipped.
	Renders int
}

type runKey struct {
	fp       transcript.Fingerprint
	width    int
	expanded bool // single-entry runs; multi-entry runs hash the flags into fp
	theme    Theme
	classic  bool
}

type cached struct {
	key   runKey
	lines []string
}

const (
	// cacheBytes bounds the painted lines kept: many screens of any
	// conversation (thousands of lines; a page back is forty), 2 MiB
	// whatever the session's length. A live session fills it within a few
	// thousand entries, so from then on the view's memory stays level.
	cacheBytes = 2 << 20
	// maxHeights bounds the heights kept; when it is reached they are
	// forgotten at once (they are cheap to measure again, and a window
	// needs a few hundred).
	maxHeights = 1 << 12
)

// lineBytes is what a run's lines hold in memory: their bytes and string
// headers, and the cache's bookkeeping for the run (its list element, map
// entry and key).
func lineBytes(lines []string) int {
	n := 256 + 16*len(lines)
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// newRenderCache returns an empty cache painting with p.
func newRenderCache(p *Painter) *renderCache {
	return &renderCache{
		painter:  p,
		lines:    map[runKey]*list.Element{},
		lru:      list.New(),
		maxBytes: cacheBytes,
		heights:  map[runKey]int{},
		streams:  map[string]*stream{},
	}
}

// SetPainter switches to painter p. Cached lines of another theme stay
// keyed by it and are simply not used; stream states are dropped.
func (c *renderCache) SetPainter(p *Painter) {
	c.painter = p
	c.resetStreams()
}

// Painter returns the cache's painter.
func (c *renderCache) Painter() *Painter { return c.painter }

// block is a run of a document located by index: entries [start, end).
type block struct{ start, end int }

// maxRun bounds how many entries one run holds. Runs also break at entry
// indexes that are multiples of maxRun, a rule that needs no scan back to
// where a long stretch began, so finding a run costs at most 2·maxRun
// steps however long the stretch. A continuation piece gets no separator
// line, so the break does not show as a gap.
const maxRun = 64

// runAt returns the run containing entry i: a stretch of consecutive
// reasoning entries, or of tool entries, or entry i alone.
func runAt(d transcript.Document, i int) block {
	f := family(d.At(i).Content)
	if f == "" {
		return block{i, i + 1}
	}
	// Runs break at multiples of maxRun counted over the whole
	// conversation, so a window that holds only its end (Elided) or pages
	// of it groups entries as the whole document does.
	el := d.Elided()
	s, e := i, i+1
	for s > 0 && (s+el)%maxRun != 0 && family(d.At(s-1).Content) == f {
		s--
	}
	for e < d.Len() && (e+el)%maxRun != 0 && family(d.At(e).Content) == f {
		e++
	}
	return block{s, e}
}

// separated reports whether run b starts with a blank separator line: every
// run but the first does, except the continuation of a long stretch.
func separated(d transcript.Document, b block) bool {
	if b.start == 0 {
		// The conversation's first run has none; the first run of a
		// window into it has one unless the window starts a stretch's
		// continuation, which it cannot tell, so it has one.
		return d.Elided() > 0
	}
	if (b.start+d.Elided())%maxRun == 0 {
		f := family(d.At(b.start).Content)
		return f == "" || family(d.At(b.start-1).Content) != f
	}
	return true
}

// painted is the lines of one run, possibly in two parts (a streaming
// answer's stable head and its tail), so nothing is copied per frame.
type painted struct {
	head, tail []string
	sep        bool // a blank separator line comes first
}

func (p painted) Len() int {
	n := len(p.head) + len(p.tail)
	if n > 0 && p.sep {
		n++
	}
	return n
}

func (p painted) Line(i int) string {
	if p.sep {
		if i == 0 {
			return ""
		}
		i--
	}
	if i < len(p.head) {
		return p.head[i]
	}
	return p.tail[i-len(p.head)]
}

// run paints the run b of d at width. expanded reports whether an entry ID
// is expanded. Runs after the first are preceded by a blank line.
func (c *renderCache) run(d transcript.Document, b block, width int, expanded func(string) bool) painted {
	out := c.body(d, b, width, expanded)
	out.sep = separated(d, b)
	return out
}

// height is the number of lines run b takes, separator included.
func (c *renderCache) height(d transcript.Document, b block, width int, expanded func(string) bool) int {
	if k, ok := c.key(d, b, width, expanded); ok {
		if h, ok := c.heights[k]; ok {
			if h > 0 && separated(d, b) {
				h++
			}
			return h
		}
	}
	return c.run(d, b, width, expanded).Len()
}

// key returns the cache key of a run, or false when the run has an open
// entry and must be painted fresh.
func (c *renderCache) key(d transcript.Document, b block, width int, expanded func(string) bool) (runKey, bool) {
	k := runKey{width: width, theme: c.painter.theme, classic: c.painter.classic}
	if b.end-b.start == 1 {
		if d.IsOpen(b.start) {
			return k, false
		}
		k.fp = d.Fingerprint(b.start)
		k.expanded = expanded(d.At(b.start).ID)
		return k, true
	}
	h := sha256.New()
	for i := b.start; i < b.end; i++ {
		if d.IsOpen(i) {
			return k, false
		}
		fp := d.Fingerprint(i)
		h.Write(fp[:])
		if expanded(d.At(i).ID) {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	h.Sum(k.fp[:0])
	return k, true
}

func (c *renderCache) body(d transcript.Document, b block, width int, expanded func(string) bool) painted {
	k, cacheable := c.key(d, b, width, expanded)
	if !cacheable {
		if b.end-b.start == 1 {
			if a, ok := d.At(b.start).Content.(transcript.Agent); ok {
				return c.streaming(d.At(b.start).ID, a.Markdown, width)
			}
		}
		return painted{head: c.paintRun(d, b, width, expanded)}
	}
	if el, ok := c.lines[k]; ok {
		c.lru.MoveToFront(el)
		return painted{head: el.Value.(*cached).lines}
	}
	var lines []string
	e := d.At(b.start)
	if st, ok := c.streams[e.ID]; ok && b.end-b.start == 1 && !k.expanded {
		// The answer just settled: finish its stream state instead of
		// painting the whole answer again.
		if a, isAgent := e.Content.(transcript.Agent); isAgent && st.width == width {
			p := c.streaming(e.ID, a.Markdown, width)
			lines = append(append(make([]string, 0, p.Len()), p.head...), p.tail...)
		}
		delete(c.streams, e.ID)
	}
	if lines == nil {
		lines = c.paintRun(d, b, width, expanded)
	}
	c.store(k, lines)
	return painted{head: lines}
}

func (c *renderCache) paintRun(d transcript.Document, b block, width int, expanded func(string) bool) []string {
	c.Renders++
	r := Run{Entries: make([]transcript.Entry, 0, b.end-b.start)}
	for i := b.start; i < b.end; i++ {
		e := d.At(i)
		r.Entries = append(r.Entries, e)
		r.Open = append(r.Open, d.IsOpen(i))
		r.Expanded = append(r.Expanded, expanded(e.ID))
	}
	return c.painter.Paint(r, width)
}

func (c *renderCache) store(k runKey, lines []string) {
	c.heights[k] = len(lines)
	if len(c.heights) > maxHeights {
		clear(c.heights) // rare; heights are cheap to measure again
		c.heights[k] = len(lines)
	}
	size := lineBytes(lines)
	if size > c.maxBytes {
		return
	}
	c.lines[k] = c.lru.PushFront(&cached{key: k, lines: lines})
	c.total += size
	for c.total > c.maxBytes {
		el := c.lru.Back()
		old := el.Value.(*cached)
		c.lru.Remove(el)
		delete(c.lines, old.key)
		c.total -= lineBytes(old.lines)
	}
}

// stream is the render state of one streaming answer.
type stream struct {
	src    string // the text the stable prefix was cut from, up to stable
	stable int    // byte offset of the end of the stable prefix
	width  int
	lines  []string // painted lines of src[:stable]
	frame  uint64

	// The tail painted in frame, for the second look within one frame (a
	// height, then the lines).
	tailSrc string
	tail    []string
}

// streaming paints an open answer: the stable prefix from its stream
// state (extended by any blocks completed since the last frame), then the
// tail, rendered fresh.
func (c *renderCache) streaming(id, src string, width int) painted {
	st := c.streams[id]
	if st == nil || st.width != width || !strings.HasPrefix(src, st.src) {
		st = &stream{width: width}
		c.streams[id] = st
	}
	if st.frame == c.frame && st.tail != nil && st.tailSrc == src {
		return painted{head: st.lines, tail: st.tail}
	}
	st.frame = c.frame
	if end := stableEnd(src, st.stable); end > st.stable {
		for _, b := range splitBlocks(src[st.stable:end]) {
			c.Renders++
			st.lines = appendBlock(st.lines, c.painter.markdownBlock(b, width))
		}
		st.stable, st.src = end, src[:end]
	}
	c.Renders++
	t := c.painter.markdownBlock(src[st.stable:], width)
	if len(t) > 0 && len(st.lines) > 0 {
		t = append([]string{""}, t...)
	}
	if t == nil {
		t = []string{}
	}
	st.tailSrc, st.tail = src, t
	return painted{head: st.lines, tail: t}
}

// endFrame forgets stream states no frame has used for a while (answers
// that settled or were replaced).
func (c *renderCache) endFrame() {
	c.frame++
	for id, st := range c.streams {
		if c.frame-st.frame > 4 {
			delete(c.streams, id)
		}
	}
}

// resetStreams drops all stream states: a new document generation may reuse
// entry IDs for different text.
func (c *renderCache) resetStreams() { clear(c.streams) }
