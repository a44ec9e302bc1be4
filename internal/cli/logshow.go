package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

func init() { register("log", newLogShowCmd) }

// showOptions are folio log show's flags.
type showOptions struct {
	asJSON bool
	jsonl  bool // one entry per line
	width  int
	store  string
	data   string // the data folder an ID is looked up in
	tail   int    // the last tail entries; 0 all
	from   string // from this entry on; "" from the first
}

func newLogShowCmd(stdio IO) *cobra.Command {
	var o showOptions
	cmd := &cobra.Command{
		Use:   "show FILE|ID",
		Short: "Print the conversation as the classic view would",
		Long: `Print a conversation log: on a terminal as the classic view draws it; to a pipe or a file in plain text; with --json as one JSON object; with --jsonl as one entry per line.

The plain text (output that is not a terminal) has no colors or other terminal styling. An answer is its markdown as written (without the blank lines around it, and without control characters); everything else (the conversation's header, each prompt after "› ", tool rows with "✓"/"✗" receipts and what shows under them, "▸" reasoning lines, turn receipts, notices, failures) is what the classic view shows for it, wrapped at --width. A blank line separates one entry (or one row of tools, one run of reasoning) from the next.

--json prints {"conversationId","version","entries","messages","rejected"}: the current branch's entries, its model messages as stored, and the lines the reader rejected. --jsonl prints only the entries, one JSON object a line.

A log is printed as it is read, in parts, in about constant memory, whatever its length, in every form, through its page index: every log in a data folder has one; for a log elsewhere without one, show builds one in a temporary folder first (one pass over the log) and leaves nothing beside it. --tail and --from read only what they print. A version 2 log, or a log of model messages only, has no index and is read whole; so is a conversation in a store. With --store (or FOLIO_DATABASE_URL), an argument that is not a file names a conversation in that PostgreSQL store.` + idHelp,
		Example: `folio log show 20260304-050607-a1b2c3
folio log show conversations/20260304-050607-a1b2c3.jsonl
folio log show --tail 20 conversations/20260304-050607-a1b2c3.jsonl
folio log show --json big.jsonl | jq '.messages | length'
folio log show --jsonl big.jsonl | grep '"kind":"failure"'`,
		Args: oneArg("FILE or ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return logShow(cmd, args[0], o, stdio)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object")
	fs.BoolVar(&o.jsonl, "jsonl", false, "print the entries as JSON, one a line")
	storeFlag(fs, &o.store)
	dataFlag(fs, &o.data)
	fs.IntVar(&o.width, "width", 0, "wrap width (default: $COLUMNS, else 100)")
	fs.IntVar(&o.tail, "tail", 0, "print only the last N entries (as folio log ls counts them)")
	fs.StringVar(&o.from, "from", "", "print from the entry with this ID on")
	return cmd
}

func logShow(cmd *cobra.Command, arg string, o showOptions, stdio IO) error {
	if err := checkWidth(cmd, o.width); err != nil {
		return err
	}
	if o.asJSON && o.jsonl {
		return usage(cmd, "give --json or --jsonl, not both")
	}
	if o.tail < 0 {
		return usage(cmd, "--tail must be a number of entries, got %d", o.tail)
	}
	if o.width <= 0 {
		o.width = envWidth()
	}
	theme := tui.PlainTheme
	if isTerminal(stdio.Out) {
		theme = tui.DetectTheme(os.Environ(), true)
	}
	path := arg
	if storeURL(o.store) == "" {
		p, err := resolveLogArg(cmd, arg, o.data)
		if err != nil {
			return err
		}
		path = p
	}
	plain := !isTerminal(stdio.Out)
	if o.asJSON || o.jsonl {
		if done, err := jsonShow(path, o, stdio.Out); done {
			if err != nil {
				return failure(cmd, err)
			}
			return nil
		}
	} else {
		show := streamShow
		if plain {
			show = plainShow
		}
		if done, err := show(path, o, theme, stdio); done {
			if err != nil {
				return failure(cmd, err)
			}
			return nil
		}
	}
	c, _, path, err := readConversation(cmd, path, o.store, o.data)
	if err != nil {
		return err
	}
	from, err := showFrom(c.Document.Len(), o, func(id string) int {
		if i, ok := c.Document.Index(id); ok {
			return i
		}
		return -1
	})
	if err != nil {
		return failure(cmd, err)
	}
	if o.jsonl {
		return writeJSONL(stdio.Out, c.Document.Entries()[from:])
	}
	if o.asJSON {
		if from > 0 {
			doc, err := transcript.NewDocument(c.Document.ID(), c.Document.Entries()[from:])
			if err != nil {
				return failure(cmd, err)
			}
			c.Document = doc
		}
		return showJSON(c, stdio.Out)
	}
	if len(c.Problems) > 0 {
		io.WriteString(stdio.Err, problemsLine(path, len(c.Problems)))
	}
	if plain {
		return writePlainDocument(stdio.Out, c.Document, from, o.width)
	}
	if from == 0 {
		_, err = io.WriteString(stdio.Out, renderDocument(c.Document, theme, o.width))
		return err
	}
	return writeLines(stdio.Out, classicPrinter(theme).PrintFrom(c.Document, from, o.width))
}

// showFrom is the first entry show prints of a document of n entries: the
// one --from names, or the first of the last --tail.
func showFrom(n int, o showOptions, find func(id string) int) (int, error) {
	from := 0
	if o.from != "" {
		if from = find(o.from); from < 0 {
			return 0, fmt.Errorf("no entry %q in the conversation", o.from)
		}
	}
	if o.tail > 0 {
		from = max(from, n-o.tail)
	}
	return from, nil
}

// problemsLine is the note show writes to standard error for a log with
// problems.
func problemsLine(path string, n int) string {
	return fmt.Sprintf("folio: %s: %d problem(s); run folio log validate %s\n", path, n, path)
}

// showPart is how many entries show decodes and paints at a time: a
// multiple of tui.PartAlign, so each part paints as the whole would.
const showPart = 16 * tui.PartAlign

// streamShow prints the log at path in parts through its page index: the
// refs of a part, its entries' bytes, its lines, then the next part, so
// memory holds a part, never the conversation. It reports done false
// (having written nothing) when the log can have no index (a version 2
// log, a log of messages only, a store's conversation): the caller then
// reads it whole.
func streamShow(path string, o showOptions, theme tui.Theme, stdio IO) (done bool, err error) {
	f, ix, d, ok := openShowIndex(path)
	if !ok {
		return false, nil
	}
	defer f.Close()
	defer ix.Close()
	n := d.Len()
	from, err := showFrom(n, o, func(id string) int {
		i, err := d.Find(id)
		if err != nil {
			return -1
		}
		return i
	})
	if err != nil {
		return true, err
	}
	defer streamGC()()
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	// The first part is read and painted here: a log whose first part
	// cannot be read is read whole instead, having written nothing.
	lo := from
	hi := min(n, lo-lo%showPart+showPart)
	r, err := newPartReader(d, f, id, partContext(lo))
	if err != nil {
		return false, nil
	}
	doc, err := r.part(partContext(lo), hi)
	if err != nil {
		return false, nil
	}
	if k := ix.Problems(); k > 0 {
		io.WriteString(stdio.Err, problemsLine(path, k))
	}
	if err := writeLines(stdio.Out, paintPart(doc, lo-partContext(lo), theme, o.width)); err != nil {
		return true, err
	}
	return true, showParts(r, hi, n, theme, o.width, stdio.Out)
}

// openShowIndex opens the log at path and its head's document through its
// page index: the one beside it for a log in a data folder or one indexed
// already, else one built aside for this read (history.OpenIndexAnywhere); ok
// false when it can have none (a version 2 log, a log of messages only).
func openShowIndex(path string) (*os.File, *history.Index, *history.IndexDoc, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, false
	}
	ix, err := history.OpenIndexAnywhere(path, f, 0)
	if err != nil {
		f.Close()
		return nil, nil, nil, false
	}
	d, err := ix.Document(ix.Head())
	if err != nil {
		ix.Close()
		f.Close()
		return nil, nil, nil, false
	}
	return f, ix, d, true
}

