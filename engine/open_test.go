package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/transcript"
)

// recorder is a provider that keeps every request it passes on.
type recorder struct {
	p        provider.Provider
	mu       sync.Mutex
	requests []provider.Request
}

func (r *recorder) Name() string { return r.p.Name() }
func (r *recorder) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	r.mu.Lock()
	r.requests = append(r.requests, req)
	r.mu.Unlock()
	return r.p.Stream(ctx, req)
}

// openLogs returns the fixture logs of the history packages and generated
// logs with gen.Mix's rare records, by name.
func openLogs(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{"../history/testdata/*.jsonl", "../history/export/testdata/*/*.jsonl", "testdata/*.jsonl"} {
		paths, _ := filepath.Glob(pat)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = b
		}
	}
	for seed := range uint64(8) {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, gen.Options{Messages: 50 + 60*int(seed), Seed: seed}); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("gen/%d", seed)] = buf.Bytes()
		out[fmt.Sprintf("gen/%d/mixed", seed)] = gen.Mix(buf.Bytes(), seed)
	}
	// Compacted as folio's engine compacts (a summary message first), so
	// the window leaves out the turns before the last compaction.
	for seed := range uint64(3) {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, gen.Options{Messages: 6000 + 1500*int(seed), Seed: seed, Summaries: true}); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("gen/%d/compacted", seed)] = buf.Bytes()
		out[fmt.Sprintf("gen/%d/compacted/mixed", seed)] = gen.Mix(buf.Bytes(), seed)
		out[fmt.Sprintf("gen/%d/compacted/branched", seed)] = branched(t, buf.Bytes())
	}
	if len(out) < 40 {
		t.Fatalf("only %d logs", len(out))
	}
	return out
}

// opened is what one way of opening an engine on a log led to.
type opened struct {
	err  error
	doc  transcript.Document // the store's document after opening
	msgs []message.Message   // the messages of the turn's first request
	log  []byte              // the log after one demo turn
}

// openAndTurn opens an engine on a copy of data, whole (Load and Resume)
// or by its tail (Open), and runs one demo turn. It runs in a synctest
// bubble, so the clock reads the same in both runs; the IDs the store
// mints (a random namespace) and the notice that settles an interrupted
// log are written under fixed names.
func openAndTurn(t *testing.T, data []byte, tail bool, opts ...engine.Option) opened {
	var out opened
	synctest.Test(t, func(t *testing.T) {
		// In a data folder, with its page index built, as folio's writer
		// leaves a log: Open reads through the index where it can.
		path := filepath.Join(t.TempDir(), "data", "conversations", "c1.jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if f, err := os.Open(path); err == nil {
			if ix, err := history.OpenIndex(path, f, 0); err == nil {
				ix.Close()
			}
			f.Close()
		}
		l, err := history.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
		rec := &recorder{p: demo.New(demo.Options{})}
		eng := engine.New(store, rec, append([]engine.Option{engine.WithSaver(l), engine.WithModel("demo")}, opts...)...)
		defer eng.Close()
		var conv *history.Conversation
		if tail {
			conv, err = eng.Open(l)
		} else if conv, err = l.Load(); err == nil {
			err = eng.Resume(conv.Document, conv.Messages)
		}
		if err != nil {
			out.err = err
			return
		}
		out.doc = store.Snapshot().Document
		ctx := context.Background()
		if _, err := eng.Send(ctx, "first", "hello there", nil); err != nil {
			t.Fatal(err)
		}
		if r, err := eng.Wait(ctx, "first"); err != nil || r.State != engine.Done {
			t.Fatalf("turn: %+v %v", r, err)
		}
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		out.msgs = rec.requests[0].Messages
		rec.mu.Unlock()
		if out.log, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		out.log = bytes.ReplaceAll(out.log, []byte(store.IDs().Prefix()), []byte("minted"))
		if conv.Interrupted {
			d := conv.Document
			out.log = bytes.ReplaceAll(out.log, []byte(d.At(d.Len()-1).ID), []byte("notice"))
		}
	})
	return out
}

