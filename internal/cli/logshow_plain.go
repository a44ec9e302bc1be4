package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

// The plain form of folio log show, for output that is not a terminal (a
// pipe, a file): what the classic view prints, except that an answer is
// its markdown as written, not rendered. Every other entry (the
// conversation's header, prompts, tool rows, reasoning folds, notices,
// receipts, failures) is painted as the classic view paints it without
// colors, and runs are grouped and separated by blank lines as it groups
// them, so only answers differ from what a terminal shows. Nothing on
// this path renders markdown, which is most of what painting costs.

// plainPainter paints entries in the plain form at a width. It is safe
// for concurrent use.
type plainPainter struct {
	p        *tui.Painter
	width    int
	loc      *time.Location
	adapters *tui.Registry
	slow     bool // paint every run with p (the tests' reference)
}

func newPlainPainter(width int) *plainPainter {
	return &plainPainter{p: tui.NewPainter(tui.PlainTheme, tui.ForClassic(), tui.Unattended(), tui.WithLocation(time.Local)),
		width: width, loc: time.Local, adapters: tui.DefaultRegistry()}
}

// runAlign is where runs of reasoning or tool entries break whatever their
// length, counted over the whole conversation (the classic view's rule):
// a part that starts at a multiple of it holds whole runs.
const runAlign = tui.PartAlign

// runFamily says which entries group into one run with their neighbours.
func runFamily(c transcript.Content) transcript.Kind {
	switch c.(type) {
	case transcript.Reasoning:
		return transcript.KindReasoning
	case transcript.Tool:
		return transcript.KindTool
	}
	return ""
}

// plainPart is a stretch of a conversation's entries to paint: es are
// entries base.., base a multiple of runAlign (or es ending where the
// conversation does); prev is the family of entry base-1 (meaningless when
// base is 0); entries at settled or later are open.
type plainPart struct {
	es      []transcript.Entry
	base    int
	prev    transcript.Kind
	settled int
	// from: runs that end at or before it are not printed (the run that
	// holds entry from is printed whole, as the classic view prints it).
	from int
}

// paint appends the part's lines to buf, each ending in a newline.
func (pp *plainPainter) paint(buf []byte, part plainPart) []byte {
	es := part.es
	fam := func(i int) transcript.Kind {
		if i < part.base {
			return part.prev
		}
		return runFamily(es[i-part.base].Content)
	}
	var run tui.Run
	for i := 0; i < len(es); {
		start := part.base + i
		f := runFamily(es[i].Content)
		j := i + 1
		if f != "" {
			for j < len(es) && (part.base+j)%runAlign != 0 && runFamily(es[j].Content) == f {
				j++
			}
		}
		end := part.base + j
		if end <= part.from {
			i = j
			continue
		}
		sep := start > 0
		if start > 0 && start%runAlign == 0 {
			sep = f == "" || fam(start-1) != f
		}
		if a, ok := es[i].Content.(transcript.Agent); ok {
			if md := markdownSource(a.Markdown); md != "" {
				if sep {
					buf = append(buf, '\n')
				}
				buf = append(append(buf, md...), '\n')
			}
			i = j
			continue
		}
		var lines []string
		{
			run.Entries = append(run.Entries[:0], es[i:j]...)
			run.Open = run.Open[:0]
			for k := start; k < end; k++ {
				run.Open = append(run.Open, k >= part.settled)
			}
			ok := false
			if !pp.slow {
				lines, ok = pp.quickRun(run)
			}
			if !ok {
				lines = pp.p.Paint(run, pp.width)
			}
		}
		if len(lines) > 0 {
			if sep {
				buf = append(buf, '\n')
			}
			for _, l := range lines {
				buf = append(buf, l...)
				buf = append(buf, '\n')
			}
		}
		i = j
	}
	return buf
}

// markdownSource is an answer's markdown as written, without the blank
// lines around it and without carriage returns, escape sequences and other
// control characters a terminal would act on (tabs stay); "" when it is
// blank.
func markdownSource(md string) string {
	if strings.ContainsFunc(md, isControl) {
		md = strings.Map(func(r rune) rune {
			if isControl(r) {
				return -1
			}
			return r
		}, ansi.Strip(md))
	}
	// The first line that is not blank, to the end of the last one.
	lo := 0
	for lo < len(md) {
		nl := strings.IndexByte(md[lo:], '\n')
		if nl < 0 || strings.TrimSpace(md[lo:lo+nl]) != "" {
			break
		}
		lo += nl + 1
	}
	md = strings.TrimRight(md[lo:], " \t\n")
	if strings.TrimSpace(md) == "" {
		return ""
	}
	return md
}

// isControl reports whether r is a control character other than a newline
// or a tab.
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || (r >= 0x80 && r < 0xa0)
}

// refFamily is runFamily for an entry the index describes.
func refFamily(k transcript.Kind) transcript.Kind {
	if k == transcript.KindReasoning || k == transcript.KindTool {
		return k
	}
	return ""
}

// plainPartLen is how many entries a part of the plain form holds: a
// multiple of runAlign, so every part holds whole runs.
const plainPartLen = 4 * runAlign

// plainInFlight bounds the log bytes of the parts read and not yet
// written (one part always goes, however large).
const plainInFlight = 4 << 20

