package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// These tests run a real tool invocation through the engine, with the
// scripted provider, a real history log and a real artifact folder in one
// data folder, and check the promises of the presentation host end to end:
// the live document, an immediate reconnect and a replay from the log agree
// on one semantic item, and an ephemeral value leaves no trace.

// lockedBuffer is a log sink the host may write to from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dataFolder is an engine saving to a real log, with a host whose artifacts
// live next to it, as folio lays them out.
type dataFolder struct {
	dir, logPath, artDir string
	logs                 *lockedBuffer
	host                 *toolview.Host
	log                  *history.Log
	store                *transcript.Store
	eng                  *engine.Engine
}

func newDataFolder(t *testing.T, prov *scripted, tool *fakeTool) *dataFolder {
	t.Helper()
	d := &dataFolder{dir: t.TempDir(), logs: &lockedBuffer{}}
	d.logPath = filepath.Join(d.dir, "conversations", "c1.jsonl")
	d.artDir = filepath.Join(d.dir, "artifacts")
	d.host = toolview.New(toolview.WithArtifactDir(d.artDir),
		toolview.WithLogger(slog.New(slog.NewTextHandler(d.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	var err error
	if d.log, err = history.Open(d.logPath); err != nil {
		t.Fatal(err)
	}
	d.store = transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	d.eng = engine.New(d.store, prov, engine.WithSaver(d.log), engine.WithModel("test-model"),
		engine.WithHost(d.host), engine.WithTools(toolSet(t, tool)))
	t.Cleanup(d.close)
	return d
}

// close stops the engine, the log and the host, as a process exit would.
// It may run twice.
func (d *dataFolder) close() {
	d.eng.Close()
	d.log.Close()
	d.host.Close()
}

// toolEntry finds the one tool entry of a document.
func toolEntry(t *testing.T, where string, doc transcript.Document) transcript.Entry {
	t.Helper()
	var found []transcript.Entry
	for _, e := range doc.Entries() {
		if _, ok := e.Content.(transcript.Tool); ok {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: want one tool entry, got %d (%s)", where, len(found), kinds(doc.Entries()))
	}
	return found[0]
}

const canary = "CANARY-7f3a-ephemeral-secret"

// TestToolItemConvergesLiveRecordReplay: the settled tool entry of the live
// document (what the terminal and the server's live events and checkpoints
// carry), the host's closing record and the entry read back from the log
// are one semantic item, whose primary checkpoint is the last value the
// tool had accepted. The ephemeral canary (in a payload, a rejected
// oversized update and an artifact file) reaches none of the bytes under the
// data folder, the host's logs, metrics or diagnostics.
func TestToolItemConvergesLiveRecordReplay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type accepted struct {
			rev  toolview.Revision
			data string
		}
		var (
			last     accepted // the primary's last accepted value, as the tool saw it
			sawOnDsk bool     // the ephemeral artifact held the canary while open
		)
		tool := &fakeTool{name: "work", run: func(ctx context.Context, inv *toolview.Invocation, _ []byte) (toolview.Result, error) {
			p := inv.Presentation()
			for i := 1; i <= 5; i++ {
				data := fmt.Sprintf(`{"title":"counting","done":%d,"of":5}`, i)
				rev, err := p.Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(data)})
				if err != nil {
					return toolview.Result{}, err
				}
				last = accepted{rev, data}
			}
			// A stale producer revision is refused and leaves the value alone.
			if _, err := p.Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Revision: 1, Data: []byte(`{"stale":true}`)}); err == nil {
				return toolview.Result{}, errors.New("a stale revision was accepted")
			}
			if _, err := inv.Supplemental("stats").Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(`{"files":12}`)}); err != nil {
				return toolview.Result{}, err
			}
			spin := inv.Supplemental("spinner", toolview.WithRetention(toolview.Ephemeral))
			if _, err := spin.Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(`{"note":"` + canary + `"}`)}); err != nil {
				return toolview.Result{}, err
			}
			big := `{"note":"` + canary + strings.Repeat("x", toolview.DefaultPayloadLimit) + `"}`
			if _, err := spin.Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(big)}); err == nil {
				return toolview.Result{}, errors.New("an oversized update was accepted")
			}
			scratch := inv.Supplemental("scratch", toolview.WithRetention(toolview.Ephemeral))
			w, err := scratch.NewArtifact("text/plain")
			if err != nil {
				return toolview.Result{}, err
			}
			fmt.Fprintf(w, "scratch %s\n", canary)
			if _, err := scratch.ReplaceArtifact(w.Checkpoint(toolschema.Shell, 1, false)); err != nil {
				return toolview.Result{}, err
			}
			b, _ := os.ReadFile(w.Path())
			sawOnDsk = bytes.Contains(b, []byte(canary))
			return toolview.Result{Text: "counted to 5", Summary: "counted to 5"}, nil
		}}
		prov := newScripted(cat(call(0, "call-1", "work", `{}`), done()), cat(text("all counted"), done()))
		d := newDataFolder(t, prov, tool)

		// The host's closing record, as the engine receives it.
		var (
			mu                 sync.Mutex
			record             *toolview.Record
			invocation         string
			sawCanaryInChanges bool
		)
		d.host.Subscribe(func(c toolview.Change) {
			mu.Lock()
			defer mu.Unlock()
			if c.Value != nil && !c.Open && bytes.Contains(c.Value.Payload, []byte(canary)) {
				sawCanaryInChanges = true // an ephemeral value in a closing change
			}
			if c.Record != nil {
				r := *c.Record
				record, invocation = &r, c.Invocation
			}
		})

		if _, err := d.eng.Send(context.Background(), "c1", "count", nil); err != nil {
			t.Fatal(err)
		}
		if r, err := d.eng.Wait(context.Background(), "c1"); err != nil || r.State != engine.Done {
			t.Fatalf("turn: %+v, %v", r, err)
		}
		liveEntry := toolEntry(t, "live document", d.store.Snapshot().Document)
		d.close()

		if record == nil {
			t.Fatal("no closing record reached the subscriber")
		}
		if !sawOnDsk {
			t.Fatal("the ephemeral artifact never held the canary, so its absence proves nothing")
		}
		if liveEntry.ID != invocation {
			t.Fatalf("tool entry %q and invocation %q differ", liveEntry.ID, invocation)
		}
		liveTool := liveEntry.Content.(transcript.Tool)
		if liveTool.InvocationID != invocation {
			t.Fatalf("tool entry names invocation %q, want %q", liveTool.InvocationID, invocation)
		}

		conv, err := history.ReadFile(d.logPath)
		if err != nil {
			t.Fatal(err)
		}
		replayEntry := toolEntry(t, "replay", conv.Document)
		replayTool := replayEntry.Content.(transcript.Tool)
		if replayEntry.ID != liveEntry.ID {
			t.Fatalf("replayed tool entry %q, live %q", replayEntry.ID, liveEntry.ID)
		}
		// The log holds the settled entry itself, byte for byte in meaning:
		// receipt, invocation and every checkpoint.
		if !reflect.DeepEqual(replayTool, liveTool) {
			t.Fatalf("replayed tool content\n  %+v\nlive\n  %+v", replayTool, liveTool)
		}

		// The primary checkpoint is the tool's last accepted value.
		want := terminalOfTool(liveTool)
		if want.Primary == nil || want.Primary.Revision != int64(last.rev) || string(want.Primary.Payload) != last.data ||
			want.Primary.Schema != toolschema.Task || want.Primary.Version != 1 || want.Primary.Artifact != nil {
			t.Fatalf("settled primary %+v, want revision %d payload %s", want.Primary, last.rev, last.data)
		}
		if want.Status != transcript.ToolOK || want.Tool != "work" || len(want.Supplementals) != 1 || want.Supplementals[0].Key != "stats" {
			t.Fatalf("settled item %+v", want)
		}

		mu.Lock()
		defer mu.Unlock()
		paths := map[string]toolview.Terminal{"record": record.Terminal(), "replay": terminalOfTool(replayTool)}
		for name, got := range paths {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n  %+v\nwant (live document)\n  %+v", name, got, want)
			}
		}

		// The ephemeral canary: nowhere under the data folder, in the host's
		// logs, metrics or diagnostics, or in the live document.
		if sawCanaryInChanges {
			t.Error("a closing change carried the ephemeral value")
		}
		var diag strings.Builder
		for _, dg := range record.Diagnostics {
			diag.WriteString(dg.String() + "\n")
		}
		if !strings.Contains(diag.String(), "oversized") {
			t.Errorf("diagnostics do not report the oversized update: %q", diag.String())
		}
		var metrics strings.Builder
		if err := d.host.Metrics().WriteText(&metrics); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(metrics.String(), `reason="oversized"`) {
			t.Errorf("metrics do not count the oversized update:\n%s", metrics.String())
		}
		if d.logs.String() == "" {
			t.Error("the host logged nothing about the rejections, so the log check proves nothing")
		}
		for name, s := range map[string]string{"diagnostics": diag.String(), "metrics": metrics.String(), "host log": d.logs.String()} {
			if strings.Contains(s, canary) {
				t.Errorf("%s carry the ephemeral canary:\n%s", name, s)
			}
		}
		liveDoc, err := transcript.EncodeEntry(liveEntry)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(liveDoc, []byte(canary)) {
			t.Error("the settled live entry carries the ephemeral canary")
		}
		files := scanFolder(t, d.dir, canary)
		if files["log"] == 0 {
			t.Fatal("the scan read no log bytes")
		}
		if !bytes.Contains(mustRead(t, d.logPath), []byte(`"done":5`)) {
			t.Error("the retained checkpoint is not in the log, so the scan reads the wrong bytes")
		}
	})
}

