// Package gen writes synthetic conversation logs for tests, benchmarks and
// load runs: deterministic for a seed, in history log version 3, with the mix
// a real conversation has (user turns, reasoning, tool calls with retained
// presentations, markdown with code and math, failures, steering,
// compactions, and a few very large turns).
//
// Concurrency: Entries and Write keep no shared state; calls may run in
// parallel.
package gen

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// Options say what to generate.
type Options struct {
	// Messages is the number of UI entries (presentation facts) to write.
	Messages int
	// Seed makes the output; the same seed gives the same bytes.
	Seed uint64
	// ConversationID defaults to "gen-<seed>".
	ConversationID string
	// Title goes in the header when set; without it a listing titles the
	// log by its first prompt, as it does any untitled log.
	Title string
	// Start is the first timestamp; defaults to 2026-01-01T00:00:00Z.
	Start time.Time
	// NoModelMessages leaves out the model-facing message records.
	NoModelMessages bool
	// Summaries starts the model-facing messages after each compaction
	// with a user message summarizing what it covered, as folio's engine
	// does. Without it they start with the next turn's prompt.
	Summaries bool
}

func (o *Options) defaults() {
	if o.ConversationID == "" {
		o.ConversationID = "gen-" + strconv.FormatUint(o.Seed, 10)
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
}

// Record is one generated fact: a UI entry, or a model-facing message, or a
// rewrite marker after a compaction.
type Record struct {
	Entry   *transcript.Entry
	Message *message.Message
	Rewrite bool
	At      time.Time
}

// Entries yields the generated entries in order (model messages left out).
func Entries(o Options) iter.Seq[transcript.Entry] {
	return func(yield func(transcript.Entry) bool) {
		for r := range Records(o) {
			if r.Entry != nil && !yield(*r.Entry) {
				return
			}
		}
	}
}

// Stats says what Write wrote.
type Stats struct {
	Entries, Messages, Lines int
	Bytes                    int64
}

// Write writes a version 3 log: the header, then one record per line. Each
// entry is its own ui-append record.
func Write(w io.Writer, o Options) (Stats, error) {
	o.defaults()
	bw := bufio.NewWriterSize(w, 1<<20)
	var st Stats
	var line []byte
	emit := func(b []byte) {
		n, _ := bw.Write(b)
		bw.WriteByte('\n')
		st.Bytes += int64(n) + 1
		st.Lines++
	}
	line = append(line[:0], `{"type":"conversation","version":3,"conversationId":`...)
	line, _ = jsontext.AppendQuote(line, o.ConversationID)
	if o.Title != "" {
		line = append(line, `,"title":`...)
		line, _ = jsontext.AppendQuote(line, o.Title)
	}
	line = append(line, `,"startedAt":"`...)
	line = transcript.AppendInstant(line, o.Start)
	line = append(line, `"}`...)
	emit(line)
	for r := range Records(o) {
		line = line[:0]
		switch {
		case r.Entry != nil:
			raw, err := transcript.EncodeEntry(*r.Entry)
			if err != nil {
				return st, fmt.Errorf("gen: entry %s: %w", r.Entry.ID, err)
			}
			line = append(line, `{"type":"ui-append","at":"`...)
			line = transcript.AppendInstant(line, r.At)
			line = append(line, `","entries":[`...)
			line = append(line, raw...)
			line = append(line, "]}"...)
			st.Entries++
		case r.Message != nil:
			raw, err := json.Marshal(r.Message, json.Deterministic(true))
			if err != nil {
				return st, err
			}
			line = append(line, `{"type":"message","at":"`...)
			line = transcript.AppendInstant(line, r.At)
			line = append(line, `","message":`...)
			line = append(line, raw...)
			line = append(line, '}')
			st.Messages++
		case r.Rewrite:
			line = append(line, `{"type":"rewrite","at":"`...)
			line = transcript.AppendInstant(line, r.At)
			line = append(line, `"}`...)
		}
		emit(line)
	}
	return st, bw.Flush()
}

// Records yields the generated records in log order.
func Records(o Options) iter.Seq[Record] {
	o.defaults()
	return func(yield func(Record) bool) {
		g := &generator{
			o:     o,
			rnd:   rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
			now:   o.Start,
			yield: yield,
			ok:    true,
		}
		g.run()
	}
}

type generator struct {
	o     Options
	rnd   *rand.Rand
	now   time.Time
	n     int // entries emitted
	seq   int // IDs minted
	yield func(Record) bool
	ok    bool

	lastCompactedTo int      // entry index the last compaction covered up to
	ids             []string // IDs in order, for compaction coverage
}

func (g *generator) id() string {
	g.seq++
	return "g" + strconv.FormatUint(g.o.Seed, 36) + "-" + strconv.FormatInt(int64(g.seq), 36)
}

func (g *generator) tick(maxMs int) {
	g.now = g.now.Add(time.Duration(1+g.rnd.IntN(maxMs)) * time.Millisecond)
}

// entry emits c unless the budget of entries is spent.
func (g *generator) entry(c transcript.Content) string {
	if !g.ok || g.n >= g.o.Messages {
		g.ok = false
		return ""
	}
	g.tick(4000)
	e := transcript.Entry{ID: g.id(), Content: c, Timestamp: g.now}
	g.n++
	g.ids = append(g.ids, e.ID)
	g.ok = g.yield(Record{Entry: &e, At: g.now})
	return e.ID
}

func (g *generator) msg(m message.Message) {
	if !g.ok || g.o.NoModelMessages {
		return
	}
	g.ok = g.yield(Record{Message: &m, At: g.now})
}

func (g *generator) run() {
	if g.o.Messages <= 0 {
		return
	}
	g.entry(transcript.Header{Name: "folio", Provider: "demo", Model: "demo-1"})
	// A few very large turns at fixed places, so budgets meet groups bigger
	// than themselves.
	large := map[int]bool{}
	if g.o.Messages >= 1000 {
		for _, f := range []int{4, 2} {
			large[g.o.Messages/f] = false
		}
		large[g.o.Messages*3/4] = false
	}
	turn := 0
	for g.ok && g.n < g.o.Messages {
		turn++
		big := false
		for at, done := range large {
			if !done && g.n >= at {
				large[at] = true
				big = true
			}
		}
		g.turn(turn, big)
		if g.n-g.lastCompactedTo > 5000 && g.rnd.IntN(10) == 0 {
			g.compact()
		}
	}
}

func (g *generator) turn(turn int, big bool) {
	q := g.question()
	g.entry(transcript.User{Text: q})
	g.msg(message.Text(message.User, q))
	steps := 1 + g.rnd.IntN(3)
	if big {
		steps = 40
	}
	var answer string
	for s := range steps {
		if g.rnd.IntN(2) == 0 || big {
			g.entry(g.reasoning())
		}
		if s < steps-1 || g.rnd.IntN(3) == 0 {
			calls := 1 + g.rnd.IntN(3)
			for range calls {
				g.entry(g.tool(big))
			}
		}
		if g.rnd.IntN(60) == 0 {
			g.entry(transcript.Steering{Text: "also check the tests", CommandID: "k" + strconv.Itoa(turn)})
		}
	}
	if g.rnd.IntN(40) == 0 {
		// A failed reply keeps its partial answer and ends with one notice.
		answer = g.markdown(1)
		g.entry(transcript.Agent{Markdown: answer})
		ra := 2000.0
		g.entry(transcript.Failure{Reason: "provider-overloaded", Headline: "The model is overloaded", Detail: "HTTP 529 from the provider after 3 attempts", Retryable: true, RetryAfterMs: &ra})
		return
	}
	paras := 1 + g.rnd.IntN(4)
	if big {
		paras = 1600 // about 300 KiB of answer: bigger than a default page
	}
	answer = g.markdown(paras)
	g.entry(transcript.Agent{Markdown: answer})
	g.msg(message.Text(message.Assistant, answer))
	g.entry(g.receipt(steps))
}

func (g *generator) compact() {
	from := g.lastCompactedTo
	to := len(g.ids) - 1 - g.rnd.IntN(200)
	if to <= from {
		return
	}
	summary := "Summary of the earlier work: " + g.sentence()
	g.entry(transcript.Compaction{
		Summary: summary,
		Covers:  transcript.CompactionRange{FromID: g.ids[from], ToID: g.ids[to]},
	})
	g.lastCompactedTo = to + 1
	if g.ok && !g.o.NoModelMessages {
		g.ok = g.yield(Record{Rewrite: true, At: g.now})
		if g.o.Summaries {
			g.msg(message.Text(message.User, "Summary of the earlier conversation:\n\n"+summary))
		}
	}
}

var words = strings.Fields(`the a model tool file test build error value function server page budget group
snapshot token reader writer log entry conversation branch receipt stream settle open close lease document
index offset length bytes cache window scroll anchor latest earliest before after around graph compaction
spawn attach child agent user reply reasoning step latency memory disk fsync lock queue steer stop approve
deny retry edit resend select branch head generation revision presentation artifact checkpoint`)

func (g *generator) word() string { return words[g.rnd.IntN(len(words))] }

func (g *generator) sentence() string {
	var b strings.Builder
	n := 6 + g.rnd.IntN(14)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.word())
	}
	b.WriteByte('.')
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func (g *generator) question() string {
	switch g.rnd.IntN(6) {
	case 0:
		return "Why does the " + g.word() + " " + g.word() + " fail when " + g.sentence()
	case 1:
		return "Can you explain \\(v_t = (d_t - d_{t+1}) / d_t\\) for the " + g.word() + "?"
	default:
		return g.sentence() + " " + g.sentence()
	}
}

