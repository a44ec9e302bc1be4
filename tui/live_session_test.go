package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

// BenchmarkLiveSessionProcess is a whole live session as the terminal runs
// it: an engine with a real file log (history) and a real tool
// (read_file), a scripted model that reasons, answers, calls the tool and
// reports usage, and a fullscreen view at the live edge painting every
// snapshot it gets, with a pager over the log. The session goes on until
// 10,000, then 50,000 and 100,000 entries; the heap after a collection is
// taken at each point, and the ratios 100,000 ÷ 10,000 and 100,000 ÷
// 50,000 reported (the view's render cache, bounded in bytes, is still
// filling at 10,000 entries of this session's small answers).
//
// "indexed" keeps the log where the chat keeps it (a conversations
// folder), so history's writer also keeps the log's page index current as
// it grows; "unindexed" keeps the log elsewhere, where history keeps no
// page index, which leaves the engine, the view and the log's writer.
//
// The model's context window is small (16,000 tokens), so the engine
// compacts the model-facing messages on its own as the session grows, as it
// does at any window. msgs_KiB_* is what the messages hold at each point
// (their text), so their share of the heap is seen apart from the
// document's: between compactions they grow with the conversation.
//
//	go test ./tui -run '^$' -bench LiveSessionProcess -benchtime 1x
func BenchmarkLiveSessionProcess(b *testing.B) {
	for _, folder := range []string{"conversations", "elsewhere"} {
		name := map[string]string{"conversations": "indexed", "elsewhere": "unindexed"}[folder]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s := newLiveSession(b, folder, 16_000)
				s.runTo(benchStart)
				at10k, msgs10k, held10k := s.measure()
				s.runTo(benchEnd / 2)
				at50k, _, _ := s.measure()
				s.runTo(benchEnd)
				at100k, msgs100k, held100k := s.measure()
				if profHook != nil {
					profHook(name)
				}
				s.close()
				b.ReportMetric(float64(at10k)/(1<<20), "heap_MiB_10k")
				b.ReportMetric(float64(at100k)/(1<<20), "heap_MiB_100k")
				b.ReportMetric(float64(at100k)/float64(at10k), "heap_ratio")
				b.ReportMetric(float64(at50k)/(1<<20), "heap_MiB_50k")
				b.ReportMetric(float64(at100k)/float64(at50k), "heap_ratio_100k_50k")
				b.ReportMetric(float64(msgs10k)/(1<<10), "msgs_KiB_10k")
				b.ReportMetric(float64(msgs100k)/(1<<10), "msgs_KiB_100k")
				b.ReportMetric(float64(held100k), "held_entries_100k")
				b.Logf("%s: heap %.1f MiB after %d entries, %.1f MiB after %d, %.1f MiB after %d (%.2f×); the store held %d and %d entries, the messages %.0f and %.0f KiB; %d compactions, %d turns",
					name, float64(at10k)/(1<<20), benchStart, float64(at50k)/(1<<20), benchEnd/2, float64(at100k)/(1<<20), benchEnd, float64(at100k)/float64(at10k),
					held10k, held100k, float64(msgs10k)/(1<<10), float64(msgs100k)/(1<<10), s.model.compactions(), s.turns)
			}
		})
	}
}

// liveSession is the process the benchmark measures.
type liveSession struct {
	tb    testing.TB
	log   *history.Log
	store *transcript.Store
	eng   *engine.Engine
	model *sessionModel
	sub   *transcript.Subscription
	view  *viewport
	drawn chan struct{}
	rev   atomic.Uint64 // the revision of the document the view painted last
	turns int
}

func newLiveSession(tb testing.TB, folder string, window int) *liveSession {
	tb.Helper()
	dir := tb.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		tb.Fatal(err)
	}
	notes := strings.Repeat("A line of the notes the model reads back now and then.\n", 12)
	if err := os.WriteFile(filepath.Join(work, "notes.md"), []byte(notes), 0o600); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, folder, "live.jsonl")
	log, err := history.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	set, err := tools.NewSet(tools.ReadFile{Root: work})
	if err != nil {
		tb.Fatal(err)
	}
	s := &liveSession{tb: tb, log: log, model: &sessionModel{}, drawn: make(chan struct{})}
	s.store = transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	s.eng = engine.New(s.store, s.model, engine.WithSaver(log), engine.WithTools(set),
		engine.WithModel("scripted"), engine.WithContextWindow(window))
	s.view = newViewport(newRenderCache(NewPainter(PlainTheme)), 120, 40)
	s.view.Pager = headPager(path)
	s.sub = s.store.Subscribe()
	go func() {
		for snap := range s.sub.C() {
			s.view.SetDocument(visibleDocument(snap), snap.Generation)
			s.view.Lines()
			s.rev.Store(snap.Document.Revision())
		}
		close(s.drawn)
	}()
	return s
}

