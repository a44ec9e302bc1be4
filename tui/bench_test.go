package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/transcript"
)

// BenchmarkViewportFrame measures one fullscreen frame over documents of 100
// and 100,000 entries. "live": an entry arrives and the window follows it;
// "anchored": the reader is in the middle of the conversation and scrolls a
// line. The cost should not depend on the document's length.
//
//	go test ./tui -run '^$' -bench ViewportFrame -benchmem
func BenchmarkViewportFrame(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		base := doc(mixed(n)...)
		b.Run(fmt.Sprintf("live/entries=%d", n), func(b *testing.B) {
			v := newTestViewport(100, 40)
			d := base
			v.SetDocument(d, 1)
			v.Lines()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				// The append is the store's work, not the frame's.
				b.StopTimer()
				d = must(d.Append(ent(fmt.Sprintf("x%d", i), transcript.User{Text: fmt.Sprintf("follow-up %d", i)})))
				b.StartTimer()
				v.SetDocument(d, 1)
				v.Lines()
			}
		})
		b.Run(fmt.Sprintf("anchored/entries=%d", n), func(b *testing.B) {
			v := newTestViewport(100, 40)
			v.SetDocument(base, 1)
			v.Top()
			v.ScrollBy(n / 2 * 3) // roughly the middle
			v.Lines()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					v.ScrollBy(1)
				} else {
					v.ScrollBy(-1)
				}
				v.Lines()
			}
		})
	}
}

// BenchmarkStreamingFrame measures a frame while an answer streams, one
// token per frame, when the answer is short and when it has grown to about
// 1,000 lines. At 200 tok/s a frame has 5 ms.
//
//	go test ./tui -run '^$' -bench StreamingFrame -benchmem
func BenchmarkStreamingFrame(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&sb, "Line %d of a long answer about parsers and errors.\n\n", i)
	}
	long := sb.String() // about 1,000 painted lines
	for _, c := range []struct {
		name   string
		prefix string
	}{{"answer=10lines", long[:strings.Index(long, "Line 5 ")]}, {"answer=1000lines", long}} {
		b.Run(c.name, func(b *testing.B) {
			d := doc(mixed(1000)...)
			d = must(d.Open(ent("a", transcript.Agent{Markdown: c.prefix})))
			v := newTestViewport(100, 40)
			v.SetDocument(d, 1)
			v.Lines()
			text := c.prefix
			toks := tokens("The final paragraph keeps growing one token at a time while the reader watches it arrive. ")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				text += toks[i%len(toks)]
				if i%200 == 199 {
					text += "\n\n" // the paragraph completes and is promoted
				}
				d = must(d.Update("a", transcript.Agent{Markdown: text}))
				v.SetDocument(d, 1)
				v.Lines()
			}
		})
	}
}

// BenchmarkAppFrame measures what the chat program does per snapshot in
// the fullscreen view on top of the viewport: taking the snapshot, laying
// out the chrome (drafts, editor, footer) and drawing the whole frame, over
// conversations of 100 and 100,000 entries while an entry arrives.
//
//	go test ./tui -run '^$' -bench AppFrame -benchmem
func BenchmarkAppFrame(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			base := doc(mixed(n)...)
			store := transcript.NewStore(transcript.WithDocument(base))
			eng := engine.New(store, demo.New(demo.Options{}))
			defer eng.Close()
			app := NewApp(Options{Engine: eng, Theme: DarkTheme, Notice: "demo model"})
			app.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
			snap := store.Snapshot()
			snap.Live.Model, snap.Live.Activity = "folio-demo", transcript.ActivityResponding
			app.Update(snapshotMsg(snap))
			app.View()
			d := base
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				d = must(d.Append(ent(fmt.Sprintf("x%d", i), transcript.User{Text: fmt.Sprintf("follow-up %d", i)})))
				snap.Document = d
				b.StartTimer()
				app.Update(snapshotMsg(snap))
				app.View()
			}
		})
	}
}

// BenchmarkVisibleDocument measures cutting a snapshot's open, paced answer
// to its visible prefix, the work App does per snapshot while an answer
// streams, behind 100 and 100,000 settled entries. Only the open tail is
// touched, so the cost should not depend on the document's length.
//
//	go test ./tui -run '^$' -bench VisibleDocument -benchmem
func BenchmarkVisibleDocument(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			store := transcript.NewStore(transcript.WithPacing(transcript.DefaultPacing), transcript.WithDocument(doc(mixed(n)...)))
			sw := store.Lease().Stream()
			text := strings.Repeat("A paced answer grows one word at a time. ", 200)
			if err := sw.Text(text); err != nil {
				b.Fatal(err)
			}
			snap := store.Snapshot()
			if n, paced := snap.Live.Revealed(sw.AnswerID()); !paced || n >= len(text) {
				b.Fatalf("the answer is not paced from the start: revealed %d, paced %v", n, paced)
			}
			b.ReportAllocs()
			for b.Loop() {
				visibleDocument(snap)
			}
		})
	}
}
