//go:build linux

package client_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/server/client"
	"github.com/foliodev/folio/transcript"
)

// BenchmarkStreamLatency measures owner → attached latency over the local
// endpoint: the owner publishes streamed text of an open reply (what its
// engine does per token), and each iteration waits until the attached
// client's store holds it. Reported: the p50 and p99 of those waits.
func BenchmarkStreamLatency(b *testing.B) {
	data, err := os.MkdirTemp("", "fb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(data)
	srv, err := server.New(server.Options{DataDir: data, TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ep, err := srv.ServeLocal(context.Background(), data)
	if err != nil {
		b.Fatal(err)
	}
	defer ep.Close()
	const id = "bench"
	f, err := os.Create(filepath.Join(data, "conversations", id+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Messages: 20, Seed: 1, ConversationID: id}); err != nil {
		b.Fatal(err)
	}
	f.Close()

	c, err := client.DialLocal(context.Background(), history.EndpointPath(data, os.Getpid()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	st := transcript.NewStore()
	cv, err := c.Open(context.Background(), id, st)
	if err != nil {
		b.Fatal(err)
	}
	applied := make(chan struct{}, 1)
	cv.OnEvent(func(server.ChangeOp) {
		select {
		case applied <- struct{}{}:
		default:
		}
	})
	reply := transcript.Entry{ID: "bench-reply", Content: transcript.Agent{Markdown: ""}, Timestamp: time.Now().UTC()}
	text := ""
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		text += "word "
		reply.Content = transcript.Agent{Markdown: text}
		start := time.Now()
		if err := srv.Publish(id, server.Change{Op: server.OpUpsert, Entry: reply}); err != nil {
			b.Fatal(err)
		}
		for {
			<-applied
			d := st.Snapshot().Document
			if j, ok := d.Index(reply.ID); ok && strings.HasSuffix(d.At(j).Content.(transcript.Agent).Markdown, text[max(0, len(text)-10):]) &&
				len(d.At(j).Content.(transcript.Agent).Markdown) == len(text) {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkFirstScreen compares what a terminal does before its first
// screen of a resumed conversation: plain, it takes the log's lock and
// opens its engine on the log's tail (engine.Open); attached, it dials the
// owner's endpoint, mirrors the conversation's end and reads the owner's
// model (client OpenWithModel, as internal/cli's attach does). Both end
// with the store holding the conversation's end.
func BenchmarkFirstScreen(b *testing.B) {
	data, err := os.MkdirTemp("", "fs")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(data)
	srv, err := server.New(server.Options{DataDir: data, TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ep, err := srv.ServeLocal(context.Background(), data)
	if err != nil {
		b.Fatal(err)
	}
	defer ep.Close()
	const id = "long"
	path := filepath.Join(data, "conversations", id+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Messages: 2000, Seed: 2, ConversationID: id}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	// The page index is built once, as any earlier resume would have.
	if l, err := history.Open(path); err == nil {
		engine.New(transcript.NewStore(), demo.New(demo.Options{})).Open(l)
		l.Close()
	}
	b.Run("resume", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			l, err := history.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			eng := engine.New(transcript.NewStore(), demo.New(demo.Options{}))
			if _, err := eng.Open(l); err != nil {
				b.Fatal(err)
			}
			eng.Close()
			l.Close()
		}
	})
	b.Run("attach", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c, err := client.DialLocal(context.Background(), history.EndpointPath(data, os.Getpid()))
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.OpenWithModel(context.Background(), id, transcript.NewStore()); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
}
