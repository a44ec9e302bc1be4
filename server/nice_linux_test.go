package server

import (
	"runtime"
	"syscall"
	"testing"
)

// niceOf is the calling thread's nice value (the raw getpriority call
// answers 20 - nice, so that it is never negative).
func niceOf(t *testing.T) int {
	t.Helper()
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// TestEngineOpensRunAtALowerPriority: an engine's open (a long log's load)
// runs on a thread of its own at loadNice, and the thread that asked keeps
// its priority.
func TestEngineOpensRunAtALowerPriority(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := niceOf(t)
	var inside int
	if err := aside(func() error { inside = niceOf(t); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside != max(before, loadNice) {
		t.Fatalf("the open ran at nice %d; want %d", inside, max(before, loadNice))
	}
	if after := niceOf(t); after != before {
		t.Fatalf("the caller's thread went from nice %d to %d", before, after)
	}
}
