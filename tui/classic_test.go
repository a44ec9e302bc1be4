package tui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/transcript"
)

// streamAnswer is an answer with paragraphs, a code block, a table and a
// list, for streaming word by word.
const streamAnswer = "Here is the plan for the parser change, in three parts.\n\n" +
	"First, every error carries its line number, so the reader can jump to it.\n\n" +
	"```go\nfunc parse(r io.Reader) error {\n\treturn nil\n}\n```\n\n" +
	"| part | effort |\n|------|--------|\n| errors | small |\n| tests | medium |\n\n" +
	"- update the lexer\n- update the tests\n\nThat is all for now."

// tokens cuts s into word-sized pieces (spaces and newlines kept).
func tokens(s string) []string {
	var out []string
	start := 0
	for i := 1; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\n' {
			out = append(out, s[start:i])
			start = i
		}
	}
	return out
}

// allRows is the scrollback followed by the screen, trailing empty rows
// dropped: everything the person can scroll through.
func allRows(term *terminal) []string {
	rows := append(term.scrollbackRows(), term.screenRows()...)
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	return rows
}

func TestClassicPromotionPrintsEachLineOnce(t *testing.T) {
	t.Parallel()
	const w, h = 60, 12
	term := newTerminal(w, h)
	c := NewClassic(NewPainter(DarkTheme, ForClassic()))
	c.Mount()
	in := NewInline(writerFunc(term.write))

	d := doc(ent("h", transcript.Header{Name: "folio", Provider: "demo", Model: "demo-1"}), ent("u", transcript.User{Text: "Plan the parser change."}))
	d = must(d.Open(ent("a", transcript.Agent{Markdown: ""})))
	var text string
	var mid string
	toks := tokens(streamAnswer)
	for k, tok := range toks {
		text += tok
		d = must(d.Update("a", transcript.Agent{Markdown: text}))
		if _, err := in.Write(c.Sync(d, 1, w, h-1)); err != nil {
			t.Fatal(err)
		}
		if k == len(toks)/2 {
			mid = term.grid()
		}
	}
	d = must(d.Settle("a", nil))
	d = must(d.Append(ent("rc", transcript.TurnReceipt{Steps: []transcript.Step{{DurationMs: 2500, CompletionTokens: i64(120), GenerationDurationMs: f64(2000)}}})))
	if _, err := in.Write(c.Sync(d, 1, w, h-1)); err != nil {
		t.Fatal(err)
	}
	golden(t, "classic_midstream", mid)
	golden(t, "classic_settled", term.grid())

	// What the terminal holds is exactly the document painted once.
	var want []string
	fresh := newRenderCache(NewPainter(DarkTheme, ForClassic()))
	for i := 0; i < d.Len(); {
		b := runAt(d, i)
		p := fresh.run(d, b, w, func(string) bool { return false })
		for j := range p.Len() {
			want = append(want, strings.TrimRight(ansi.Strip(p.Line(j)), " "))
		}
		i = b.end
	}
	got := allRows(term)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("terminal rows differ from the document painted once:\n--- want\n%s\n--- got\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	for _, needle := range []string{"Here is the plan", "First, every error", "func parse", "update the lexer", "That is all"} {
		if n := strings.Count(strings.Join(got, "\n"), needle); n != 1 {
			t.Errorf("%q appears %d times in the terminal, want once", needle, n)
		}
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// Unmounted, the classic projection does no work at all.
func TestClassicIsLazy(t *testing.T) {
	t.Parallel()
	c := NewClassic(NewPainter(DarkTheme, ForClassic()))
	d := doc(mixed(600)...)
	if f := c.Sync(d, 1, 80, 20); len(f.Print)+len(f.Live) != 0 || c.cache.Renders != 0 {
		t.Fatalf("unmounted Sync did work: %d lines, %d renders", len(f.Print)+len(f.Live), c.cache.Renders)
	}
	c.Mount()
	if f := c.Sync(d, 1, 80, 20); len(f.Print) == 0 {
		t.Fatal("mounted Sync printed nothing")
	}
	c.Unmount()
	before := c.cache.Renders
	d = must(d.Append(ent("late", transcript.User{Text: "more"})))
	if f := c.Sync(d, 1, 80, 20); len(f.Print)+len(f.Live) != 0 || c.cache.Renders != before {
		t.Fatal("Sync after Unmount did work")
	}
}

// A trailing run of tool receipts waits in the live region until something
// follows it, so later receipts can still join its row.
func TestClassicHoldsTrailingRun(t *testing.T) {
	t.Parallel()
	c := NewClassic(NewPainter(DarkTheme, ForClassic()))
	c.Mount()
	d := doc(ent("u", transcript.User{Text: "go"}), okTool("t1", "read", "a.go", 3))
	f := c.Sync(d, 1, 80, 10)
	if len(f.Print) != 1 || len(f.Live) != 2 {
		t.Fatalf("print %q live %q; want the user line printed and the receipt live", f.Print, f.Live)
	}
	d = must(d.Append(okTool("t2", "read", "b.go", 4)))
	d = must(d.Append(ent("a", transcript.Agent{Markdown: "Done."})))
	f = c.Sync(d, 1, 80, 10)
	joined := ansi.Strip(strings.Join(f.Print, "\n"))
	if !strings.Contains(joined, "a.go") || !strings.Contains(joined, "b.go") || strings.Count(joined, "\n") != 3 {
		t.Fatalf("the receipts should print packed on one row, then the answer:\n%s", joined)
	}
}

// The bytes written per streamed token follow the size of the unstable
// tail, not the length of the answer: late tokens of a long answer cost
// about what early tokens of a short one cost.
func TestClassicBytesPerTokenFollowTheTail(t *testing.T) {
	t.Parallel()
	var para strings.Builder
	for i := range 120 {
		fmt.Fprintf(&para, "Paragraph %d has a few words in it to stream.\n\n", i)
	}
	answer := para.String()
	toks := tokens(answer)
	c := NewClassic(NewPainter(DarkTheme, ForClassic()))
	c.Mount()
	var out bytes.Buffer
	in := NewInline(&out)
	d := doc(ent("u", transcript.User{Text: "go"}))
	d = must(d.Open(ent("a", transcript.Agent{Markdown: ""})))
	perToken := make([]int, len(toks))
	printed := 0
	var text string
	for k, tok := range toks {
		text += tok
		d = must(d.Update("a", transcript.Agent{Markdown: text}))
		f := c.Sync(d, 1, 80, 20)
		for _, l := range f.Print {
			printed += len(l) + 2
		}
		n, err := in.Write(f)
		if err != nil {
			t.Fatal(err)
		}
		perToken[k] = n
	}
	avg := func(from, to int) float64 {
		s := 0
		for _, n := range perToken[from:to] {
			s += n
		}
		return float64(s) / float64(to-from)
	}
	early, late := avg(20, 220), avg(len(toks)-200, len(toks))
	t.Logf("answer %d bytes, %d tokens; bytes/token early %.1f, late %.1f; promoted %d bytes", len(answer), len(toks), early, late, printed)
	if late > early*1.5 {
		t.Fatalf("bytes per token grew with the answer: early %.1f, late %.1f", early, late)
	}
	total := 0
	for _, n := range perToken {
		total += n
	}
	// Everything written is the promoted text plus a redraw cost bounded by
	// the tail per token.
	if redraw := total - printed; float64(redraw)/float64(len(toks)) > 3*early {
		t.Fatalf("redraw bytes per token %.1f, far above the early cost %.1f", float64(redraw)/float64(len(toks)), early)
	}
}

// Resizing mid-stream: lines already printed stay as printed, the live
// region is redrawn at the new width, and nothing is duplicated or lost.
func TestClassicResizeMidStream(t *testing.T) {
	t.Parallel()
	term := newTerminal(40, 12)
	c := NewClassic(NewPainter(DarkTheme, ForClassic()))
	c.Mount()
	in := NewInline(writerFunc(term.write))
	in.Reflow = false // the emulator cuts lines on resize instead of rewrapping
	in.Resize(40)
	d := doc(ent("u", transcript.User{Text: "Plan the parser change."}))
	d = must(d.Open(ent("a", transcript.Agent{Markdown: ""})))
	width := 40
	var text string
	toks := tokens(streamAnswer)
	for k, tok := range toks {
		if k == len(toks)/3 {
			width = 70
			term.resize(width, 12)
			in.Resize(width)
		}
		text += tok
		d = must(d.Update("a", transcript.Agent{Markdown: text}))
		if _, err := in.Write(c.Sync(d, 1, width, 11)); err != nil {
			t.Fatal(err)
		}
	}
	d = must(d.Settle("a", nil))
	if _, err := in.Write(c.Sync(d, 1, width, 11)); err != nil {
		t.Fatal(err)
	}
	golden(t, "classic_resize", term.grid())
	all := strings.Join(allRows(term), "\n")
	for _, needle := range []string{"Plan the parser", "Here is the plan", "line number", "func parse", "update the lexer", "That is all for now."} {
		if n := strings.Count(all, needle); n != 1 {
			t.Errorf("%q appears %d times after the resize, want once:\n%s", needle, n, all)
		}
	}
}

// After the terminal narrows, a rewrapping terminal shows each old live
// line on more rows; the writer moves up over all of them before redrawing.
func TestInlineResizeCountsRewrappedRows(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	in := NewInline(&out)
	in.Resize(60)
	if _, err := in.Write(Frame{Live: []string{strings.Repeat("x", 60), "short"}}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	in.Resize(30)
	if _, err := in.Write(Frame{Live: []string{"y"}}); err != nil {
		t.Fatal(err)
	}
	// 60 columns now take 2 rows, "short" 1: up 2 from the last row.
	if got := out.String(); !strings.HasPrefix(got, "\r\x1b[2A"+eraseDown) {
		t.Fatalf("redraw after narrowing starts %q, want to move up 2 rows", got)
	}
}

// The writer never erases the screen from the first column: tmux takes an
// erase-below from the top-left corner for a screen clear and copies the
// screen into its scrollback, so a live region starting on the top row
// would leave a copy of itself there at every redraw. Each erase-below
// comes after the row was erased and the cursor moved to column 2.
func TestInlineNeverErasesFromTheFirstColumn(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	in := NewInline(&out)
	in.Resize(40)
	frames := []Frame{
		{Live: []string{"rule", "› draft", "footer"}},
		{Live: []string{"rule", "› draft 2", "footer"}},
		{Print: []string{"printed"}, Live: []string{"tail", "rule", "footer"}},
		{Live: []string{"footer"}},
	}
	for i, f := range frames {
		if i == 3 {
			in.Resize(20)
		}
		if _, err := in.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	got := out.String()
	n := strings.Count(got, "\x1b[J")
	if n != len(frames) {
		t.Fatalf("%d erases for %d frames in %q", n, len(frames), got)
	}
	if c := strings.Count(got, "\x1b[2K\x1b[2G\x1b[J"); c != n {
		t.Fatalf("%d of %d erase-belows start from the second column after erasing the row: %q", c, n, got)
	}
}

// Notices meant for the classic view show there and nowhere else.
func TestClassicOnlyNotices(t *testing.T) {
	t.Parallel()
	e := ent("n", transcript.Notice{Text: "scrollback is yours", Tone: transcript.ToneInfo, Audience: "classic"})
	if lines := NewPainter(DarkTheme).PaintEntry(e, 40, false); len(lines) != 0 {
		t.Fatalf("fullscreen painted a classic-only notice: %q", lines)
	}
	if lines := NewPainter(DarkTheme, ForClassic()).PaintEntry(e, 40, false); len(lines) != 1 {
		t.Fatalf("classic did not paint its notice: %q", lines)
	}
	v := newTestViewport(40, 4)
	v.SetDocument(doc(ent("u", transcript.User{Text: "hi"}), e), 1)
	if got := plain(v.Lines()); got[0] != "› hi" || strings.Join(got[1:], "") != "" {
		t.Fatalf("a hidden notice took space in the viewport: %q", got)
	}
}

func TestFramePrintCmd(t *testing.T) {
	t.Parallel()
	if (Frame{Live: []string{"x"}}).PrintCmd() != nil {
		t.Fatal("a frame with nothing to print returned a command")
	}
	if (Frame{Print: []string{"a", "b"}}).PrintCmd() == nil {
		t.Fatal("a frame with lines to print returned no command")
	}
	if got := (Frame{Live: []string{"a", "b"}}).View(); got != "a\nb" {
		t.Fatalf("View = %q", got)
	}
}
