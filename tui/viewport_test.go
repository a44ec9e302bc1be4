package tui

import (
	"fmt"
	"image/color"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/transcript"
)

func newTestViewport(w, h int) *viewport {
	return newViewport(newRenderCache(NewPainter(DarkTheme)), w, h)
}

func must(d transcript.Document, err error) transcript.Document {
	if err != nil {
		panic(err)
	}
	return d
}

func plain(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(ansi.Strip(l), " ")
	}
	return out
}

func userEntries(from, to int) []transcript.Entry {
	var out []transcript.Entry
	for i := from; i < to; i++ {
		out = append(out, ent(fmt.Sprintf("u%d", i), transcript.User{Text: fmt.Sprintf("message %d", i)}))
	}
	return out
}

func TestViewportFollowsTheLiveEdge(t *testing.T) {
	t.Parallel()
	v := newTestViewport(30, 5)
	d := doc(userEntries(0, 20)...)
	v.SetDocument(d, 1)
	got := plain(v.Lines())
	if got[4] != "› message 19" || !v.Following() {
		t.Fatalf("not at the live edge: %q", got)
	}
	d = must(d.Append(ent("u20", transcript.User{Text: "message 20"})))
	v.SetDocument(d, 1)
	if got := plain(v.Lines()); got[4] != "› message 20" {
		t.Fatalf("did not follow the append: %q", got)
	}
	if v.Unseen() != 0 {
		t.Fatalf("unseen = %d while following", v.Unseen())
	}
}

func TestViewportKeepsReadingPositionAndCountsUnseen(t *testing.T) {
	t.Parallel()
	v := newTestViewport(30, 5)
	d := doc(userEntries(0, 20)...)
	v.SetDocument(d, 1)
	v.Lines()
	v.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	before := plain(v.Lines())
	if v.Following() {
		t.Fatal("page up did not leave the live edge")
	}
	for i := 20; i < 23; i++ {
		d = must(d.Append(ent(fmt.Sprintf("u%d", i), transcript.User{Text: fmt.Sprintf("message %d", i)})))
		v.SetDocument(d, 1)
	}
	after := plain(v.Lines())
	if strings.Join(before[:4], "\n") != strings.Join(after[:4], "\n") {
		t.Fatalf("reading position moved on append:\nbefore %q\nafter  %q", before, after)
	}
	if v.Unseen() != 3 || !strings.Contains(after[4], "3 new ↓") {
		t.Fatalf("unseen = %d, last line %q; want 3 new", v.Unseen(), after[4])
	}
	v.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	if got := plain(v.Lines()); got[4] != "› message 22" || v.Unseen() != 0 {
		t.Fatalf("End did not jump to the latest: %q unseen %d", got, v.Unseen())
	}
}

func TestViewportNewGenerationStartsAtLiveEdge(t *testing.T) {
	t.Parallel()
	v := newTestViewport(30, 5)
	d := doc(userEntries(0, 20)...)
	v.SetDocument(d, 1)
	v.Top()
	if v.Following() {
		t.Fatal("Top did not leave the live edge")
	}
	d2 := must(d.Append(ent("x", transcript.User{Text: "other"})))
	v.SetDocument(d2, 2) // a replacement reusing the same IDs
	got := plain(v.Lines())
	if !v.Following() || v.Unseen() != 0 || got[4] != "› other" {
		t.Fatalf("new generation kept the old position: following=%v unseen=%d %q", v.Following(), v.Unseen(), got)
	}
}

func TestViewportNavigation(t *testing.T) {
	t.Parallel()
	v := newTestViewport(30, 4)
	v.SetDocument(doc(userEntries(0, 10)...), 1)
	// Each message is 2 lines (separator + text) except the first.
	v.Update(tea.KeyPressMsg{Code: tea.KeyHome})
	if got := plain(v.Lines()); got[0] != "› message 0" {
		t.Fatalf("Home: %q", got)
	}
	v.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if got := plain(v.Lines()); got[0] != "" || got[1] != "› message 2" {
		t.Fatalf("wheel down 3 lines: %q", got)
	}
	v.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if got := plain(v.Lines()); got[0] != "› message 2" {
		t.Fatalf("down: %q", got)
	}
	v.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	v.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if got := plain(v.Lines()); got[0] != "› message 0" {
		t.Fatalf("wheel up and up: %q", got)
	}
	v.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	if got := plain(v.Lines()); got[0] != "" || got[1] != "› message 2" {
		t.Fatalf("page down: %q", got)
	}
	for range 20 {
		v.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	}
	if !v.Following() {
		t.Fatal("paging to the end did not return to the live edge")
	}
}