// scanFolder reads every file under dir and fails the test for each one
// holding needle. It returns the bytes read, by "log" and "other".
func scanFolder(t *testing.T, dir, needle string) map[string]int {
	t.Helper()
	read := map[string]int{}
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".jsonl") {
			read["log"] += len(b)
		} else {
			read["other"] += len(b)
		}
		if bytes.Contains(b, []byte(needle)) {
			rel, _ := filepath.Rel(dir, path)
			t.Errorf("%s holds the ephemeral canary", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return read
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestArtifactCheckpointReplaysAfterReload: a tool's artifact-backed
// checkpoint, written to the log at closure, still reads after the process
// is gone: a new host over the same artifact folder serves the replayed
// checkpoint's bytes in bounded ranges, refuses a range over its limit or
// outside the committed bytes, and the checkpoint is the tool's final one.
func TestArtifactCheckpointReplaysAfterReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			content []byte
			lastRev toolview.Revision
		)
		// More than two range limits of output, so reading it takes
		// several bounded ranges.
		for i := 0; len(content) < 2*toolview.DefaultRangeLimit+1000; i++ {
			content = fmt.Appendf(content, "line %06d of the build log\n", i)
		}
		tool := &fakeTool{name: "build", run: func(ctx context.Context, inv *toolview.Invocation, _ []byte) (toolview.Result, error) {
			p := inv.Presentation()
			w, err := p.NewArtifact("text/plain")
			if err != nil {
				return toolview.Result{}, err
			}
			half := len(content) / 2
			w.Write(content[:half])
			if _, err := p.ReplaceArtifact(w.Checkpoint(toolschema.Shell, 1, false)); err != nil {
				return toolview.Result{}, err
			}
			w.Write(content[half:])
			if lastRev, err = p.ReplaceArtifact(w.Checkpoint(toolschema.Shell, 1, true)); err != nil {
				return toolview.Result{}, err
			}
			return toolview.Result{Text: "built", Summary: "built"}, nil
		}}
		prov := newScripted(cat(call(0, "call-1", "build", `{}`), done()), cat(text("built"), done()))
		d := newDataFolder(t, prov, tool)
		if _, err := d.eng.Send(context.Background(), "c1", "build it", nil); err != nil {
			t.Fatal(err)
		}
		if r, err := d.eng.Wait(context.Background(), "c1"); err != nil || r.State != engine.Done {
			t.Fatalf("turn: %+v, %v", r, err)
		}
		liveTool := toolEntry(t, "live document", d.store.Snapshot().Document).Content.(transcript.Tool)
		d.close() // the process is gone

		conv, err := history.ReadFile(d.logPath)
		if err != nil {
			t.Fatal(err)
		}
		got := toolEntry(t, "replay", conv.Document).Content.(transcript.Tool)
		if !reflect.DeepEqual(got, liveTool) {
			t.Fatalf("replayed tool content\n  %+v\nlive\n  %+v", got, liveTool)
		}
		p := got.Presentation
		if p == nil || p.Artifact == nil {
			t.Fatalf("replayed presentation has no artifact: %+v", p)
		}
		a := *p.Artifact
		if p.Revision != int64(lastRev) || !a.Final || !a.Available || a.CommittedBytes != int64(len(content)) ||
			a.ContentType != "text/plain" || p.Schema != toolschema.Shell {
			t.Fatalf("replayed checkpoint %+v artifact %+v, want the final one at revision %d with %d bytes", p, a, lastRev, len(content))
		}

		fresh := toolview.New(toolview.WithArtifactDir(d.artDir))
		defer fresh.Close()
		var read []byte
		for off := int64(0); off < a.CommittedBytes; {
			b, err := fresh.ReadArtifact(a, off, toolview.DefaultRangeLimit)
			if err != nil {
				t.Fatalf("range at %d: %v", off, err)
			}
			if len(b) == 0 || len(b) > toolview.DefaultRangeLimit {
				t.Fatalf("range at %d returned %d bytes", off, len(b))
			}
			read = append(read, b...)
			off += int64(len(b))
		}
		if !bytes.Equal(read, content) {
			t.Fatalf("artifact read back %d bytes, differing from the %d the tool wrote", len(read), len(content))
		}
		if _, err := fresh.ReadArtifact(a, 0, toolview.DefaultRangeLimit+1); !errors.Is(err, toolview.ErrRangeLimit) {
			t.Errorf("a range over the limit: %v, want ErrRangeLimit", err)
		}
		if _, err := fresh.ReadArtifact(a, a.CommittedBytes, 1); !errors.Is(err, toolview.ErrRangeLimit) {
			t.Errorf("a range past the committed bytes: %v, want ErrRangeLimit", err)
		}
		if m := fresh.Metrics(); m.ArtifactRangeRejected != 2 || m.ArtifactReadBytes != int64(len(content)) {
			t.Errorf("metrics: %d ranges rejected, %d bytes read", m.ArtifactRangeRejected, m.ArtifactReadBytes)
		}
		// Only the retained artifact is left in the folder.
		if ents, err := os.ReadDir(d.artDir); err != nil || len(ents) != 1 || ents[0].Name() != a.Ref {
			t.Errorf("artifact folder holds %v (%v), want only %s", ents, err, a.Ref)
		}
	})
}

