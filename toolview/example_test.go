package toolview_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// A tool replaces its primary item's value as it works; returning closes the
// scope and yields the record the engine writes as a tool entry.
func Example() {
	manifest, err := toolview.ParseManifest([]byte(`{
		"name": "demo",
		"tools": [{"name": "count", "inputSchema": {"type": "object", "properties": {"to": {"type": "integer"}}}}],
		"adapters": [{"schema": "demo.progress", "version": 1}]
	}`))
	if err != nil {
		panic(err)
	}
	host := toolview.New()
	defer host.Close()
	host.Subscribe(func(c toolview.Change) {
		if c.Open {
			fmt.Printf("live r%d %s\n", c.Revision, c.Value.Payload)
		}
	})

	count := func(ctx context.Context, inv *toolview.Invocation, args []byte) (toolview.Result, error) {
		p := inv.Presentation()
		for i := 1; i <= 3; i++ {
			if _, err := p.Replace(toolview.Payload{
				Schema: "demo.progress", Version: 1,
				Data: fmt.Appendf(nil, `{"done":%d,"of":3}`, i),
			}); err != nil {
				return toolview.Result{}, err
			}
			// Make every step visible now rather than when the 50 ms
			// cadence window opens (the example has no time to wait).
			if err := p.Flush(ctx); err != nil {
				return toolview.Result{}, err
			}
		}
		return toolview.Result{Text: "counted to 3"}, nil
	}

	rec, err := host.Run(context.Background(), toolview.Spec{ID: "call_1", Tool: "count", Producer: manifest},
		[]byte(`{"to":3}`), count)
	if err != nil {
		panic(err)
	}
	entry := rec.Entry("entry-1")
	tool := entry.Content.(transcript.Tool)
	fmt.Println(tool.Receipt.Status, rec.Result.Text)
	fmt.Printf("retained r%d %s\n", tool.Presentation.Revision, tool.Presentation.Payload)
	// Output:
	// live r1 {"done":1,"of":3}
	// live r2 {"done":2,"of":3}
	// live r3 {"done":3,"of":3}
	// ok counted to 3
	// retained r3 {"done":3,"of":3}
}

// A program whose views are slower or smaller than folio's tunes the host:
// a wider cadence window publishes fewer live changes, a lower payload bound
// keeps each value small, and a logger receives the bounded diagnostics. A
// value over the bound is refused with a RejectError, and the tool goes on.
func ExampleNew() {
	host := toolview.New(
		toolview.WithCadence(4*toolview.DefaultCadence),
		toolview.WithPayloadLimit(toolview.DefaultPayloadLimit/256), // 1 KiB
		toolview.WithLogger(slog.New(slog.DiscardHandler)),
	)
	defer host.Close()
	manifest, err := toolview.NewManifest("demo",
		[]toolview.ToolDecl{{Name: "dump", InputSchema: []byte(`{"type":"object"}`)}},
		[]toolview.AdapterDecl{{Schema: "demo.text", Version: 1}})
	if err != nil {
		panic(err)
	}
	dump := func(ctx context.Context, inv *toolview.Invocation, args []byte) (toolview.Result, error) {
		big := fmt.Appendf(nil, "%q", strings.Repeat("x", 2<<10))
		_, err := inv.Presentation().Replace(toolview.Payload{Schema: "demo.text", Version: 1, Data: big})
		var rej *toolview.RejectError
		if errors.As(err, &rej) {
			fmt.Println("refused:", rej.Reason, rej.Actual, ">", rej.Limit)
		}
		return toolview.Result{Text: "done"}, nil
	}
	rec, err := host.Run(context.Background(), toolview.Spec{Tool: "dump", Producer: manifest}, []byte(`{}`), dump)
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Outcome.Status, rec.Result.Text)
	// Output:
	// refused: oversized 2050 > 1024
	// ok done
}