// showMemoryLimit is the soft memory limit of a streaming show.
const showMemoryLimit = 40 << 20

// showGCPercent is the garbage collector's target of a streaming show: the
// heap may grow by half of what is live before a collection, not by all
// of it.
const showGCPercent = 50

// streamGC sets the garbage collector for a streaming show and returns
// what sets it back. What a part holds is small (the live heap stays near
// 5 MB, about half of it the program's own), while painting and decoding
// it allocate several times that, briefly: at the default target the heap
// doubles between collections, most of it garbage. A target of 50 keeps
// 5 to 7 MB less anonymous memory resident (measured on a generated
// 300,000-message log) for a fifth to a third more CPU time; the soft
// limit bounds the heap whatever the log's length, should its entries be
// huge.
func streamGC() (restore func()) {
	limit := debug.SetMemoryLimit(showMemoryLimit)
	pct := debug.SetGCPercent(showGCPercent)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}

// partContext is where the document of a part that prints from lo starts:
// the 64 entries before its aligned start, so its runs and separators are
// the whole document's.
func partContext(lo int) int { return max(0, lo-lo%tui.PartAlign-tui.PartAlign) }

// paintPart paints doc from entry from on with a printer of its own, so
// nothing painted outlives the part.
func paintPart(doc transcript.Document, from int, theme tui.Theme, width int) []string {
	return classicPrinter(theme).PrintFrom(doc, from, width)
}