// TestOpenCallEphemeralValuesNeverSaved: a running call's argument draft
// and its ephemeral supplemental are shown live, in the store every view
// reads, but no save made while the call is open writes them: not the
// durable-streaming save that catches the model writing the arguments, not
// a save while the tool runs. A kill -9 at either moment leaves no
// ephemeral byte under the data folder.
func TestOpenCallEphemeralValuesNeverSaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		running, release := make(chan struct{}), make(chan struct{})
		tool := &fakeTool{name: "work", run: func(ctx context.Context, inv *toolview.Invocation, _ []byte) (toolview.Result, error) {
			if _, err := inv.Supplemental("stats").Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(`{"files":12}`)}); err != nil {
				return toolview.Result{}, err
			}
			spin := inv.Supplemental("spinner", toolview.WithRetention(toolview.Ephemeral))
			if _, err := spin.Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(`{"note":"` + canary + `-spinner"}`)}); err != nil {
				return toolview.Result{}, err
			}
			running <- struct{}{}
			<-release
			return toolview.Result{Text: "worked", Summary: "worked"}, nil
		}}
		g := make(chan struct{})
		prov := newScripted(
			cat(text("Let me look. "), callStart(0, "call-1", "work"), callDelta(0, `{"q":"`+canary+`-draft`),
				gate(g), callDelta(0, `"}`), callEnd(0, "call-1", "work", `{"q":"final"}`), done()),
			cat(text("all done"), done()))
		d := newDataFolder(t, prov, tool)
		if _, err := d.eng.Send(context.Background(), "c1", "work", nil); err != nil {
			t.Fatal(err)
		}
		liveTool := func(where string) (transcript.Tool, bool) {
			doc := d.store.Snapshot().Document
			e := toolEntry(t, where, doc)
			i, _ := doc.Index(e.ID)
			return e.Content.(transcript.Tool), doc.IsOpen(i)
		}
		logHolds := func(s string) bool { return bytes.Contains(mustRead(t, d.logPath), []byte(s)) }

		// The model is writing the arguments and goes silent; its answer
		// so far is saved 2 s after it was accepted, with the call open.
		synctest.Wait()
		if logHolds("Let me look.") {
			t.Fatal("the answer was saved before 2 s, so the next check proves nothing")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		tc, open := liveTool("while the arguments stream")
		if !open || tc.Presentation == nil || tc.Presentation.Schema != toolschema.Args ||
			!strings.Contains(string(tc.Presentation.Payload), canary+"-draft") {
			t.Fatalf("the draft is not shown live: open %v, %+v", open, tc.Presentation)
		}
		if !logHolds("Let me look.") {
			t.Fatal("no durable-streaming save while the arguments streamed")
		}
		if got := toolEntry(t, "saved while the arguments stream", d.reload(t)).Content.(transcript.Tool); got.Presentation != nil {
			t.Errorf("the saved open call has a presentation: %+v", got.Presentation)
		}
		scanFolder(t, d.dir, canary)

		// The tool runs with its ephemeral spinner; a save now (any save
		// path ends in the log's writer) keeps the retained item only.
		close(g)
		<-running
		synctest.Wait()
		tc, open = liveTool("while the tool runs")
		if !open || len(tc.Supplementals) != 2 || !strings.Contains(string(tc.Supplementals[1].Presentation.Payload), canary+"-spinner") {
			t.Fatalf("the ephemeral supplemental is not shown live: open %v, %+v", open, tc.Supplementals)
		}
		if err := d.log.Save(d.store.Snapshot().Document, d.eng.Messages()); err != nil {
			t.Fatal(err)
		}
		if !logHolds(`"files":12`) {
			t.Fatal("the save while the tool ran did not write the open call")
		}
		scanFolder(t, d.dir, canary)

		close(release)
		if r, err := d.eng.Wait(context.Background(), "c1"); err != nil || r.State != engine.Done {
			t.Fatalf("turn: %+v, %v", r, err)
		}
		d.close()
		if files := scanFolder(t, d.dir, canary); files["log"] == 0 {
			t.Fatal("the scan read no log bytes")
		}
	})
}

// reload reads the data folder's log as a new process would.
func (d *dataFolder) reload(t *testing.T) transcript.Document {
	t.Helper()
	conv, err := history.ReadFile(d.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return conv.Document
}

// terminalOfTool reads the settled item back from a tool entry, as
// toolview.Record.Terminal reads it from the record the entry was made from.
func terminalOfTool(t transcript.Tool) toolview.Terminal {
	var d float64
	if t.Receipt.DurationMs != nil {
		d = *t.Receipt.DurationMs
	}
	var primary *transcript.Presentation
	if t.Presentation != nil {
		p := *t.Presentation
		primary = &p
	}
	return toolview.Terminal{
		Tool:          t.Receipt.App,
		Status:        t.Receipt.Status,
		Reason:        t.Receipt.Reason,
		DurationMs:    d,
		Primary:       primary,
		Supplementals: append([]transcript.KeyedPresentation(nil), t.Supplementals...),
	}
}