func (g *generator) markdown(paras int) string {
	var b strings.Builder
	for p := range paras {
		if p > 0 {
			b.WriteString("\n\n")
		}
		switch g.rnd.IntN(8) {
		case 0:
			b.WriteString("```go\nfunc " + g.word() + "(x int) int {\n\treturn x * " + strconv.Itoa(g.rnd.IntN(100)) + "\n}\n```")
		case 1:
			b.WriteString("$$\\sum_{i=1}^{n} x_i^2 = " + strconv.Itoa(g.rnd.IntN(1000)) + "$$")
		case 2:
			b.WriteString("- " + g.sentence() + "\n- " + g.sentence() + "\n- **" + g.word() + "**: $a^2 + b^2$")
		case 3:
			b.WriteString("## " + g.word() + " " + g.word() + "\n\n" + g.sentence())
		default:
			b.WriteString(g.sentence() + " " + g.sentence() + " " + g.sentence())
		}
	}
	return b.String()
}

func (g *generator) reasoning() transcript.Content {
	d := float64(200 + g.rnd.IntN(9000))
	tok := int64(20 + g.rnd.IntN(600))
	return transcript.Reasoning{Text: g.sentence() + " " + g.sentence(), Label: "Thinking", DurationMs: &d, Tokens: &tok}
}

