package tui

import (
	"slices"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// The engine drops the start of its document in a long session
// (engine.WithDocumentWindow); a reader scrolled back into what it drops
// keeps reading the same lines, and the "new" marker counts the entries
// that arrived, not the ones that left.
func TestViewportKeepsItsPlaceWhenTheEngineDropsEntries(t *testing.T) {
	t.Parallel()
	all := mixed(120)
	d := doc(all[:60]...)
	v := newTestViewport(80, 20)
	v.SetDocument(d, 1)
	v.Lines()
	v.ScrollBy(-60) // into the first half, which the engine will drop
	before := v.Lines()
	for _, e := range all[60:70] {
		d = must(d.Append(e))
	}
	v.SetDocument(d, 1)
	v.Lines()
	trimmed := must(d.Trim(48)) // a turn's start: mixed turns are 6 entries
	v.SetDocument(trimmed, 1)
	after := v.Lines()
	if !slices.Equal(before[:len(before)-1], after[:len(after)-1]) {
		t.Fatalf("the engine dropping entries moved the text being read:\nbefore:\n%s\nafter:\n%s", join(before), join(after))
	}
	if n := v.Unseen(); n != 10 {
		t.Fatalf("Unseen = %d after 10 new entries and 48 dropped, want 10", n)
	}
	// Further trims while the reader stays keep the pages within budget
	// and the place still.
	for i := range 5 {
		for _, e := range all[70+10*i : 80+10*i] {
			trimmed = must(trimmed.Append(e))
		}
		trimmed = must(trimmed.Trim(6))
		v.SetDocument(trimmed, 1)
		got := v.Lines()
		if !slices.Equal(before[:len(before)-1], got[:len(got)-1]) {
			t.Fatalf("trim %d moved the text being read:\n%s", i, join(got))
		}
	}
	if n := v.Unseen(); n != 60 {
		t.Fatalf("Unseen = %d after 60 new entries, want 60", n)
	}
	// End goes back to the live edge, where nothing is unseen and no page
	// is kept.
	v.JumpToLatest()
	v.Lines()
	if v.Unseen() != 0 || v.PagedBytes() != 0 {
		t.Fatalf("at the live edge: %d unseen, %d paged bytes", v.Unseen(), v.PagedBytes())
	}
}

// The classic view prints each entry once however much of the document's
// start the engine drops between frames: what it prints equals what it
// prints of the whole document.
func TestClassicPrintsOnceAcrossDroppedEntries(t *testing.T) {
	t.Parallel()
	all := mixed(300)
	whole := NewClassic(NewPainter(DarkTheme, ForClassic()))
	whole.Mount()
	kept := NewClassic(NewPainter(DarkTheme, ForClassic()))
	kept.Mount()
	wd, kd := doc(all[:1]...), doc(all[:1]...)
	var want, got []string
	want = append(want, whole.Sync(wd, 1, 70, 10).Print...)
	got = append(got, kept.Sync(kd, 1, 70, 10).Print...)
	for i, e := range all[1:] {
		wd, kd = must(wd.Append(e)), must(kd.Append(e))
		if (i+1)%6 == 5 && kd.Len() > 24 {
			// Drop at a turn's start (user entries are every sixth),
			// keeping the last 18 entries or so.
			k := kd.Len() - 18
			for kd.At(k).Content.Kind() != transcript.KindUser {
				k--
			}
			kd = must(kd.Trim(k))
		}
		want = append(want, whole.Sync(wd, 1, 70, 10).Print...)
		got = append(got, kept.Sync(kd, 1, 70, 10).Print...)
	}
	if kd.Elided() == 0 {
		t.Fatal("nothing was dropped")
	}
	if !slices.Equal(want, got) {
		t.Fatalf("the classic view printed %d lines over a trimmed document, %d over the whole one", len(got), len(want))
	}
}

func join(lines []string) string {
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}
