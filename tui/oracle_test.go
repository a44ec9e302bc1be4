package tui

import (
	"bytes"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
)

// The terminal oracle: output bytes go into a real terminal emulator at a
// fixed size, and the resulting grid (text, plus a class for each cell's
// foreground color and boldness) is compared with a golden file. A painter
// or view that writes the intended bytes produces the intended grid no
// matter how it spells its escape sequences.

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// terminal is an emulator with its scrollback, at a fixed size.
type terminal struct {
	em   *vt.Emulator
	w, h int
}

func newTerminal(w, h int) *terminal {
	em := vt.NewEmulator(w, h)
	return &terminal{em: em, w: w, h: h}
}

// resize changes the terminal's size; this emulator cuts lines that no
// longer fit rather than rewrapping them.
func (t *terminal) resize(w, h int) {
	t.em.Resize(w, h)
	t.w, t.h = w, h
}

func (t *terminal) write(b []byte) {
	if _, err := t.em.Write(b); err != nil {
		panic(err)
	}
}

// frame draws a full-screen frame the way the fullscreen view is shown:
// home, clear, then the lines.
func (t *terminal) frame(lines []string) {
	t.write([]byte("\x1b[H\x1b[2J" + strings.Join(lines, "\r\n")))
}

// screenRows returns the text of every screen row, trailing spaces removed.
func (t *terminal) screenRows() []string {
	rows := make([]string, t.h)
	for y := range t.h {
		rows[y] = rowText(func(x int) *uv.Cell { return t.em.CellAt(x, y) }, t.w)
	}
	return rows
}

// scrollbackRows returns the rows that scrolled off the top, oldest first.
func (t *terminal) scrollbackRows() []string {
	sb := t.em.Scrollback()
	rows := make([]string, sb.Len())
	for y := range rows {
		line := sb.Line(y)
		rows[y] = rowText(func(x int) *uv.Cell {
			if x < len(line) {
				return &line[x]
			}
			return nil
		}, len(line))
	}
	return rows
}

func rowText(cell func(x int) *uv.Cell, w int) string {
	var b strings.Builder
	for x := 0; x < w; x++ {
		c := cell(x)
		if c == nil {
			b.WriteByte(' ')
			continue
		}
		if c.Width == 0 && c.Content == "" {
			continue // the second half of a wide character
		}
		if c.Content == "" {
			b.WriteByte(' ')
		} else {
			b.WriteString(c.Content)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// attrRow encodes each cell's key attributes: '.' for the default, a letter
// for the foreground color class (r g y b m c, w light gray, k dark gray),
// upper case when bold ('B' bold default color is '#').
func attrRow(cell func(x int) *uv.Cell, w int) string {
	var b strings.Builder
	for x := 0; x < w; x++ {
		c := cell(x)
		if c == nil {
			b.WriteByte('.')
			continue
		}
		if c.Width == 0 && c.Content == "" {
			continue
		}
		ch := colorClass(c.Style.Fg)
		if c.Style.Attrs&uv.AttrBold != 0 {
			if ch == '.' {
				ch = '#'
			} else {
				ch -= 'a' - 'A'
			}
		}
		if c.Content == "" || c.Content == " " {
			if c.Style.Bg == nil {
				ch = '.'
			}
		}
		b.WriteByte(ch)
	}
	return strings.TrimRight(b.String(), ".")
}

func colorClass(c color.Color) byte {
	if c == nil {
		return '.'
	}
	r16, g16, b16, _ := c.RGBA()
	r, g, bl := float64(r16)/65535, float64(g16)/65535, float64(b16)/65535
	mx, mn := max(r, g, bl), min(r, g, bl)
	l := (mx + mn) / 2
	if mx-mn < 0.15 {
		if l >= 0.45 {
			return 'w'
		}
		return 'k'
	}
	var h float64
	switch mx {
	case r:
		h = 60 * (g - bl) / (mx - mn)
	case g:
		h = 60*(bl-r)/(mx-mn) + 120
	default:
		h = 60*(r-g)/(mx-mn) + 240
	}
	if h < 0 {
		h += 360
	}
	switch {
	case h < 20 || h >= 330:
		return 'r'
	case h < 70:
		return 'y'
	case h < 170:
		return 'g'
	case h < 200:
		return 'c'
	case h < 265:
		return 'b'
	}
	return 'm'
}

// grid renders the terminal as golden text: the scrollback (if any), the
// screen, and the attribute rows of both.
func (t *terminal) grid() string {
	var b strings.Builder
	sb := t.em.Scrollback()
	if sb.Len() > 0 {
		b.WriteString("-- scrollback --\n")
		for y, r := range t.scrollbackRows() {
			line := sb.Line(y)
			writeRow(&b, r, attrRow(func(x int) *uv.Cell {
				if x < len(line) {
					return &line[x]
				}
				return nil
			}, len(line)))
		}
	}
	b.WriteString("-- screen --\n")
	rows := t.screenRows()
	last := len(rows)
	for last > 0 && rows[last-1] == "" {
		last--
	}
	for y := range last {
		writeRow(&b, rows[y], attrRow(func(x int) *uv.Cell { return t.em.CellAt(x, y) }, t.w))
	}
	return b.String()
}

// writeRow writes "|text" and, when any cell is styled, "~attrs" under it.
func writeRow(b *strings.Builder, text, attrs string) {
	fmt.Fprintf(b, "|%s\n", text)
	if attrs != "" {
		fmt.Fprintf(b, "~%s\n", attrs)
	}
}

// golden compares got with testdata/name.golden, or rewrites the file when
// the test runs with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from the golden file (go test ./tui -update rewrites it)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// paintGrid paints lines as a frame on a terminal w columns wide, tall
// enough to hold them, and returns the grid.
func paintGrid(w int, lines []string) string {
	term := newTerminal(w, max(len(lines), 1))
	term.frame(lines)
	return term.grid()
}
