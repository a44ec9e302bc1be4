package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

// End to end through the real demo model: it reasons, calls the real shell
// and read_file tools over several steps, answers with their results, and
// streams at its configured rate, so the receipt's throughput is the rate
// measured from the stream.
func TestEndToEndDemoModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, "README.md"), []byte("# hello demo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		set, err := tools.Builtin(work, nil)
		if err != nil {
			t.Fatal(err)
		}
		prov := demo.New(demo.Options{TokensPerSecond: 50, FirstToken: demo.DefaultFirstToken})
		store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
		eng := engine.New(store, prov, engine.WithTools(set), engine.WithAllowed("shell"), engine.WithModel("folio-demo"))
		defer eng.Close()
		ctx := context.Background()
		eng.Send(ctx, "c1", "list the files here", nil)
		r, _ := eng.Wait(ctx, "c1")
		if r.State != engine.Done {
			t.Fatalf("%+v", r)
		}
		es := store.Snapshot().Document.Entries()
		k := kinds(es)
		if !strings.HasPrefix(k, "user reasoning") || !strings.HasSuffix(k, "turn-receipt") ||
			!strings.Contains(k, "tool") || strings.Count(k, "reasoning") < 2 {
			t.Fatalf("entries %s", k)
		}
		var sawShell bool
		for _, e := range es {
			if tc, ok := e.Content.(transcript.Tool); ok && tc.Receipt.App == "shell" {
				sawShell = tc.Receipt.Status == transcript.ToolOK
			}
		}
		if !sawShell {
			t.Error("the demo's shell call did not run")
		}
		last := es[len(es)-2].Content.(transcript.Agent).Markdown
		if !strings.Contains(last, "README.md") {
			t.Errorf("the answer does not use the tool results: %q", last)
		}
		rc := es[len(es)-1].Content.(transcript.TurnReceipt)
		rate, ok := receipt.Sum(rc.Steps).TokPerSec()
		// Tokens are released on a 50 tok/s schedule; the measured decode
		// rate can only be near it (the first token of each step is not
		// decode time).
		t.Logf("throughput %.2f tok/s over %d steps", rate, len(rc.Steps))
		if !ok || rate < 45 || rate > 55 {
			t.Errorf("throughput %v %v, want about 50 tok/s", rate, ok)
		}
	})
}
