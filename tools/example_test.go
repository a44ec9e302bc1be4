package tools_test

import (
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