// showParts prints entries lo..n of the reader's document in parts of
// showPart entries. One goroutine reads the parts in order (the log file
// is read by it alone), each part is painted on a goroutine of its own,
// and the parts are written in order as they are ready; at most a few
// parts per processor are in flight, so memory stays bounded by the part
// size.
func showParts(r *partReader, lo, n int, theme tui.Theme, width int, w io.Writer) error {
	type painted struct {
		lines []string
		err   error
	}
	inFlight := make(chan chan painted, runtime.GOMAXPROCS(0))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(inFlight)
		for lo < n {
			hi := min(n, lo+showPart)
			res := make(chan painted, 1)
			select {
			case inFlight <- res:
			case <-stop:
				return
			}
			doc, err := r.part(partContext(lo), hi)
			if err != nil {
				res <- painted{err: err}
				return
			}
			go func(from int) { res <- painted{lines: paintPart(doc, from, theme, width)} }(lo - partContext(lo))
			lo = hi
		}
	}()
	for res := range inFlight {
		p := <-res
		if p.err != nil {
			return p.err
		}
		if err := writeLines(w, p.lines); err != nil {
			return err
		}
	}
	return nil
}

// partReader reads a document's parts forwards through the index: each
// part's entries once, the context a part repeats from the one before it
// kept, not read again.
type partReader struct {
	d    *history.IndexDoc
	f    *os.File
	id   string
	cur  *history.RefCursor
	at   int                // the ordinal of kept's first entry
	kept []transcript.Entry // the last entries read
}

func newPartReader(d *history.IndexDoc, f *os.File, id string, lo int) (*partReader, error) {
	cur, err := d.Forward(lo)
	if err != nil {
		return nil, err
	}
	return &partReader{d: d, f: f, id: id, cur: cur, at: lo}, nil
}

// part is entries lo..hi as a document, the open ones (the provisional
// tail) open. lo is at or after the previous part's start and hi at or
// after its end.
func (r *partReader) part(lo, hi int) (transcript.Document, error) {
	if lo < r.at || lo > r.cur.Pos() {
		return transcript.Document{}, fmt.Errorf("log show: part %d..%d outside %d..%d", lo, hi, r.at, r.cur.Pos())
	}
	more, err := r.cur.Entries(r.f, hi-r.cur.Pos())
	if err != nil {
		return transcript.Document{}, err
	}
	es := make([]transcript.Entry, 0, hi-lo)
	es = append(es, r.kept[lo-r.at:]...)
	es = append(es, more...)
	if len(es) != hi-lo {
		return transcript.Document{}, fmt.Errorf("log show: part %d..%d read %d entries", lo, hi, len(es))
	}
	r.kept, r.at = es, lo
	settled := min(max(r.d.Settled()-lo, 0), len(es))
	doc := transcript.NewCheckedDocument(r.id, es[:settled])
	for _, e := range es[settled:] {
		if doc, err = doc.Open(e); err != nil {
			return transcript.Document{}, err
		}
	}
	return doc, nil
}

func writeLines(w io.Writer, lines []string) error {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// classicPrinter is the classic projection that prints for output nobody
// interacts with.
func classicPrinter(theme tui.Theme) *tui.Classic {
	return tui.NewClassic(tui.NewPainter(theme, tui.ForClassic(), tui.Unattended(), tui.WithLocation(time.Local)))
}

// renderDocument is the whole document as the classic view paints it, for
// output nobody interacts with (folio log show, the chat's /export).
func renderDocument(d transcript.Document, theme tui.Theme, width int) string {
	classic := classicPrinter(theme)
	classic.Mount()
	frame := classic.Sync(d, 1, width, 1<<30)
	var b strings.Builder
	for _, l := range append(frame.Print, frame.Live...) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func showJSON(c *history.Conversation, w io.Writer) error {
	out := struct {
		ConversationID string             `json:"conversationId"`
		Version        int                `json:"version"`
		Entries        []transcript.Entry `json:"entries"`
		Messages       []message.Message  `json:"messages"`
		Rejected       []history.Problem  `json:"rejected"`
	}{c.Header.ConversationID, c.Header.Version, c.Document.Entries(), c.Messages, c.Problems}
	if out.Messages == nil {
		out.Messages = []message.Message{}
	}
	if out.Rejected == nil {
		out.Rejected = []history.Problem{}
	}
	if err := json.MarshalWrite(w, out, json.Deterministic(true), jsontext.Multiline(false)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
