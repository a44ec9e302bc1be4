package toolview

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/transcript"
)

const canary = "CANARY-7f3a9c-do-not-persist"

// TestEphemeralNeverReachesDiskLogsOrMetrics puts a canary string in
// ephemeral payloads (accepted, oversized, malformed, and sent after closure)
// next to a retained item with an artifact, closes, writes the record's tool
// entry the way history would, and then searches every byte written to the
// data folder, the log file and the metrics text.
func TestEphemeralNeverReachesDiskLogsOrMetrics(t *testing.T) {
	data := t.TempDir()
	logFile, err := os.Create(filepath.Join(data, "folio.log"))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := New(WithCadence(0), WithArtifactDir(filepath.Join(data, "artifacts")), WithLogger(logger), WithPayloadLimit(1024))
	var changes []Change
	h.Subscribe(func(c Change) { changes = append(changes, c) })

	inv := mustOpen(t, h, Spec{ID: "inv-unique-8812", Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()
	spin := inv.Supplemental("spinner", WithRetention(Ephemeral))

	w, err := p.NewArtifact("text/plain")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("retained output\n"))
	if _, err := p.ReplaceArtifact(w.Checkpoint(schemaText, 1, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := spin.Replace(text(canary)); err != nil {
		t.Fatal(err)
	}
	_, errBig := spin.Replace(text(canary + strings.Repeat("x", 2048)))
	_, errBad := spin.Replace(Payload{Schema: schemaText, Version: 1, Data: []byte(`{"` + canary)})
	_, errSchema := spin.Replace(Payload{Schema: "undeclared", Version: 1, Data: []byte(`"` + canary + `"`)})
	for _, err := range []error{errBig, errBad, errSchema} {
		if err == nil {
			t.Fatal("a bad ephemeral update was accepted")
		}
		if strings.Contains(err.Error(), canary) {
			t.Fatalf("rejection error carries payload content: %v", err)
		}
	}

	// While open, the ephemeral value is live: the test can see it.
	st, _ := attach(h, "inv-unique-8812")
	if it, _ := st.Item("spinner"); it.Value == nil || !strings.Contains(string(it.Value.Payload), canary) {
		t.Fatal("the ephemeral value was not visible while open")
	}

	rec, err := inv.Close(Outcome{Status: transcript.ToolOK}, Result{Text: "done"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spin.Replace(text(canary + "-late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("late ephemeral update: %v", err)
	}

	// After closure the ephemeral item is gone from every answer.
	st, _ = attach(h, "inv-unique-8812")
	if it, ok := st.Item("spinner"); ok && it.Value != nil {
		t.Fatalf("attach after closure still has the ephemeral value: %+v", it)
	}
	last := changes[len(changes)-2]
	if last.Item != "spinner" || last.Open || last.Value != nil {
		t.Fatalf("closing change of the ephemeral item = %+v", last)
	}
	if strings.Contains(fmt.Sprintf("%+v", rec), canary) {
		t.Fatal("the record carries the ephemeral payload")
	}

	// Write the tool entry as history would, and the metrics as an exporter would.
	entry, err := transcript.EncodeEntry(rec.Entry("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "conversation.jsonl"), append(entry, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	var metrics bytes.Buffer
	h.Metrics().WriteText(&metrics)
	if err := os.WriteFile(filepath.Join(data, "metrics.txt"), metrics.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile.Close()

	files := 0
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("%s contains the ephemeral canary", filepath.Base(path))
		}
		return nil
	})
	if files < 4 { // log, history line, metrics, the retained artifact
		t.Fatalf("only %d files written; the test would prove nothing", files)
	}
	logs, _ := os.ReadFile(filepath.Join(data, "folio.log"))
	if !bytes.Contains(logs, []byte("reason=oversized")) {
		t.Fatalf("the rejection was not logged at all:\n%s", logs)
	}
	if bytes.Contains(logs, []byte("inv-unique-8812")) || bytes.Contains(logs, []byte(data)) {
		t.Fatalf("logs carry an invocation id or a path:\n%s", logs)
	}
}

func TestEphemeralArtifactsRemovedAtClosure(t *testing.T) {
	dir := t.TempDir()
	h := New(WithCadence(0), WithArtifactDir(dir))
	inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()
	scratch := inv.Supplemental("scratch", WithRetention(Ephemeral))

	kept, _ := p.NewArtifact("text/plain")
	superseded, _ := p.NewArtifact("text/plain")
	eph, err := scratch.NewArtifact("text/plain")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*ArtifactWriter{kept, superseded, eph} {
		w.Write([]byte("bytes"))
	}
	if _, err := p.ReplaceArtifact(superseded.Checkpoint(schemaText, 1, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReplaceArtifact(kept.Checkpoint(schemaText, 1, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := scratch.ReplaceArtifact(eph.Checkpoint(schemaText, 1, false)); err != nil {
		t.Fatal(err)
	}
	inv.Close(Outcome{}, Result{})
	names := func() []string {
		ents, _ := os.ReadDir(dir)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	if got := names(); len(got) != 1 || got[0] != kept.Ref() {
		t.Fatalf("artifact folder after closure holds %v, want only the retained %s", got, kept.Ref())
	}
	if _, err := eph.Write([]byte("more")); !errors.Is(err, ErrClosed) {
		t.Fatalf("write to a closed artifact: %v", err)
	}
	if h.Metrics().EphemeralRemoved != 1 {
		t.Fatalf("ephemeral removals = %d", h.Metrics().EphemeralRemoved)
	}
}
