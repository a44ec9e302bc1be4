package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/transcript"
)

// A long session keeps only its end in memory: with a log as the saver,
// the engine drops settled entries the log holds once the store passes
// twice the window, and Elided counts them. The log keeps every entry.
func ExampleWithDocumentWindow() {
	dir, err := os.MkdirTemp("", "folio-window")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	log, err := history.Open(filepath.Join(dir, "c.jsonl"))
	if err != nil {
		panic(err)
	}
	defer log.Close()

	store := transcript.NewStore()
	eng := engine.New(store, demo.New(demo.Options{}), engine.WithModel("folio-demo"),
		engine.WithSaver(log), engine.WithDocumentWindow(8))
	defer eng.Close()
	ctx := context.Background()
	for i := range 20 {
		id := fmt.Sprintf("cmd-%d", i)
		if _, err := eng.Send(ctx, id, "hello", nil); err != nil {
			panic(err)
		}
		eng.Wait(ctx, id)
	}
	d := store.Snapshot().Document
	c, err := log.Load()
	if err != nil {
		panic(err)
	}
	fmt.Println("in memory at most 2×8 and a turn:", d.Len() <= 2*8+4)
	fmt.Println("memory and log agree on the total:", d.Elided()+d.Len() == c.Document.Len())
	fmt.Println("the log holds all 20 turns:", c.Document.Len() == 80)
	// Output:
	// in memory at most 2×8 and a turn: true
	// memory and log agree on the total: true
	// the log holds all 20 turns: true
}