// TestOpenLikeResume is the engine's differential test of the light open:
// on every fixture and generated log, an engine opened with Open holds the
// end of the document Load and Resume give it, sends the model the same
// messages, and after one turn the log holds the same bytes. With a small
// context window the turn starts with a compaction, whose coverage names
// the conversation's first entry.
func TestOpenLikeResume(t *testing.T) {
	for name, data := range openLogs(t) {
		for _, window := range []int{0, 256} {
			var opts []engine.Option
			if window > 0 {
				opts = append(opts, engine.WithContextWindow(window))
			}
			t.Run(fmt.Sprintf("%s/window=%d", name, window), func(t *testing.T) {
				whole := openAndTurn(t, data, false, opts...)
				// A branched log opens through its page index too: the
				// log is then not read for the tail.
				var logged bytes.Buffer
				prev := slog.Default()
				slog.SetDefault(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
				tail := openAndTurn(t, data, true, opts...)
				slog.SetDefault(prev)
				if strings.HasSuffix(name, "/branched") && strings.Contains(logged.String(), "reading the log for its tail") {
					t.Fatalf("the branched log was read whole for its tail:\n%s", logged.String())
				}
				sameOpen(t, whole, tail)
			})
		}
	}
}

func sameOpen(t *testing.T, whole, tail opened) {
	t.Helper()
	if (whole.err == nil) != (tail.err == nil) {
		t.Fatalf("errors differ: whole %v, tail %v", whole.err, tail.err)
	}
	if whole.err != nil {
		return
	}
	w, l := whole.doc, tail.doc
	k := l.Elided()
	if k+l.Len() != w.Len() || l.Len() < min(engine.TailEntries, w.Len()) || l.FirstID() != w.FirstID() {
		t.Fatalf("tail holds %d after %d (first %q), whole %d (first %q)", l.Len(), k, l.FirstID(), w.Len(), w.FirstID())
	}
	for i := range l.Len() {
		le, we := l.At(i), w.At(k+i)
		if n, ok := le.Content.(transcript.Notice); ok && n.Text == history.InterruptedNotice {
			le.ID = we.ID // minted afresh by each writer
		}
		if !reflect.DeepEqual(le, we) {
			t.Fatalf("entry %d: tail %+v, whole %+v", k+i, l.At(i), w.At(k+i))
		}
	}
	if !reflect.DeepEqual(tail.msgs, whole.msgs) {
		t.Fatalf("the model was sent different messages:\ntail  %d %+v\nwhole %d %+v", len(tail.msgs), tail.msgs, len(whole.msgs), whole.msgs)
	}
	if !bytes.Equal(tail.log, whole.log) {
		t.Fatalf("the logs differ after a turn:\nwhole:\n%s\ntail:\n%s", whole.log, tail.log)
	}
}

// TestOpenEdits: EditAndResend on an engine opened with Open does what it
// does on one that loaded the whole document, for a user entry older than
// the loaded window whose turn the messages still hold (the edit forks)
// and for one whose turn a compaction summarized (both refuse with
// ErrCompacted); the tail engine finds either entry in the log.
func TestOpenEdits(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Messages: 9000, Seed: 3, Summaries: true}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	c, err := history.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// The model's messages hold the turns after the last compaction (the
	// generator summarizes at its compaction entries); the edit of a turn
	// before it is refused.
	var elided int
	for i := c.Document.Len() - 1; i >= 0; i-- {
		if c.Document.At(i).Content.Kind() == transcript.KindCompaction {
			elided = i + 1
			break
		}
	}
	// Open loads the last TailEntries entries, whatever the messages
	// hold: an older log's failures come with the messages.
	synctest.Test(t, func(t *testing.T) {
		// In a data folder, with its page index built, as folio's writer
		// leaves a log: Open reads through the index where it can.
		path := filepath.Join(t.TempDir(), "data", "conversations", "c1.jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if f, err := os.Open(path); err == nil {
			if ix, err := history.OpenIndex(path, f, 0); err == nil {
				ix.Close()
			}
			f.Close()
		}
		l, err := history.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		conv, err := engine.LoadTail(l)
		if err != nil {
			t.Fatal(err)
		}
		if conv.Document.Len() != engine.TailEntries {
			t.Fatalf("Open loads %d entries, not the last %d", conv.Document.Len(), engine.TailEntries)
		}
	})
	if elided == 0 || c.Document.Len()-elided <= engine.TailEntries {
		t.Fatalf("the window leaves out %d of %d entries; the test needs a compacted log", elided, c.Document.Len())
	}
	userAt := func(from, to int) string {
		for i := to - 1; i >= from; i-- {
			if _, ok := c.Document.At(i).Content.(transcript.User); ok {
				return c.Document.At(i).ID
			}
		}
		t.Fatalf("no user entry in [%d, %d)", from, to)
		return ""
	}
	inWindow := userAt(elided, c.Document.Len()-engine.TailEntries)
	before := userAt(0, elided)

	edit := func(tail bool, target string) (out []byte, editErr error) {
		synctest.Test(t, func(t *testing.T) {
			// In a data folder: the tail engine's edit reads the log
			// through its page index (the fork point, the new branch's
			// tail), the whole one reads it whole.
			path := filepath.Join(t.TempDir(), "data", "conversations", "c1.jsonl")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := history.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
			eng := engine.New(store, demo.New(demo.Options{}), engine.WithSaver(l), engine.WithModel("demo"))
			defer eng.Close()
			if tail {
				if _, err := eng.Open(l); err != nil {
					t.Fatal(err)
				}
			} else {
				conv, err := l.Load()
				if err != nil {
					t.Fatal(err)
				}
				if err := eng.Resume(conv.Document, conv.Messages); err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			if _, editErr = eng.EditAndResend(ctx, "edit", target, "the same question, put better"); editErr == nil {
				if r, err := eng.Wait(ctx, "edit"); err != nil || r.State != engine.Done {
					t.Fatalf("turn: %+v %v", r, err)
				}
				// The new branch was loaded as its tail: the engine holds
				// the end of its document, not all of it.
				if d := store.Snapshot().Document; tail && d.Elided() == 0 {
					t.Fatalf("after the edit the engine holds the whole branch (%d entries)", d.Len())
				}
				// And back to main, which is read the same way.
				if err := eng.SelectBranch(history.Main); err != nil {
					t.Fatal(err)
				}
				if d := store.Snapshot().Document; tail && d.Elided() == 0 {
					t.Fatalf("back on main the engine holds the whole document (%d entries)", d.Len())
				}
			}
			if err := eng.Close(); err != nil {
				t.Fatal(err)
			}
			if out, err = os.ReadFile(path); err != nil {
				t.Fatal(err)
			}
			out = bytes.ReplaceAll(out, []byte(store.IDs().Prefix()), []byte("minted"))
		})
		return out, editErr
	}
	for _, target := range []string{inWindow, before} {
		whole, werr := edit(false, target)
		tail, terr := edit(true, target)
		if !errors.Is(terr, werr) && (werr == nil || terr == nil || werr.Error() != terr.Error()) {
			t.Fatalf("%s: the edit failed with %v on the tail, %v on the whole document", target, terr, werr)
		}
		if !bytes.Equal(whole, tail) {
			t.Fatalf("%s: the logs differ after the edit:\nwhole:\n%s\ntail:\n%s", target, whole[len(data):], tail[len(data):])
		}
		if target == inWindow && (werr != nil || !bytes.Contains(tail[len(data):], []byte(`"type":"branch"`))) {
			t.Fatalf("the edit in the window did not fork: %v", werr)
		}
		if target == before && !errors.Is(terr, engine.ErrCompacted) {
			t.Fatalf("the edit before the window: %v, want ErrCompacted", terr)
		}
	}
}

// lastUserTexts joins the user messages since the last compaction.
func lastUserTexts(msgs []message.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.Role == message.User {
			b.WriteString(m.Content)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
