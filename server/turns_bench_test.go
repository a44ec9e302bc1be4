package server

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// BenchmarkPublishStreamingUpdate measures one live publication of a
// streaming answer: finding what changed in the store's snapshot, the
// reconciliation and the event's encoding, with one follower connected
// (its frames are dropped on the floor, not written). An op is one
// publication of an answer 4-5 KiB long (about 1,000 tokens); at the
// 30-a-second cadence, 30 of them are what a second of streaming costs.
//
//	go test -run '^$' -bench PublishStreamingUpdate -benchmem ./server
func BenchmarkPublishStreamingUpdate(b *testing.B) {
	ts := newTestServer(b, Options{})
	id := "bench"
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	sink := &conn{out: make(chan outFrame, 16), closed: make(chan struct{})}
	s := ts.conv(id)
	p := s.newPublisher(store.Snapshot(), turnsHooks{})
	s.mu.Lock()
	s.subs[sink] = struct{}{}
	s.mu.Unlock()
	var w *transcript.StreamWriter
	// Every 256 updates the answer settles and a new one starts at 4 KiB,
	// so an op publishes a 4-5 KiB answer however long the run.
	restart := func() {
		if w != nil {
			if err := w.Finish(); err != nil {
				b.Fatal(err)
			}
		}
		w = store.Lease().Stream()
		if err := w.Text(strings.Repeat("word ", 800)); err != nil {
			b.Fatal(err)
		}
		p.publishDoc(store.Snapshot())
	}
	restart()
	drain := func() {
		for len(sink.out) > 0 {
			<-sink.out
		}
	}
	drain()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%256 == 255 {
			restart()
		}
		if err := w.Text("tok "); err != nil {
			b.Fatal(err)
		}
		p.publishDoc(store.Snapshot())
		drain()
	}
	if len(p.pub) > 2 {
		b.Fatalf("the publisher tracks %d entries; settled ones should be dropped", len(p.pub))
	}
}
