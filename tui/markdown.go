package tui

import (
	"strings"
	"sync"
	"sync/atomic"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
)

// stableEnd returns the byte offset in markdown src up to which the text
// consists of complete blocks, scanning from offset from, which must itself
// be 0 or a value stableEnd returned for a prefix of src.
//
// A block is complete when a blank line outside a fenced code block follows
// it, or when it is a fenced code block whose closing fence line has ended.
// Tables, lists and paragraphs therefore become stable at the blank line
// after them. A last line without its newline is never stable: more text may
// still join it. Text before the returned offset renders the same however
// the text after it grows, which is what lets the classic view promote it to
// scrollback and the fullscreen view render it once.
func stableEnd(src string, from int) int {
	stable := from
	var fence string // the opening fence run while inside a fenced block
	pos := from
	for pos < len(src) {
		nl := strings.IndexByte(src[pos:], '\n')
		if nl < 0 {
			break // an unterminated last line is never stable
		}
		line := src[pos : pos+nl]
		pos += nl + 1
		if fence != "" {
			if closesFence(line, fence) {
				fence = ""
				stable = pos
			}
			continue
		}
		if f := opensFence(line); f != "" {
			fence = f
			continue
		}
		if strings.TrimSpace(line) == "" {
			stable = pos
		}
	}
	return stable
}

// opensFence returns the fence run (``` or ~~~, three or more) that line
// opens, or "".
func opensFence(line string) string {
	t := trimIndent(line)
	if t == "" {
		return ""
	}
	c := t[0]
	if c != '`' && c != '~' {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.IndexByte(t[n:], '`') >= 0) {
		return ""
	}
	return t[:n]
}

func closesFence(line, fence string) bool {
	t := trimIndent(line)
	n := 0
	for n < len(t) && t[n] == fence[0] {
		n++
	}
	return n >= len(fence) && strings.TrimSpace(t[n:]) == ""
}

// trimIndent drops up to three leading spaces; a line indented further is
// an indented code line, not a fence.
func trimIndent(line string) string {
	for i := 0; i < 3 && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line
}

// splitBlocks cuts the stable text src[:StableEnd] into its blocks, each
// ending at a boundary StableEnd would report.
func splitBlocks(src string) []string {
	var out []string
	start := 0
	for start < len(src) {
		end := nextBoundary(src, start)
		if end <= start {
			out = append(out, src[start:])
			break
		}
		out = append(out, src[start:end])
		start = end
	}
	return out
}

// nextBoundary returns the first block boundary after from, or from when
// there is none.
func nextBoundary(src string, from int) int {
	var fence string
	pos := from
	for pos < len(src) {
		nl := strings.IndexByte(src[pos:], '\n')
		if nl < 0 {
			return from
		}
		line := src[pos : pos+nl]
		pos += nl + 1
		if fence != "" {
			if closesFence(line, fence) {
				return pos
			}
			continue
		}
		if f := opensFence(line); f != "" {
			fence = f
			continue
		}
		if strings.TrimSpace(line) == "" {
			return pos
		}
	}
	return from
}

// blockRenders counts markdown blocks rendered, so tests can prove work is
// skipped.
var blockRenders atomic.Int64

// mdRenderers holds Glamour renderers by theme and width. A Glamour
// renderer keeps state while it renders, so each is used by one caller at
// a time; a pool per key lets callers on several goroutines (folio log
// show paints parts in parallel) render at once.
var mdRenderers sync.Map // mdKey → *sync.Pool of *glamour.TermRenderer

type mdKey struct {
	dark, plain bool
	width       int
}

// markdownRenderer returns a renderer for th at width, taken from its
// pool; the caller gives it back with putRenderer.
func markdownRenderer(th Theme, width int) (*glamour.TermRenderer, *sync.Pool) {
	k := mdKey{dark: th.Dark, plain: th.Plain(), width: width}
	p, ok := mdRenderers.Load(k)
	if !ok {
		p, _ = mdRenderers.LoadOrStore(k, &sync.Pool{New: func() any { return newRenderer(k) }})
	}
	pool := p.(*sync.Pool)
	return pool.Get().(*glamour.TermRenderer), pool
}

func newRenderer(k mdKey) *glamour.TermRenderer {
	cfg := styles.DarkStyleConfig
	switch {
	case k.plain:
		cfg = styles.ASCIIStyleConfig
	case !k.dark:
		cfg = styles.LightStyleConfig
	}
	// Folio lays out its own gutters; the document gets no margin or padding
	// lines of its own.
	zero := uint(0)
	cfg.Document.Margin = &zero
	cfg.Document.BlockPrefix = ""
	cfg.Document.BlockSuffix = ""
	tr, err := glamour.NewTermRenderer(glamour.WithStyles(cfg), glamour.WithWordWrap(k.width))
	if err != nil {
		// The configuration is fixed in code; failing here is a bug.
		panic("tui: glamour renderer: " + err.Error())
	}
	return tr
}

// renderBlock renders one markdown block to trimmed lines no wider than
// width. Glamour's errors (none are expected for text input) fall back to
// the source text, so an answer is never lost.
func renderBlock(block string, th Theme, width int) []string {
	if strings.TrimSpace(block) == "" {
		return nil
	}
	blockRenders.Add(1)
	src := mathToText(sanitizeMarkdown(block))
	if w, ok := tableWidth(src); ok && w < width {
		// Glamour stretches a table to the wrap width; rendering it at its
		// own width sizes its columns to their content.
		width = w
	}
	tr, pool := markdownRenderer(th, width)
	out, err := tr.Render(src)
	pool.Put(tr)
	if err != nil {
		return wrap(block, width)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trimRight(l)
	}
	return clamp(trimBlank(lines), width)
}

// sanitizeMarkdown removes escape sequences and control characters from
// answer text. Tabs become four spaces before rendering: markdown reads a
// tab as reaching the next multiple of four anyway, and a tab on the
// terminal would make the painted width depend on the column.
func sanitizeMarkdown(s string) string { return sanitize(s) }

// tableWidth is the width a markdown table block needs to show its cells
// unwrapped: the widest cell of each column (as written, which bounds
// what it renders to) plus a space either side and the rules between
// columns. ok is false when the block is not a table.
func tableWidth(block string) (int, bool) {
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) < 2 || !isTableDelimiter(lines[1]) {
		return 0, false
	}
	var widths []int
	for i, l := range lines {
		if i == 1 {
			continue
		}
		for j, cell := range tableCells(l) {
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], textWidth(strings.TrimSpace(cell)))
		}
	}
	if len(widths) == 0 {
		return 0, false
	}
	w := len(widths) + 1
	for _, c := range widths {
		w += c + 2
	}
	return w, true
}

// tableCells splits a table row at its unescaped pipes, dropping the outer
// ones.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, row[start:i])
			start = i + 1
		}
	}
	return append(cells, row[start:])
}

// isTableDelimiter reports whether line is a table's delimiter row, such
// as "|---|:-:|".
func isTableDelimiter(line string) bool {
	cells := tableCells(line)
	for _, c := range cells {
		c = strings.TrimSpace(c)
		c = strings.TrimPrefix(strings.TrimSuffix(c, ":"), ":")
		if len(c) < 1 || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return len(cells) > 0
}
