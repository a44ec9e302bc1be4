package tools_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/foliodev/folio/tools"
)

// A program that lets the model read and edit a workspace, and run commands
// for a shorter time than folio's default, builds its own set instead of
// tools.Builtin; the set's manifest is what the tool host validates against.
func ExampleNewSet() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	set, err := tools.NewSet(
		tools.ReadFile{Root: dir},
		tools.ListFiles{Root: dir},
		tools.WriteFile{Root: dir},
		tools.EditFile{Root: dir},
		tools.Shell{Dir: dir, Timeout: min(30*time.Second, tools.DefaultShellTimeout)},
	)
	if err != nil {
		panic(err)
	}
	fmt.Println(set.Names())
	fmt.Println(set.Manifest().Name == tools.ProducerName)
	// Output:
	// [read_file list_files write_file edit_file shell]
	// true
}

// oneShot is a Spawner that answers every task at once, as a program's own
// child runner would after running its agent.
type oneShot struct{}

func (oneShot) Spawn(_ context.Context, invocationID, label, prompt string) (answer, childID string, err error) {
	return "3 files", "child-" + invocationID, nil
}

// A program that runs child agents its own way (another model, another
// process) gives the task tool its Spawner; the engine's is used when the
// set comes from tools.Builtin.
func ExampleTask() {
	set, err := tools.NewSet(tools.Task{Spawner: oneShot{}})
	if err != nil {
		panic(err)
	}
	t, _ := set.Get("task")
	fmt.Println(t.Decl().Name, t.NeedsApproval())
	// Output:
	// task false
}
