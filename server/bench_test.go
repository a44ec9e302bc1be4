package server

import (
	"bytes"
	"context"
	"strings"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"

	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/server/pager"
)

// BenchmarkPageRoundTrip measures what a tab sees: one 256 KiB page request
// at a random anchor answered over a real loopback WebSocket, for a 3,000-
// and a 300,000-entry conversation. p50/p99 are reported as metrics.
//
//	go test -run '^$' -bench PageRoundTrip -benchtime 3000x ./server
func BenchmarkPageRoundTrip(b *testing.B) {
	for _, n := range []int{3000, 300000} {
		b.Run(map[int]string{3000: "3k", 300000: "300k"}[n], func(b *testing.B) {
			ts := newTestServer(b, Options{})
			ts.writeGen(b, "c", n, 1)
			var ids []string
			for e := range gen.Entries(gen.Options{Messages: n, Seed: 1}) {
				ids = append(ids, e.ID)
			}
			// Anchors past the first 30% let every page fill its budget. A bare client: the harness decodes every frame, which would
			// measure the client's JSON decoder rather than the server.
			ctx := context.Background()
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.url, "http")+"/api/v2/ws", nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ws.CloseNow()
			ws.SetReadLimit(64 << 20)
			rt := func(req string) []byte {
				if err := ws.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
					b.Fatal(err)
				}
				_, resp, err := ws.Read(ctx)
				if err != nil {
					b.Fatal(err)
				}
				return resp
			}
			rt(`{"type":"hello","protocol":4}`)
			var snap struct {
				Token string `json:"token"`
			}
			if err := json.Unmarshal(rt(`{"type":"open","conversation":"c"}`), &snap); err != nil || snap.Token == "" {
				b.Fatalf("open: %v", err)
			}
			rnd := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				req := `{"type":"page","token":"` + snap.Token + `","conversation":"c","anchor":"` +
					ids[len(ids)*3/10+rnd.IntN(len(ids)*7/10)] + `","direction":"before","budgetBytes":262144}`
				t0 := time.Now()
				resp := rt(req)
				lat = append(lat, time.Since(t0))
				if !bytes.HasPrefix(resp, []byte(`{"type":"page"`)) {
					b.Fatalf("page: %.200s", resp)
				}
				b.SetBytes(int64(len(resp)))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkColdCapture measures cold snapshot construction from a 300,000-
// entry log in MB/s of log, beside the history reader's whole hydration of
// the same file (the one-pass goal: capture within 1.5x of hydration).
//
//	go test -run '^$' -bench 'ColdCapture|Hydrate' -benchtime 3x ./server
func BenchmarkColdCapture(b *testing.B) {
	path, size := bigLog(b)
	dir := b.TempDir()
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		sc := history.NewScanner()
		for _, err := range sc.Records(f) {
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
		snap, err := pager.Build(dir, entryItems(sc.Document()))
		if err != nil {
			b.Fatal(err)
		}
		if snap.Stats().Entries != 300000 {
			b.Fatalf("captured %d entries", snap.Stats().Entries)
		}
		snap.Release()
	}
}

func BenchmarkHydrate(b *testing.B) {
	path, size := bigLog(b)
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		conv, err := history.Read(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if conv.Document.Len() != 300000 {
			b.Fatalf("hydrated %d entries", conv.Document.Len())
		}
	}
}

var bigLogPath string

func bigLog(b *testing.B) (string, int64) {
	b.Helper()
	if bigLogPath == "" {
		f, err := os.CreateTemp("", "folio-bench-*.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := gen.Write(f, gen.Options{Messages: 300000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		f.Close()
		bigLogPath = f.Name()
	}
	fi, err := os.Stat(bigLogPath)
	if err != nil {
		b.Fatal(err)
	}
	return bigLogPath, fi.Size()
}
