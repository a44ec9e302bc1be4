package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/transcript"
	"golang.org/x/sys/unix"
)

const benchTokens = 10_000

// flood is a provider whose one reply is benchTokens text deltas handed
// out as fast as Next is called: it measures the engine and store, not a
// network.
type flood struct{ events []provider.Event }

func newFlood() *flood {
	evs := make([]provider.Event, 0, benchTokens+2)
	for i := range benchTokens {
		evs = append(evs, provider.Event{Kind: provider.TextDelta, Text: " tok" + strconv.Itoa(i%10)})
	}
	evs = append(evs, provider.Event{Kind: provider.UsageReport, Usage: &provider.Usage{Prompt: provider.Int(10), Completion: provider.Int(benchTokens)}},
		provider.Event{Kind: provider.Done, FinishReason: provider.FinishStop})
	return &flood{events: evs}
}

func (f *flood) Name() string { return "flood" }
func (f *flood) Stream(ctx context.Context, _ provider.Request) (provider.Stream, error) {
	return &floodStream{evs: f.events}, nil
}

type floodStream struct {
	evs []provider.Event
	i   int
}

func (s *floodStream) Next() (provider.Event, error) {
	if s.i >= len(s.evs) {
		return provider.Event{}, io.EOF
	}
	s.i++
	return s.evs[s.i-1], nil
}
func (s *floodStream) Close() error { return nil }

// BenchmarkTurnPerToken is one whole turn of 10,000 streamed tokens per
// iteration, from the provider's event to the store's accepted text; the
// ns/token metric is the cost of one token through engine and store.
func BenchmarkTurnPerToken(b *testing.B) {
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, newFlood())
	defer eng.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		id := "c" + strconv.Itoa(i)
		eng.Send(ctx, id, "go", nil)
		if r, _ := eng.Wait(ctx, id); r.State != engine.Done {
			b.Fatal(r.State)
		}
	}
	report(b, cpu)
}

// report adds per-token metrics: wall time, throughput, and the process's
// CPU time per token, which stays meaningful on a shared, loaded machine
// where wall time mostly measures waiting for a core.
func report(b *testing.B, cpu0 time.Duration) {
	tokens := float64(b.N * benchTokens)
	perToken := float64(b.Elapsed().Nanoseconds()) / tokens
	b.ReportMetric(perToken, "ns/token")
	b.ReportMetric(1e9/perToken, "tokens/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/tokens, "cpu-ns/token")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStoreOnlyPerToken is the store's share of the same work: the
// stream writer accepting 10,000 deltas with no engine in front of it.
// The engine's overhead is the difference to BenchmarkTurnPerToken.
func BenchmarkStoreOnlyPerToken(b *testing.B) {
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	f := newFlood()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		w := store.Lease().Stream()
		for _, ev := range f.events[:benchTokens] {
			w.Text(ev.Text)
		}
		w.Finish()
	}
	report(b, cpu)
}

// BenchmarkFirstTurn opens an engine on a generated conversation of 3,000
// and of 300,000 entries (compacted as folio's engine compacts, with a
// summary message) and runs the first demo turn, until the turn's save is
// on disk and the log is closed. The logs are in a data folder's
// conversations folder with their page index built, as folio's writer
// leaves them, and the log and its index are dropped from the page cache
// before each turn. Open reads the log's tail (Engine.Open, through the
// index); Load reads it whole and hydrates the store with all of it
// (history.Log.Load, then Resume). The demo model streams as it does by
// default (no rate set: as fast as the engine reads). The goal:
// Open at 300,000 within 1.5x of Open at 3,000. The -branched logs are
// the same conversations after an edit of a recent prompt (branched): the
// head is a fork of main, and another fork stays beside it.
//
//	go test ./engine -run '^$' -bench FirstTurn -benchtime 3x
func BenchmarkFirstTurn(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "data", "conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		n        int
		branched bool
	}{{3_000, false}, {300_000, false}, {3_000, true}, {300_000, true}} {
		n := c.n
		name := strconv.Itoa(n)
		if c.branched {
			name += "-branched"
		}
		path := filepath.Join(dir, name+".jsonl")
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, gen.Options{Messages: n, Seed: 1, Summaries: true}); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		if c.branched {
			data = branched(b, data)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		// The index as built, kept beside the log rather than in memory so
		// live-MB counts only what the engine holds.
		index := buildIndex(b, path)
		for _, mode := range []string{"Open", "Load"} {
			b.Run(fmt.Sprintf("entries=%s/%s", name, mode), func(b *testing.B) {
				var live uint64
				for b.Loop() {
					// The log and its index as the writer left them, out
					// of the page cache.
					b.StopTimer()
					if err := os.Truncate(path, fi.Size()); err != nil {
						b.Fatal(err)
					}
					if err := copyFile(history.IndexPath(path), index); err != nil {
						b.Fatal(err)
					}
					dropCache(b, path, history.IndexPath(path))
					b.StartTimer()
					live = firstTurn(b, path, mode == "Open")
				}
				b.ReportMetric(float64(live)/1e6, "live-MB")
			})
		}
	}
}

