package toolview_test

import (
	"context"
	"fmt"

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
