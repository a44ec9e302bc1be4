package transcript_test

import (
	"fmt"
	"strings"

	"github.com/foliodev/folio/transcript"
)

// A producer takes a lease, streams a reply and settles it; a view reads
// the latest snapshot. A replacement retires the lease, and late work
// through it is dropped.
func Example() {
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	views := store.Subscribe()
	defer views.Close()

	lease := store.Lease()
	if _, err := lease.Append(transcript.User{Text: "What is 6 × 7?"}); err != nil {
		panic(err)
	}
	w := lease.Stream()
	_ = w.Reasoning("Multiply.")
	_ = w.Text("It is ")
	_ = w.Text("42.")
	_ = w.Finish()

	snap := <-views.C() // coalesced: the latest state only
	for i := range snap.Document.Len() {
		switch c := snap.Visible(i).(type) {
		case transcript.User:
			fmt.Println("user:", c.Text)
		case transcript.Reasoning:
			fmt.Println(c.Label+":", c.Text)
		case transcript.Agent:
			fmt.Println("agent:", c.Markdown, "| settled:", !snap.Document.IsOpen(i))
		}
	}

	before := snap.Generation
	after := store.Clear(snap.Document.ID()).Generation
	_, err := lease.Append(transcript.Notice{Text: "late", Tone: transcript.ToneInfo})
	fmt.Println(after > before, err)
	// Output:
	// user: What is 6 × 7?
	// Thinking: Multiply.
	// agent: It is 42. | settled: true
	// true lease retired: the document it was taken on was replaced
}

// A client that shows where each of its commands is lists the states a
// command can be in; the final ones need no more watching.
func ExampleCommandStates() {
	for _, s := range transcript.CommandStates() {
		fmt.Println(s, s.Final())
	}
	// Output:
	// pending false
	// uncertain false
	// queued false
	// running false
	// applied true
	// done true
	// failed true
	// stopped true
	// rejected true
	// removed true
	// unknown false
}

// Live state carries previews of messages and tool arguments, never the
// whole text: a view can rely on a preview being at most PreviewBytes plus
// the ellipsis.
func ExamplePreview() {
	long := strings.Repeat("word ", 100)
	p := transcript.Preview(long)
	fmt.Println(len(long), len(p) <= transcript.PreviewBytes+len("…"), strings.HasSuffix(p, "…"))
	// Output:
	// 500 true true
}