// Resize reflows from the source and keeps the entry at the top.
func TestViewportResizeReflows(t *testing.T) {
	t.Parallel()
	long := "This is a long message that wraps differently at each width so reflow can be seen."
	var es []transcript.Entry
	for i := range 8 {
		es = append(es, ent(fmt.Sprintf("u%d", i), transcript.User{Text: fmt.Sprintf("%d. %s", i, long)}))
	}
	v := newTestViewport(60, 8)
	v.SetDocument(doc(es...), 1)
	v.Top()
	v.ScrollBy(3) // into the second message
	var grids []string
	for _, w := range []int{60, 30, 90} {
		v.SetSize(w, 8)
		lines := v.Lines()
		term := newTerminal(w, 8)
		term.frame(lines)
		grids = append(grids, fmt.Sprintf("== width %d\n%s", w, term.grid()))
		if top := plain(lines)[0]; !strings.HasPrefix(top, "› 1. This") {
			t.Errorf("width %d: the anchor entry u1 is not at the top: %q", w, plain(lines))
		}
	}
	golden(t, "viewport_resize", strings.Join(grids, ""))
}

// A streaming answer mid-stream and settled: same ID, text shown once, and
// settled lines equal to the streamed ones.
func TestViewportStreamingThenSettled(t *testing.T) {
	t.Parallel()
	v := newTestViewport(50, 16)
	d := doc(ent("u", transcript.User{Text: "Explain the plan."}))
	d = must(d.Open(ent("a", transcript.Agent{Markdown: "First paragraph of the answer.\n\nSecond para"})))
	v.SetDocument(d, 1)
	mid := v.Lines()
	d = must(d.Update("a", transcript.Agent{Markdown: "First paragraph of the answer.\n\nSecond paragraph, complete.\n\n- a list\n"}))
	v.SetDocument(d, 1)
	v.Lines()
	d = must(d.Settle("a", nil))
	v.SetDocument(d, 1)
	settled := v.Lines()

	var b strings.Builder
	for _, f := range [][]string{mid, settled} {
		term := newTerminal(50, 16)
		term.frame(f)
		b.WriteString(term.grid())
		b.WriteString("==\n")
	}
	golden(t, "viewport_streaming", b.String())
	text := strings.Join(plain(settled), "\n")
	if strings.Count(text, "First paragraph") != 1 || strings.Count(text, "Second paragraph") != 1 {
		t.Fatalf("settled text duplicated or lost:\n%s", text)
	}
	// The settled answer paints exactly what a fresh painter paints.
	fresh := newTestViewport(50, 16)
	fresh.SetDocument(d, 1)
	if strings.Join(fresh.Lines(), "\n") != strings.Join(settled, "\n") {
		t.Fatalf("settled from stream differs from a fresh paint:\n%s\n--\n%s", strings.Join(plain(settled), "\n"), strings.Join(plain(fresh.Lines()), "\n"))
	}
}

// A frame paints only visible runs: with a warm cache, a frame over a long
// document paints nothing new, and touching the top paints only the top.
func TestViewportPaintsOnlyVisibleRuns(t *testing.T) {
	t.Parallel()
	d := doc(mixed(20000)...)
	v := newTestViewport(80, 30)
	v.SetDocument(d, 1)
	v.Lines()
	first := v.cache.Renders
	if first > 40 {
		t.Fatalf("first frame painted %d runs; want only the visible ones", first)
	}
	v.Lines()
	if v.cache.Renders != first {
		t.Fatalf("second frame repainted %d runs", v.cache.Renders-first)
	}
	v.Top()
	v.Lines()
	if n := v.cache.Renders - first; n > 40 {
		t.Fatalf("jumping to the top painted %d runs", n)
	}
}

