package tui

import (
	"os"
	"runtime/pprof"
)

func init() {
	profHook = func() {
		f, _ := os.Create("/tmp/h26heap.prof")
		pprof.WriteHeapProfile(f)
		f.Close()
	}
}