// plainStream prints the entries from lo (a multiple of runAlign) on in
// the plain form through the cursor (see partStream). prev is the family
// of entry lo-1.
func plainStream(d *history.IndexDoc, f *os.File, cur *history.RefCursor, lo int, prev transcript.Kind, from int, pp *plainPainter, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	err := partStream(d, f, cur, lo, prev, bw, func(buf []byte, part plainPart) ([]byte, error) {
		part.from = from
		return pp.paint(buf, part), nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// partStream writes the entries from lo on, read through the cursor, in
// parts of plainPartLen entries, each as render writes it: one goroutine
// walks the refs, each part is decoded and rendered on a goroutine of its
// own, and the parts are written to bw in order. The log bytes of the
// parts in flight are bounded, and their buffers are reused. prev is the
// family of entry lo-1, for the first part.
func partStream(d *history.IndexDoc, f *os.File, cur *history.RefCursor, lo int, prev transcript.Kind, bw *bufio.Writer, render func([]byte, plainPart) ([]byte, error)) error {
	n, settled := d.Len(), d.Settled()
	type shown struct {
		buf  *[]byte
		err  error
		cost int
	}
	results := make(chan chan shown, runtime.GOMAXPROCS(0)+1)
	// Each decoder reuses its buffer for the log bytes of the parts it
	// decodes.
	decs := sync.Pool{New: func() any { return d.NewDecoder(f) }}
	b := newByteBudget(plainInFlight)
	stop := make(chan struct{})
	defer func() {
		close(stop)
		b.close()
	}()
	go func() {
		defer close(results)
		for lo < n {
			refs, err := cur.Next(min(plainPartLen, n-lo))
			if err == nil && len(refs) == 0 {
				err = fmt.Errorf("log show: the index ends at entry %d of %d", lo, n)
			}
			res := make(chan shown, 1)
			select {
			case results <- res:
			case <-stop:
				return
			}
			if err != nil {
				res <- shown{err: err}
				return
			}
			cost := 0
			for _, r := range refs {
				cost += int(r.Len)
			}
			if !b.take(cost) {
				res <- shown{err: errStopped}
				return
			}
			part := plainPart{base: lo, prev: prev, settled: settled}
			go func() {
				dec := decs.Get().(*history.EntryDecoder)
				es, err := dec.Decode(refs)
				decs.Put(dec)
				if err != nil {
					res <- shown{err: err, cost: cost}
					return
				}
				part.es = es
				buf := partBufs.Get().(*[]byte)
				*buf, err = render((*buf)[:0], part)
				res <- shown{buf: buf, err: err, cost: cost}
			}()
			prev = refFamily(refs[len(refs)-1].Kind)
			lo += len(refs)
		}
	}()
	for res := range results {
		s := <-res
		b.give(s.cost)
		if s.err != nil {
			return s.err
		}
		_, err := bw.Write(*s.buf)
		if cap(*s.buf) <= 4<<20 {
			partBufs.Put(s.buf)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var errStopped = errors.New("log show: stopped")

// partBufs holds the buffers parts are painted into.
var partBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// byteBudget bounds a number of bytes in use across goroutines.
type byteBudget struct {
	mu     sync.Mutex
	cond   *sync.Cond
	used   int
	limit  int
	closed bool
}

func newByteBudget(limit int) *byteBudget {
	b := &byteBudget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// take waits until n bytes fit (any n fits when none are in use); false
// when the budget was closed.
func (b *byteBudget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.closed && b.used > 0 && b.used+n > b.limit {
		b.cond.Wait()
	}
	b.used += n
	return !b.closed
}

func (b *byteBudget) give(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

func (b *byteBudget) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cond.Broadcast()
}

// plainShow is streamShow for the plain form: the log at path printed
// through its page index, a part at a time (see plainStream). It reports
// done false, having written nothing, when the log has no usable index.
func plainShow(path string, o showOptions, _ tui.Theme, stdio IO) (done bool, err error) {
	f, ix, d, ok := openShowIndex(path)
	if !ok {
		return false, nil
	}
	defer f.Close()
	defer ix.Close()
	from, err := showFrom(d.Len(), o, func(id string) int {
		i, err := d.Find(id)
		if err != nil {
			return -1
		}
		return i
	})
	if err != nil {
		return true, err
	}
	defer streamGC()()
	// Parts start at multiples of runAlign: the one that holds from, and
	// the family of the entry before it decides its first separator.
	lo := from - from%runAlign
	cur, err := d.Forward(max(lo-1, 0))
	if err != nil {
		return false, nil
	}
	var prev transcript.Kind
	if lo > 0 {
		refs, err := cur.Next(1)
		if err != nil || len(refs) != 1 {
			return false, nil
		}
		prev = refFamily(refs[0].Kind)
	}
	if k := ix.Problems(); k > 0 {
		io.WriteString(stdio.Err, problemsLine(path, k))
	}
	return true, plainStream(d, f, cur, lo, prev, from, newPlainPainter(o.width), stdio.Out)
}

// writePlainDocument writes a document read whole in the plain form, from
// entry from on.
func writePlainDocument(w io.Writer, doc transcript.Document, from, width int) error {
	settled := doc.Len()
	for settled > 0 && doc.IsOpen(settled-1) {
		settled--
	}
	buf := newPlainPainter(width).paint(nil, plainPart{es: doc.Entries(), settled: settled, from: from})
	_, err := w.Write(buf)
	return err
}