func TestViewportExpandToggle(t *testing.T) {
	t.Parallel()
	d := doc(ent("u", transcript.User{Text: "hi"}), ent("f", transcript.Failure{Reason: "x", Headline: "It failed.", Detail: "stack trace here"}))
	v := newTestViewport(40, 6)
	v.SetDocument(d, 1)
	if strings.Contains(strings.Join(plain(v.Lines()), "\n"), "stack trace") {
		t.Fatal("detail shown before expanding")
	}
	v.Update(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	if !v.Expanded("f") || !strings.Contains(strings.Join(plain(v.Lines()), "\n"), "stack trace") {
		t.Fatalf("ctrl+o did not expand the failure: %q", plain(v.Lines()))
	}
}

// A replacement during streaming: the new generation reuses the entry ID,
// and nothing of the old stream's text appears afterwards, not even text
// that arrives late for the old document.
func TestViewportReplaceDuringStreaming(t *testing.T) {
	t.Parallel()
	v := newTestViewport(50, 10)
	old := doc(ent("u", transcript.User{Text: "first question"}))
	old = must(old.Open(ent("a", transcript.Agent{Markdown: "Old answer, first block.\n\nOld tail"})))
	v.SetDocument(old, 1)
	v.Lines()
	repl := doc(ent("u", transcript.User{Text: "second question"}))
	repl = must(repl.Open(ent("a", transcript.Agent{Markdown: "New"})))
	v.SetDocument(repl, 2)
	got := strings.Join(plain(v.Lines()), "\n")
	if strings.Contains(got, "Old") || !strings.Contains(got, "New") {
		t.Fatalf("old stream text shown after the replacement:\n%s", got)
	}
	// The store drops the old lease's late text; the view, given only the
	// new document, never shows it.
	repl = must(repl.Update("a", transcript.Agent{Markdown: "New answer.\n\nMore"}))
	v.SetDocument(repl, 2)
	got = strings.Join(plain(v.Lines()), "\n")
	if strings.Contains(got, "Old") || !strings.Contains(got, "New answer.") {
		t.Fatalf("after the next update:\n%s", got)
	}
	term := newTerminal(50, 10)
	term.frame(v.Lines())
	golden(t, "viewport_replace_streaming", term.grid())
}

func TestViewportFollowsBackgroundColor(t *testing.T) {
	t.Parallel()
	v := newTestViewport(40, 3)
	v.SetDocument(doc(ent("n", transcript.Notice{Text: "careful", Tone: transcript.ToneWarn})), 1)
	dark := strings.Join(v.Lines(), "\n")
	v.Update(tea.BackgroundColorMsg{Color: color.White})
	light := strings.Join(v.Lines(), "\n")
	if dark == light || v.cache.Painter().Theme().Dark {
		t.Fatal("a light background did not change the palette")
	}
}

// When a streamed answer settles, its stream state becomes the cached
// lines: the answer is not painted again from scratch.
//
// Not parallel: it reads the package's block-render counter.
func TestSettlementReusesStreamState(t *testing.T) {
	var sb strings.Builder
	for i := range 50 {
		fmt.Fprintf(&sb, "Paragraph %d.\n\n", i)
	}
	d := doc(ent("u", transcript.User{Text: "go"}))
	d = must(d.Open(ent("a", transcript.Agent{Markdown: sb.String() + "Last"})))
	v := newTestViewport(60, 10)
	v.SetDocument(d, 1)
	v.Lines()
	before := blockRenders.Load()
	d = must(d.Settle("a", nil))
	v.SetDocument(d, 1)
	v.Lines()
	if n := blockRenders.Load() - before; n > 2 {
		t.Fatalf("settling rendered %d markdown blocks; want only the tail", n)
	}
	// Without the stream state, the same settlement renders every block.
	fresh := newTestViewport(60, 10)
	before = blockRenders.Load()
	fresh.SetDocument(d, 1)
	fresh.Lines()
	if n := blockRenders.Load() - before; n < 50 {
		t.Fatalf("a fresh paint rendered only %d blocks; the check above proves nothing", n)
	}
}

// A long stretch of tool calls is painted in bounded runs that join
// without a gap, so finding the run at an anchor never scans the stretch.
func TestLongToolStretchIsSplitWithoutGaps(t *testing.T) {
	t.Parallel()
	es := []transcript.Entry{ent("u", transcript.User{Text: "go"})}
	for i := range 300 {
		es = append(es, okTool(fmt.Sprintf("t%d", i), "read", fmt.Sprintf("f%03d.go", i), 5))
	}
	d := doc(es...)
	if b := runAt(d, 150); b.end-b.start > maxRun {
		t.Fatalf("run of %d entries exceeds %d", b.end-b.start, maxRun)
	}
	v := newTestViewport(200, 400)
	v.SetDocument(d, 1)
	lines := plain(v.Lines())
	// One separator after the user line, then trailing padding only.
	text := strings.TrimRight(strings.Join(lines, "\n"), "\n")
	if strings.Count(text, "\n\n") != 1 {
		t.Fatalf("gaps inside the tool stretch:\n%s", text)
	}
	if strings.Count(text, "✓ read") != 300 {
		t.Fatalf("receipts shown %d times, want 300", strings.Count(text, "✓ read"))
	}
}

// A reader inside a streaming answer keeps their line while the answer
// grows below them and when it settles.
func TestViewportAnchorInsideStreamingAnswer(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	for i := range 30 {
		fmt.Fprintf(&sb, "Paragraph %d of the answer.\n\n", i)
	}
	d := doc(ent("u", transcript.User{Text: "go"}))
	d = must(d.Open(ent("a", transcript.Agent{Markdown: sb.String()})))
	v := newTestViewport(40, 6)
	v.SetDocument(d, 1)
	v.Lines()
	v.ScrollBy(-20)
	before := plain(v.Lines())
	for i := 30; i < 40; i++ {
		fmt.Fprintf(&sb, "Paragraph %d of the answer.\n\n", i)
		d = must(d.Update("a", transcript.Agent{Markdown: sb.String()}))
		v.SetDocument(d, 1)
		if got := plain(v.Lines()); strings.Join(got[:5], "|") != strings.Join(before[:5], "|") {
			t.Fatalf("position moved while streaming:\nbefore %q\nafter  %q", before, got)
		}
	}
	d = must(d.Settle("a", nil))
	v.SetDocument(d, 1)
	if got := plain(v.Lines()); strings.Join(got[:5], "|") != strings.Join(before[:5], "|") {
		t.Fatalf("position moved at settlement:\nbefore %q\nafter  %q", before, got)
	}
	if v.Following() {
		t.Fatal("the reader was pulled back to the live edge")
	}
}
