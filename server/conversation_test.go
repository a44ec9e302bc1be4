package server

import (
	"sync"
	"testing"
)

// TestConcurrentOpensShareOneCapture: opens of one conversation that
// arrive at once build one snapshot; the others wait for it and share it
// (capture's single flight), none builds beside it.
func TestConcurrentOpensShareOneCapture(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "c", 2000, 1)
	cv := ts.conv("c")
	const n = 8
	got := make([]captured, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = cv.capture("", nil) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer got[i].snap.Release()
		if got[i].snap != got[0].snap {
			t.Errorf("open %d built a snapshot of its own", i)
		}
	}
	cv.mu.Lock()
	building := cv.building
	cv.mu.Unlock()
	if building != nil {
		t.Fatal("a capture is still marked in progress")
	}
}
