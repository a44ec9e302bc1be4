package server

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// BenchmarkDeltaBytes streams a 50,000-token answer through a followed
// conversation, publishing every 10 tokens as the engine's cadence does,
// and reports the bytes on the wire per streamed token early (the first
// 1,000 tokens) and late (the last 1,000), and their ratio.
//
//	go test -run '^$' -bench DeltaBytes -benchtime 1x ./server
func BenchmarkDeltaBytes(b *testing.B) {
	const tokens, every, window = 50000, 10, 1000
	for range b.N {
		srv, err := New(Options{DataDir: b.TempDir(), TempDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		cv := newConversation(srv, "c", srv.logPath("c"))
		cn := &conn{srv: srv, out: make(chan outFrame, 16), closed: make(chan struct{})}
		cv.subs[cn] = struct{}{}
		var early, late int
		var text strings.Builder
		for i := 1; i <= tokens; i++ {
			text.WriteString("word ")
			if i%every != 0 {
				continue
			}
			e := transcript.Entry{ID: "a", Content: transcript.Agent{Markdown: text.String()}, Timestamp: tsAt(1)}
			cv.mu.Lock()
			err := cv.applyLocked(Change{Op: OpUpsert, Entry: e}, 0)
			cv.mu.Unlock()
			if err != nil {
				b.Fatal(err)
			}
			f := <-cn.out
			cn.queued.Add(-int64(len(f.b)))
			switch {
			case i <= window:
				early += len(f.b)
			case i > tokens-window:
				late += len(f.b)
			}
		}
		srv.Close()
		b.ReportMetric(float64(early)/window, "early-B/token")
		b.ReportMetric(float64(late)/window, "late-B/token")
		b.ReportMetric(float64(late)/float64(early), "late/early")
	}
}

// TestStreamedBytesPerTokenStayConstant: what a streamed token costs on
// the wire late in a long answer is what it costs early (within 1.2x).
func TestStreamedBytesPerTokenStayConstant(t *testing.T) {
	srv, err := New(Options{DataDir: t.TempDir(), TempDir: t.TempDir()})
	must(t, err)
	defer srv.Close()
	cv := newConversation(srv, "c", srv.logPath("c"))
	cn := &conn{srv: srv, out: make(chan outFrame, 16), closed: make(chan struct{})}
	cv.subs[cn] = struct{}{}
	const tokens, window = 20000, 1000
	var early, late int
	var text strings.Builder
	for i := 1; i <= tokens; i++ {
		text.WriteString("wörd ")
		if i%10 != 0 {
			continue
		}
		e := transcript.Entry{ID: "a", Content: transcript.Agent{Markdown: text.String()}, Timestamp: tsAt(1)}
		cv.mu.Lock()
		must(t, cv.applyLocked(Change{Op: OpUpsert, Entry: e}, 0))
		cv.mu.Unlock()
		f := <-cn.out
		switch {
		case i <= window:
			early += len(f.b)
		case i > tokens-window:
			late += len(f.b)
		}
	}
	if r := float64(late) / float64(early); r > 1.2 {
		t.Fatalf("late tokens cost %.2fx early ones (%d vs %d bytes per %d tokens)", r, late, early, window)
	}
}
