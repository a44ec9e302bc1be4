package engine_test

import (
	"context"
	"fmt"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/transcript"
)

// A turn against the offline demo model: send a message with a command ID,
// wait for its turn, and read the entries from the store.
func Example() {
	store := transcript.NewStore()
	eng := engine.New(store, demo.New(demo.Options{}), engine.WithModel("folio-demo"))
	defer eng.Close()

	ctx := context.Background()
	if _, err := eng.Send(ctx, "cmd-1", "hello", nil); err != nil {
		panic(err)
	}
	r, _ := eng.Wait(ctx, "cmd-1")
	fmt.Println(r.State)
	for _, e := range store.Snapshot().Document.All() {
		fmt.Println(e.Content.Kind())
	}
	// Output:
	// done
	// user
	// reasoning
	// agent
	// turn-receipt
}
