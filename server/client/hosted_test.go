//go:build linux

package client_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/server/client"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

// terminalOwner is what a terminal chat runs (internal/cli's chat_host.go):
// its own engine over a paced store, saving to its own log, lent to a
// hosted server that serves the local endpoint.
type terminalOwner struct {
	data    string
	id      string
	eng     *engine.Engine
	log     *history.Log
	release func() bool
}

func newTerminalOwner(t testing.TB, rate float64) *terminalOwner {
	t.Helper()
	data, err := os.MkdirTemp("", "fo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	o := &terminalOwner{data: data, id: "20260101-000000-abcdef"}
	path, err := history.Path(data, o.id)
	if err != nil {
		t.Fatal(err)
	}
	if o.log, err = history.Open(path); err != nil {
		t.Fatal(err)
	}
	doc, _ := transcript.NewDocument(o.id, nil)
	st := transcript.NewStore(transcript.WithPacing(transcript.DefaultPacing), transcript.WithDocument(doc))
	set, err := tools.Builtin(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	o.eng = engine.New(st, demo.New(demo.Options{TokensPerSecond: rate}), engine.WithModel("folio-demo"), engine.WithSaver(logSaver{o.log}), engine.WithTools(set))
	// A first turn, so the log has a conversation to attach to.
	if _, err := o.eng.Send(t.Context(), "t0", "hello", nil); err != nil {
		t.Fatal(err)
	}
	for {
		if r, _ := o.eng.Status("t0"); r.State == transcript.CommandDone {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv, err := server.NewHosted(data, func() string { return "demo/folio-demo" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := srv.ServeLocal(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if o.release, err = srv.Adopt(o.id, o.eng, o.log, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ep.Close()
		srv.Close()
		o.eng.Close()
		o.log.Close()
	})
	return o
}

type logSaver struct{ l *history.Log }

func (s logSaver) Save(d transcript.Document, m []message.Message) error { return s.l.Save(d, m) }

func (o *terminalOwner) attach(t testing.TB) (*client.Conversation, *transcript.Store) {
	t.Helper()
	c, err := client.DialLocal(t.Context(), history.EndpointPath(o.data, os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	st := transcript.NewStore()
	cv, err := c.Open(t.Context(), o.id, st)
	if err != nil {
		t.Fatal(err)
	}
	return cv, st
}

// TestHostedTerminalOwner: a client attached to a terminal's lent engine
// sees the owner's own turn live, queues behind it, approves the call its
// queued send waits on, and ends with the log's entries; a command for a
// conversation the terminal does not own is refused as locked; release
// gives the log back open, and the owner saves to it itself again.
func TestHostedTerminalOwner(t *testing.T) {
	o := newTerminalOwner(t, 300)
	cv, st := o.attach(t)
	c, err := client.DialLocal(t.Context(), history.EndpointPath(o.data, os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if m, err := c.Model(t.Context(), o.id); err != nil || m != "demo/folio-demo" {
		t.Errorf("the owner's model: %q %v, want demo/folio-demo", m, err)
	}
	if _, err := o.eng.Send(t.Context(), "t1", "write a long essay about streaming", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, st, "the owner's reply to stream", func(s transcript.Snapshot) bool {
		return running(s) && s.Document.Len() > s.Document.Settled()
	})
	if r, err := cv.Send(t.Context(), "c1", `/demo call shell {"command":"echo hosted"}`, false); err != nil || r.State != transcript.CommandQueued {
		t.Fatalf("send behind the owner's turn: %+v %v", r, err)
	}
	waitFor(t, st, "the queued send", func(s transcript.Snapshot) bool { return s.Live.Queue.Len() == 1 })
	s := waitFor(t, st, "the call's approval", func(s transcript.Snapshot) bool { return s.Live.Approvals.Len() == 1 })
	if r, err := cv.Approve(t.Context(), "a1", s.Live.Approvals.At(0).ID, true, "once"); err != nil || r.State == transcript.CommandRejected {
		t.Fatalf("approve: %+v %v", r, err)
	}
	if r := waitReceipt(t, cv, "c1"); r.State != transcript.CommandDone {
		t.Fatalf("c1: %+v", r)
	}
	waitFor(t, st, "idle", func(s transcript.Snapshot) bool { return !running(s) })
	compareWithLog(t, o.data, o.id, st.Snapshot().Document)

	// Another conversation of the data folder is not the terminal's to run.
	const otherID = "20260101-000000-000000"
	otherPath, _ := history.Path(o.data, otherID)
	if err := os.WriteFile(otherPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other, err := cv.Command(t.Context(), "send", "x1", map[string]any{"conversation": otherID, "text": "hi"})
	code := other.Code
	var ce *client.Error
	if errors.As(err, &ce) {
		code = ce.Code
	}
	if code != "locked" {
		t.Errorf("a send to a conversation the terminal does not own: %+v %v, want code locked", other, err)
	}

	if titled := o.release(); !titled {
		t.Errorf("release: the log has no title after its first save")
	}
	o.eng.SetSaver(logSaver{o.log})
	if _, err := o.eng.Send(t.Context(), "t2", "hello again", nil); err != nil {
		t.Fatal(err)
	}
	for {
		if r, _ := o.eng.Status("t2"); r.State == transcript.CommandDone {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	path, _ := history.Locate(o.data, o.id)
	conv, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := conv.Document.Len(), o.eng.Store().Snapshot().Document.Len(); got != want {
		t.Errorf("after release the log holds %d entries, the engine %d", got, want)
	}
}

// BenchmarkStreamLatencyTerminalOwner measures owner → attached latency
// when the owner is a terminal chat's engine: the demo model streams a
// long reply into the owner's (paced) store, and for each length of the
// reply's text the attached client's store reaches, the wait since the
// owner's store first held it. Reported: the p50 and p99 of those waits.
func BenchmarkStreamLatencyTerminalOwner(b *testing.B) {
	o := newTerminalOwner(b, 400)
	_, st := o.attach(b)
	var (
		mu    sync.Mutex
		owner = map[int]time.Time{}
		lat   []time.Duration
	)
	reply := func(s transcript.Snapshot) (string, int) {
		d := s.Document
		for i := d.Len() - 1; i >= d.Settled(); i-- {
			if a, ok := d.At(i).Content.(transcript.Agent); ok {
				return d.At(i).ID, len(a.Markdown)
			}
		}
		return "", 0
	}
	watch := func(s *transcript.Store, f func(id string, n int)) func() {
		sub := s.Subscribe()
		go func() {
			for snap := range sub.C() {
				if id, n := reply(snap); id != "" {
					f(id, n)
				}
			}
		}()
		return sub.Close
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		stopO := watch(o.eng.Store(), func(id string, n int) {
			mu.Lock()
			if _, ok := owner[n]; !ok {
				owner[n] = time.Now()
			}
			mu.Unlock()
		})
		stopA := watch(st, func(id string, n int) {
			now := time.Now()
			mu.Lock()
			if t0, ok := owner[n]; ok {
				lat = append(lat, now.Sub(t0))
				delete(owner, n)
			}
			mu.Unlock()
		})
		cmd := "b" + time.Now().Format("150405.000000")
		if _, err := o.eng.Send(context.Background(), cmd, "write a long essay about streaming", nil); err != nil {
			b.Fatal(err)
		}
		for {
			if r, _ := o.eng.Status(cmd); r.State == transcript.CommandDone {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		stopO()
		stopA()
		mu.Lock()
		clear(owner)
		mu.Unlock()
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) == 0 {
		b.Fatal("no sample")
	}
	b.ReportMetric(float64(len(lat))/float64(b.N), "samples/op")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