// buildIndex writes the page index of the log at path, as its writer
// would have, and returns the path of a copy of it.
func buildIndex(b *testing.B, path string) string {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ix, err := history.OpenIndex(path, f, 0)
	if err != nil {
		b.Fatal(err)
	}
	ix.Close()
	keep := path + ".built"
	if err := copyFile(keep, history.IndexPath(path)); err != nil {
		b.Fatal(err)
	}
	return keep
}

// copyFile replaces dst's content with src's.
func copyFile(dst, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

// dropCache evicts files from the page cache.
func dropCache(b *testing.B, paths ...string) {
	b.Helper()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// firstTurn opens an engine on the log at path and runs one demo turn. It
// returns the heap the engine holds after the turn (measured with the
// timer stopped).
func firstTurn(b *testing.B, path string, tail bool) (live uint64) {
	l, err := history.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, demo.New(demo.Options{FirstToken: demo.DefaultFirstToken}), engine.WithSaver(l), engine.WithModel("demo"))
	defer eng.Close()
	if tail {
		_, err = eng.Open(l)
	} else {
		var c *history.Conversation
		if c, err = l.Load(); err == nil {
			err = eng.Resume(c.Document, c.Messages)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := eng.Send(ctx, "first", "hello there", nil); err != nil {
		b.Fatal(err)
	}
	if r, err := eng.Wait(ctx, "first"); err != nil || r.State != engine.Done {
		b.Fatalf("turn: %+v %v", r, err)
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(eng)
	b.StartTimer()
	return ms.HeapAlloc
}

// BenchmarkEditAndResend measures editing the last prompt of a 3,000- and
// a 300,000-entry conversation on an engine opened with Open: the edit
// reads the log's tail back to the prompt, forks through the page index,
// continues on the new branch from its tail, and the edited turn runs to
// its end. The log and its index are put back and dropped from the page
// cache before each edit; the open is not timed.
//
//	go test ./engine -run '^$' -bench EditAndResend -benchtime 3x
func BenchmarkEditAndResend(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "data", "conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{3_000, 300_000} {
		path := filepath.Join(dir, strconv.Itoa(n)+".jsonl")
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, gen.Options{Messages: n, Seed: 1, Summaries: true}); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
		size := int64(buf.Len())
		buf = bytes.Buffer{} // live-MB counts what the engine holds
		index := buildIndex(b, path)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			var live uint64
			for b.Loop() {
				b.StopTimer()
				if err := os.Truncate(path, size); err != nil {
					b.Fatal(err)
				}
				if err := copyFile(history.IndexPath(path), index); err != nil {
					b.Fatal(err)
				}
				l, err := history.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
				eng := engine.New(store, demo.New(demo.Options{FirstToken: demo.DefaultFirstToken}), engine.WithSaver(l), engine.WithModel("demo"))
				if _, err := eng.Open(l); err != nil {
					b.Fatal(err)
				}
				doc := store.Snapshot().Document
				last := ""
				for i := doc.Len() - 1; i >= 0 && last == ""; i-- {
					if doc.At(i).Content.Kind() == transcript.KindUser {
						last = doc.At(i).ID
					}
				}
				dropCache(b, path, history.IndexPath(path))
				b.StartTimer()
				ctx := context.Background()
				if _, err := eng.EditAndResend(ctx, "edit", last, "the same question, put better"); err != nil {
					b.Fatal(err)
				}
				if r, err := eng.Wait(ctx, "edit"); err != nil || r.State != engine.Done {
					b.Fatalf("edited turn: %+v %v", r, err)
				}
				b.StopTimer()
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = ms.HeapAlloc
				eng.Close()
				l.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(live)/1e6, "live-MB")
		})
	}
}
