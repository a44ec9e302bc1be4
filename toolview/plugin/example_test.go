package plugin_test

import (
	"context"
	"fmt"
	"os"

	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/toolview/plugin"
)

// Run the shell-script plugin shipped in examples/countdown.
func Example() {
	p, err := plugin.Load("../../examples/countdown/plugin.json")
	if err != nil {
		panic(err)
	}
	defer p.Close() // the example plugin is persistent: Close stops its process
	data, _ := os.MkdirTemp("", "folio-example")
	defer os.RemoveAll(data)
	host := toolview.New(toolview.WithArtifactDir(data))
	defer host.Close()

	rec, err := host.Run(context.Background(),
		toolview.Spec{Tool: "countdown", Producer: p.Manifest}, []byte(`{"n":3}`), p.Func())
	if err != nil {
		panic(err)
	}
	p.Wait()
	fmt.Println(rec.Outcome.Status, "-", rec.Result.Text)
	a := rec.Presentation.Artifact
	log, _ := host.ReadArtifact(*a, 0, a.CommittedBytes)
	fmt.Printf("%s (final %v):\n%s", a.ContentType, a.Final, log)
	// Output:
	// ok - counted down from 3
	// text/plain (final true):
	// tick 3
	// tick 2
	// tick 1
}
