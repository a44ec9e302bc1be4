package plugin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// BenchmarkCalls runs the example plugin's countdown (n=1) through the host,
// once per iteration: "persistent" on its one long-running process,
// "per-call" starting a process for every call as plugins without
// "persistent" do. Compare calls/s:
//
//	go test -run '^$' -bench Calls -benchtime 200x ./toolview/plugin/
func BenchmarkCalls(b *testing.B) {
	for _, mode := range []struct {
		name       string
		persistent bool
	}{{"per-call", false}, {"persistent", true}} {
		b.Run(mode.name, func(b *testing.B) {
			p, err := Load("../../examples/countdown/plugin.json")
			if err != nil {
				b.Fatal(err)
			}
			p.persistent = mode.persistent
			defer p.Close()
			h := toolview.New(toolview.WithArtifactDir(b.TempDir()), toolview.WithCadence(0))
			defer h.Close()
			for b.Loop() {
				rec, err := h.Run(context.Background(), toolview.Spec{Tool: "countdown", Producer: p.Manifest}, []byte(`{"n":1}`), p.Func())
				if err != nil || rec.Outcome.Status != transcript.ToolOK {
					b.Fatalf("%v %+v", err, rec)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			p.Wait()
		})
	}
}

// BenchmarkCallsLean is BenchmarkCalls with a plugin that uses only shell
// builtins, so the figure is the lifecycle's cost rather than the
// countdown script's own sed and wc processes:
//
//	go test -run '^$' -bench CallsLean -benchtime 500x ./toolview/plugin/
func BenchmarkCallsLean(b *testing.B) {
	dir := b.TempDir()
	src := `#!/bin/sh
while IFS= read -r request; do
	id=${request#*'"id":'}
	id=${id%%,*}
	printf '{"jsonrpc":"2.0","id":%s,"result":{"content":"ok"}}\n' "$id"
done
`
	if err := os.WriteFile(filepath.Join(dir, "lean.sh"), []byte(src), 0o755); err != nil {
		b.Fatal(err)
	}
	manifest := `{"name":"lean","executable":"lean.sh","tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name       string
		persistent bool
	}{{"per-call", false}, {"persistent", true}} {
		b.Run(mode.name, func(b *testing.B) {
			p, err := Load(filepath.Join(dir, "plugin.json"))
			if err != nil {
				b.Fatal(err)
			}
			p.persistent = mode.persistent
			defer p.Close()
			h := toolview.New(toolview.WithCadence(0))
			defer h.Close()
			for b.Loop() {
				rec, err := h.Run(context.Background(), toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{}`), p.Func())
				if err != nil || rec.Outcome.Status != transcript.ToolOK {
					b.Fatalf("%v %+v", err, rec)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			p.Wait()
		})
	}
}