var apps = []string{"shell", "read", "edit", "grep", "web"}

func (g *generator) tool(big bool) transcript.Content {
	app := apps[g.rnd.IntN(len(apps))]
	d := float64(5 + g.rnd.IntN(20000))
	status := transcript.ToolOK
	if g.rnd.IntN(15) == 0 {
		status = transcript.ToolFailed
	}
	r := transcript.ToolReceipt{App: app, Summary: app + " " + g.word() + "/" + g.word() + ".go", Status: status, DurationMs: &d}
	var pres *transcript.Presentation
	switch app {
	case "shell":
		r.Args = "go test ./" + g.word() + "/..."
		out := g.sentence()
		if big {
			out = strings.Repeat(g.sentence()+"\n", 40)
		}
		payload, _ := json.Marshal(map[string]any{"cols": 100, "rows": 4, "screen": out}, json.Deterministic(true))
		pres = &transcript.Presentation{Schema: "folio.shell/terminal", Version: 1, Revision: int64(1 + g.rnd.IntN(50)), Payload: payload}
	case "edit":
		hidden := int64(g.rnd.IntN(30))
		r.DiffPreview = &transcript.DiffPreview{Lines: []string{"-\t" + g.sentence(), "+\t" + g.sentence()}, HiddenLines: hidden}
		payload, _ := json.Marshal(map[string]any{"path": g.word() + ".go", "hunks": 1 + g.rnd.IntN(4)}, json.Deterministic(true))
		pres = &transcript.Presentation{Schema: "folio.files/diff", Version: 1, Revision: 1, Payload: payload}
	default:
		r.OutputPreview = g.sentence()
	}
	if status == transcript.ToolFailed {
		r.Reason = "exit status 1"
	}
	return transcript.Tool{Receipt: r, InvocationID: "inv-" + strconv.Itoa(g.seq), Presentation: pres}
}

func (g *generator) receipt(steps int) transcript.Content {
	var st []transcript.Step
	for range steps {
		pt := int64(1000 + g.rnd.IntN(50000))
		ct := int64(10 + g.rnd.IntN(2000))
		gen := float64(ct) * (5 + g.rnd.Float64()*20)
		st = append(st, transcript.Step{DurationMs: gen + 300, PromptTokens: &pt, CompletionTokens: &ct, GenerationDurationMs: &gen})
	}
	fin := g.now.UnixMilli()
	return transcript.TurnReceipt{Steps: st, FinishedAt: &fin}
}
