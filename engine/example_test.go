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

// A view words a command by its receipt's state: every state of the one
// vocabulary, and the reason of a command a restart interrupted.
func ExampleReceipt() {
	describe := func(r engine.Receipt) string {
		switch r.State {
		case engine.Queued:
			return "waiting for the turn before it"
		case engine.Running:
			return "running"
		case engine.Applied:
			return "the model has the steer"
		case engine.Done:
			return "done"
		case engine.Failed:
			if r.Reason == engine.ReasonInterrupted {
				return "interrupted when folio stopped"
			}
			return "failed"
		case engine.Stopped:
			return "stopped"
		case engine.Rejected:
			return "not accepted: " + r.Reason
		case engine.Removed:
			return "taken out of the queue"
		}
		return string(r.State)
	}
	eng := engine.New(transcript.NewStore(), demo.New(demo.Options{}), engine.WithModel("folio-demo"))
	defer eng.Close()
	ctx := context.Background()
	if _, err := eng.Send(ctx, "cmd-1", "hello", nil); err != nil {
		panic(err)
	}
	r, _ := eng.Wait(ctx, "cmd-1")
	fmt.Println(describe(r))
	// Output:
	// done
}

// A client in front of a remote engine keeps its drafts in an Outbox. A
// definitive refusal (a *Rejection) gives the text back as a draft with
// the reason; while a command is on its way it is pending and cannot be
// sent again.
func ExampleOutbox() {
	var ob *engine.Outbox
	refuse := func(ctx context.Context, commandID, text string, steer bool) (engine.Receipt, error) {
		fmt.Println("on its way:", ob.Items()[0].Delivery == engine.Pending)
		return engine.Receipt{}, &engine.Rejection{Reason: "locked: another folio process writes this conversation"}
	}
	ob = engine.NewOutbox(refuse, func() string { return "cmd-1" })
	id := ob.Add("hello", false)
	it, err := ob.Send(context.Background(), id)
	fmt.Println(it.Delivery, "·", it.Reason, "·", err != nil)
	// Output:
	// on its way: true
	// draft · locked: another folio process writes this conversation · true
}
