package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
)

// BenchmarkNotifyFanOut measures appends per second through one
// PostgreSQL with three replicas listening: each append is a transaction
// with its NOTIFY, and every replica reads it into its copy (Follow). The
// clock stops when all three copies hold every append. Eight writers append
// at once, each to its own conversation under its lease; replicas=0 is the
// same without listeners, for comparison.
//
//	eval "$(.ci/pg-start --export)"; go test -run '^$' -bench NotifyFanOut -benchtime 2000x ./store/pgstore
func BenchmarkNotifyFanOut(b *testing.B) {
	for _, n := range []int{0, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) { benchFanOut(b, n) })
	}
}

func benchFanOut(b *testing.B, replicas int) {
	u := freshURL(b)
	const convs = 8
	st, err := Open(context.Background(), u)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var reps []*Mirror
	changes := make(chan string, 1<<16)
	for range replicas {
		s, err := Open(context.Background(), u)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		m := NewMirror(s, b.TempDir(), nil)
		m.OnChange(func(string) {
			select {
			case changes <- "":
			default:
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { m.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		reps = append(reps, m)
	}
	var meds []*Medium
	for i := range convs {
		id := fmt.Sprintf("bench-%d", i)
		m, err := st.OpenMedium(id)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		if err := m.Replace([]byte(`{"type":"conversation","version":3,"conversationId":"` + id + `"}` + "\n")); err != nil {
			b.Fatal(err)
		}
		for _, r := range reps {
			if err := r.Sync(context.Background(), id); err != nil {
				b.Fatal(err)
			}
		}
		meds = append(meds, m)
	}
	rec := []byte(`{"type":"meta","at":"2026-01-01T00:00:00.000Z","title":"a title of some length for the benchmark"}` + "\n")
	b.ResetTimer()
	start := time.Now()
	// One writer per conversation, at once, as replicas owning different
	// conversations write.
	errs := make(chan error, convs)
	for w, m := range meds {
		go func() {
			for i := w; i < b.N; i += convs {
				if err := m.Append(rec); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range convs {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	// Wait until every copy holds every append.
	for {
		behind := false
		for _, r := range reps {
			for _, m := range meds {
				p, _ := r.Path(m.id)
				fi, err := os.Stat(p)
				if err != nil || fi.Size() != m.size {
					behind = true
				}
			}
		}
		if !behind {
			break
		}
		select {
		case <-changes:
		case <-time.After(50 * time.Millisecond): // a copy may have caught up without a new notice
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(b.N)/el.Seconds(), "appends/s")
	b.ReportMetric(float64(b.N*replicas)/el.Seconds(), "deliveries/s")
}

// BenchmarkStreamFanOut measures streaming messages per second through
// one PostgreSQL's NOTIFY with three replicas listening: one sender
// (Stream), 100-byte messages (a few tokens of an answer), at most 256
// under way, the clock stopping when every replica got every message.
//
//	eval "$(.ci/pg-start --export)"; go test -run '^$' -bench StreamFanOut -benchtime 20000x ./store/pgstore
func BenchmarkStreamFanOut(b *testing.B) {
	u := freshURL(b)
	ctx := context.Background()
	run := func(m *Mirror) {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { m.Run(rctx); close(done) }()
		b.Cleanup(func() { cancel(); <-done })
	}
	open := func() *Mirror {
		s, err := Open(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		m := NewMirror(s, b.TempDir(), nil)
		if err := m.Sync(ctx, "s"); err != nil {
			b.Fatal(err)
		}
		return m
	}
	sender := open()
	run(sender)
	const replicas = 3
	got := make(chan int, 1<<16)
	var counts [replicas]int
	for i := range replicas {
		m := open()
		m.OnLive(func(string, []byte) { got <- i })
		run(m)
	}
	// Once a probe reached every replica, all listen.
	for seen := map[int]bool{}; len(seen) < replicas; {
		sender.Stream("s", []byte(`"probe"`))
		select {
		case i := <-got:
			seen[i] = true
		case <-time.After(50 * time.Millisecond):
		}
	}
	for len(got) > 0 {
		<-got
	}
	time.Sleep(100 * time.Millisecond) // let the last probes arrive
	for len(got) > 0 {
		<-got
	}
	// Distinct, as real ones are (PostgreSQL delivers one of identical
	// notifications sent in one transaction).
	msg := func(i int) []byte {
		return fmt.Appendf(nil, `{"e":"entry-0001","r":%d,"b":%d,"o":4096,"t":"%s"}`, i+1, i, strings.Repeat("x", 50))
	}
	least := func() int { return min(counts[0], counts[1], counts[2]) }
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		if sent-least() < 256 {
			sender.Stream("s", msg(sent))
			sent++
			continue
		}
		counts[<-got]++
	}
	for least() < b.N {
		counts[<-got]++
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "messages/s")
	b.ReportMetric(float64(b.N*replicas)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkReplicaOpen measures an engine opening a conversation on a
// replica (Mirror.OpenLog, then engine.LoadTail, then Close) on generated
// logs of 3,000 and 300,000 entries (compacted as folio's engine compacts,
// with a summary message), the two ways: copy reads the tail through the
// replica's local copy and its page index, as the replica's writers do;
// whole reads every record from the database, as a store without a mirror
// does; lease only takes the conversation's lease and lets it go (a
// connection of its own, the advisory lock and the lease row), which
// both pay. The copy is current and its index built, as after the pages
// a browser read before it sent a command. cpu-ms/op is this process's
// CPU time per open, the database server's not counted.
//
//	eval "$(.ci/pg-start --export)"; go test -run '^$' -bench ReplicaOpen -benchtime 5x ./store/pgstore
func BenchmarkReplicaOpen(b *testing.B) {
	u := freshURL(b)
	ctx := context.Background()
	st, err := Open(ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m := NewMirror(st, b.TempDir(), nil)
	for _, n := range []int{3_000, 300_000} {
		id := fmt.Sprintf("open-%d", n)
		importGen(b, st, id, n)
		if err := m.Sync(ctx, id); err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"lease", "copy", "whole"} {
			open := func() *history.Log {
				if mode == "copy" {
					l, err := m.OpenLog(id)
					if err != nil {
						b.Fatal(err)
					}
					return l
				}
				l, err := history.OpenStore(st, id)
				if err != nil {
					b.Fatal(err)
				}
				return l
			}
			once := func() {
				l := open()
				if mode == "lease" {
					l.Close()
					return
				}
				c, err := engine.LoadTail(l)
				l.Close()
				if err != nil || c.Document.Elided()+c.Document.Len() != n {
					b.Fatalf("%v, %d+%d entries", err, c.Document.Elided(), c.Document.Len())
				}
			}
			once() // builds the copy's index
			b.Run(fmt.Sprintf("entries=%d/%s", n, mode), func(b *testing.B) {
				tails := copyTails.Load()
				cpu := cpuTime()
				for b.Loop() {
					once()
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
				if through := copyTails.Load() - tails; (mode == "copy") != (through == int64(b.N)) {
					b.Fatalf("%s: %d opens read through the copy", mode, through)
				}
			})
		}
	}
}

// cpuTime is the CPU time this process used so far (the database's is
// not counted).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// importGen writes a generated log of n entries into st as conversation
// id, in appends of about 8 MB (one transaction of a 166 MB log is slow to
// build).
func importGen(b *testing.B, st *Store, id string, n int) {
	b.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Messages: n, Seed: 1, ConversationID: id, Summaries: true}); err != nil {
		b.Fatal(err)
	}
	pm, err := st.OpenMedium(id)
	if err != nil {
		b.Fatal(err)
	}
	defer pm.Close()
	data := buf.Bytes()
	first := true
	for len(data) > 0 {
		cut := min(len(data), 8<<20)
		if i := bytes.IndexByte(data[cut-1:], '\n'); i >= 0 {
			cut += i
		}
		var err error
		if first {
			err = pm.Replace(data[:cut])
		} else {
			err = pm.Append(data[:cut])
		}
		if err != nil {
			b.Fatal(err)
		}
		data, first = data[cut:], false
	}
}