// runTo sends turns until the conversation has n entries.
func (s *liveSession) runTo(n int) {
	for {
		d := s.store.Snapshot().Document
		if d.Elided()+d.Len() >= n {
			return
		}
		id := fmt.Sprintf("turn-%d", s.turns)
		s.turns++
		if _, err := s.eng.Send(context.Background(), id, fmt.Sprintf("Question %d: what do the notes say about step %d?", s.turns, s.turns), nil); err != nil {
			s.tb.Fatal(err)
		}
		r, err := s.eng.Wait(context.Background(), id)
		if err != nil || r.State != engine.Done {
			s.tb.Fatalf("turn %d: %v %s %s", s.turns, err, r.State, r.Reason)
		}
	}
}

// measure waits for the view to paint the current snapshot and returns
// the heap after a collection, the bytes of the model-facing messages'
// text and how many entries the store holds.
func (s *liveSession) measure() (heap, msgs uint64, held int) {
	for s.rev.Load() != s.store.Snapshot().Document.Revision() {
		time.Sleep(time.Millisecond)
	}
	for _, m := range s.eng.Messages() {
		msgs += uint64(len(m.Content))
		for _, r := range m.Reasoning {
			msgs += uint64(len(r.Text))
		}
		for _, c := range m.ToolCalls {
			msgs += uint64(len(c.Arguments))
		}
	}
	return heapNow(), msgs, s.store.Snapshot().Document.Len()
}

func (s *liveSession) close() {
	s.sub.Close()
	for range s.drawn {
	}
	s.eng.Close()
	s.log.Close()
}

// headPager is the chat host's Pager: entries of the log's head through its
// page index.
type headPager string

func (p headPager) Page(lo, hi int) ([]transcript.Entry, []int, error) {
	return history.HeadEntries(string(p), lo, hi)
}

// sessionModel is a scripted model for long sessions: each turn it
// reasons, says what it will do and reads the notes with three calls,
// then reasons again and answers in markdown; it reports usage with the
// prompt counted from the request, and it writes a summary when the
// engine compacts. It keeps nothing per request.
type sessionModel struct {
	mu  sync.Mutex
	n   int
	cmp int
}

func (m *sessionModel) Name() string { return "scripted" }

func (m *sessionModel) compactions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cmp
}

func (m *sessionModel) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	m.mu.Lock()
	m.n++
	n := m.n
	summary := strings.HasPrefix(req.System, "You are compacting")
	if summary {
		m.cmp++
	}
	m.mu.Unlock()
	prompt := int64(len(req.System) / 4)
	for _, msg := range req.Messages {
		prompt += int64(len(msg.Content)) / 4
	}
	var evs []provider.Event
	switch {
	case summary:
		evs = append(evs, provider.Event{Kind: provider.TextDelta, Text: fmt.Sprintf("The person asked about the notes' steps up to request %d; each answer quoted the notes.", n)})
	case len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == message.User:
		evs = append(evs,
			provider.Event{Kind: provider.ReasoningDelta, Text: "The person wants the notes; reading them three ways is the quickest check. "},
			provider.Event{Kind: provider.ReasoningDelta, Text: fmt.Sprintf("Request %d.", n)},
			provider.Event{Kind: provider.ReasoningDone, Signature: "sig"},
			provider.Event{Kind: provider.TextDelta, Text: "Reading the notes first."})
		for i := range 3 {
			id := fmt.Sprintf("call-%d-%d", n, i)
			args := fmt.Sprintf(`{"path":"notes.md","offset":%d,"limit":4}`, 1+4*i)
			evs = append(evs,
				provider.Event{Kind: provider.ToolCallStart, Index: i, ID: id, Name: "read_file"},
				provider.Event{Kind: provider.ToolCallDelta, Index: i, Text: args},
				provider.Event{Kind: provider.ToolCallEnd, Index: i, ID: id, Name: "read_file", Arguments: jsontext.Value(args)})
		}
	default:
		evs = append(evs,
			provider.Event{Kind: provider.ReasoningDelta, Text: "The three reads agree, so the answer can quote them."},
			provider.Event{Kind: provider.ReasoningDone, Signature: "sig"})
		for _, part := range []string{"The notes say the same thing in every part:\n\n",
			"- each line is *a line of the notes* the model reads back\n", "- nothing else is in them\n\n",
			fmt.Sprintf("So step %d is like the others: `notes.md` has nothing more to add.", n)} {
			evs = append(evs, provider.Event{Kind: provider.TextDelta, Text: part})
		}
	}
	out := int64(64)
	evs = append(evs, provider.Event{Kind: provider.UsageReport, Usage: &provider.Usage{Prompt: &prompt, Completion: &out}},
		provider.Event{Kind: provider.Done, FinishReason: provider.FinishStop})
	return &eventStream{evs: evs}, nil
}

// eventStream replays a planned reply.
type eventStream struct{ evs []provider.Event }

func (s *eventStream) Next() (provider.Event, error) {
	if len(s.evs) == 0 {
		return provider.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

func (s *eventStream) Close() error { return nil }

// benchStart and benchEnd are the two points the benchmark measures at.
var benchStart, benchEnd = 10_000, 100_000

// profHook, when a local test file sets it, is called at the end of each
// session, with the session still open (a heap profile, say).
var profHook func(name string)
