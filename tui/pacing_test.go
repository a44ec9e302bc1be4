package tui

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/transcript"
)

// pacedAnswer is three paragraphs, each with a word found nowhere else, so
// a grid shows which of them are visible and how often.
const pacedAnswer = "Alpha opens the answer with a first paragraph of plain words that run on for a while.\n\n" +
	"Bravo follows as the second paragraph, again with enough words to take the pacer some time.\n\n" +
	"Charlie closes the answer with a third paragraph that only settlement should reveal in full."

// A streamed answer accepted all at once belongs to the source at once,
// while both views paint only the prefix the pacer has revealed; settling
// shows the rest under the same entry ID, each paragraph once.
func TestAppPacedAnswer(t *testing.T) {
	for _, classic := range []bool{false, true} {
		name := "fullscreen"
		if classic {
			name = "classic"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testPacedAnswer(t, classic) })
		})
	}
}

func testPacedAnswer(t *testing.T, classic bool) {
	const w, h = 60, 20
	o := Options{Theme: PlainTheme}
	var term *terminal
	if classic {
		term = newTerminal(w, h)
		o.Classic, o.Output = true, writerFunc(term.write)
	}
	r := newPacedChatRig(t, o, w, h, demoProvider(), transcript.DefaultPacing)
	grid := func() string {
		if term != nil {
			return strings.Join(allRows(term), "\n")
		}
		return r.grid()
	}

	sw := r.store.Lease().Stream()
	if err := sw.Text(pacedAnswer); err != nil {
		t.Fatal(err)
	}
	id := sw.AnswerID()
	r.advance(100 * time.Millisecond)

	snap := r.store.Snapshot()
	if got := snap.Document.At(0).Content.(transcript.Agent).Markdown; got != pacedAnswer {
		t.Fatalf("the source holds %q, want all accepted text", got)
	}
	n, paced := snap.Live.Revealed(id)
	if !paced || n == 0 || n >= strings.Index(pacedAnswer, "Bravo") {
		t.Fatalf("after 100ms the pacer revealed %d bytes (paced %v); the test wants part of the first paragraph", n, paced)
	}
	mid := grid()
	if !strings.Contains(mid, "Alpha opens") || strings.Contains(mid, "Bravo") || strings.Contains(mid, "Charlie") {
		t.Fatalf("mid-stream the views must paint only the visible prefix %q:\n%s", pacedAnswer[:n], mid)
	}
	if !classic {
		golden(t, "app_paced_mid", mid)
	}

	if err := sw.Finish(); err != nil {
		t.Fatal(err)
	}
	r.catchUp()
	snap = r.store.Snapshot()
	if snap.Document.Len() != 1 || snap.Document.At(0).ID != id || snap.Document.IsOpen(0) {
		t.Fatalf("settling changed the answer's identity: %d entries, first %q (want %q, settled)", snap.Document.Len(), snap.Document.At(0).ID, id)
	}
	settled := grid()
	for _, word := range []string{"Alpha", "Bravo", "Charlie"} {
		if c := strings.Count(settled, word); c != 1 {
			t.Errorf("after settlement %q is painted %d times, want once:\n%s", word, c, settled)
		}
	}
	if !classic {
		golden(t, "app_paced_settled", settled)
	}
}
