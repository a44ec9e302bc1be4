package server

import (
	"testing"

	"github.com/foliodev/folio/server/pager"
)

func newTestLRU() *pager.LRU { return pager.NewLRU(0) }

// FuzzFrame feeds arbitrary client frames to a connection's dispatcher. It
// must never panic, and every frame must get exactly one answer (an error,
// a receipt or the request's reply), so a client is never left waiting.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"ping","id":"p"}`,
		`{"type":"page","id":"x","token":"s-1","conversation":"c","anchor":"latest","direction":"before","budgetBytes":4096}`,
		`{"type":"send","id":"s","conversation":"c","commandId":"k","text":"hi","attachments":["a-1"]}`,
		`{"type":"stop","id":"s","conversation":"c","commandId":"k","turn":"u"}`,
		`{"type":"approve","id":"s","conversation":"c","commandId":"k","invocationId":"i","allow":true}`,
		`{"type":"release","id":"r","token":"s-1"}`,
		`{"type":"unfollow","id":"u","conversation":"c"}`,
		`{"type":"hello","id":"h","protocol":4}`,
		`{"type":"open","id":"o","conversation":"../x"}`,
		`[]`, `{"type":7}`, `{"type":"page","id":"x","budgetBytes":1e999}`,
	} {
		f.Add([]byte(s))
	}
	srv, err := New(Options{DataDir: f.TempDir(), TempDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &conn{srv: srv, out: make(chan outFrame, 16), closed: make(chan struct{}), opens: make(chan struct{}, 1),
			lru: nil, tokens: map[string]tokenScope{}, expired: map[string]bool{}, follows: map[string]*conversation{}, hello: true}
		c.lru = newTestLRU()
		defer c.lru.Close()
		c.handle(data)
		c.cmds.Wait()
		answers := 0
		for len(c.out) > 0 {
			if fr := <-c.out; fr.closeCode == 0 { // a wrong hello also queues a close
				answers++
			}
		}
		if answers != 1 {
			t.Fatalf("%d answers to %q", answers, data)
		}
	})
}
