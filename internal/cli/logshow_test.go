package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

// wholeShow is folio log show as it was before it streamed: the whole log
// read, then printed (the oracle of the streaming one): as JSON, in the
// plain form (referencePlain) or, with neither, as a terminal's classic
// view paints it in the plain theme.
func wholeShow(t *testing.T, path string, asJSON bool, width int) (string, string) {
	return wholeShowAs(t, path, asJSON, true, width)
}

func wholeShowAs(t *testing.T, path string, asJSON, plain bool, width int) (string, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := history.ReadStore(singleFile{path, data}, strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	if err != nil {
		return "", "error: " + err.Error()
	}
	var out, errOut bytes.Buffer
	if asJSON {
		if err := showJSON(c, &out); err != nil {
			t.Fatal(err)
		}
		return out.String(), ""
	}
	if len(c.Problems) > 0 {
		io.WriteString(&errOut, problemsLine(path, len(c.Problems)))
	}
	if plain {
		out.WriteString(referencePlain(c.Document, 0, width))
	} else {
		out.WriteString(renderDocument(c.Document, tui.PlainTheme, width))
	}
	return out.String(), errOut.String()
}

// referencePlain is the plain form of doc from entry from on, read whole:
// each run of the classic view (consecutive reasoning or tool entries, cut
// at every 64th entry, or one entry) painted by the classic painter in the
// plain theme, an answer as its markdown less the blank lines around it,
// a blank line before every run but the first and a cut stretch's
// continuation; the run that holds from is the first printed.
func referencePlain(doc transcript.Document, from, width int) string {
	p := tui.NewPainter(tui.PlainTheme, tui.ForClassic(), tui.Unattended(), tui.WithLocation(time.Local))
	fam := func(i int) string {
		switch doc.At(i).Content.(type) {
		case transcript.Reasoning:
			return "reasoning"
		case transcript.Tool:
			return "tool"
		}
		return ""
	}
	var b strings.Builder
	for i := 0; i < doc.Len(); {
		j := i + 1
		for fam(i) != "" && j < doc.Len() && j%64 != 0 && fam(j) == fam(i) {
			j++
		}
		if j <= from {
			i = j
			continue
		}
		var lines []string
		if a, ok := doc.At(i).Content.(transcript.Agent); ok {
			md := strings.ReplaceAll(a.Markdown, "\r", "")
			ls := strings.Split(md, "\n")
			for len(ls) > 0 && strings.TrimSpace(ls[0]) == "" {
				ls = ls[1:]
			}
			for len(ls) > 0 && strings.TrimSpace(ls[len(ls)-1]) == "" {
				ls = ls[:len(ls)-1]
			}
			if len(ls) > 0 {
				ls[len(ls)-1] = strings.TrimRight(ls[len(ls)-1], " \t")
			}
			lines = ls
		} else {
			var r tui.Run
			for k := i; k < j; k++ {
				r.Entries = append(r.Entries, doc.At(k))
				r.Open = append(r.Open, doc.IsOpen(k))
			}
			lines = p.Paint(r, width)
		}
		if len(lines) > 0 {
			if i > 0 && (i%64 != 0 || fam(i) == "" || fam(i-1) != fam(i)) {
				b.WriteString("\n")
			}
			for _, l := range lines {
				b.WriteString(l + "\n")
			}
		}
		i = j
	}
	return b.String()
}

// showCorpus copies the fixture logs (Jazz's among them: rejected batches,
// legacy version 2 logs, branches, open tails) and generated ones into a
// data folder's conversations folder, where show reads them through their
// page indexes, and returns their paths.
func showCorpus(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, pattern := range []string{"../../history/export/testdata/jazz/*.jsonl", "../../history/testdata/*.jsonl",
		"../../engine/testdata/jazz/*/*.jsonl"} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.Base(filepath.Dir(m))+"-"+filepath.Base(m))
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	if len(paths) < 40 {
		t.Fatalf("the corpus has only %d logs", len(paths))
	}
	for _, n := range []int{5, 700, 5000} {
		p := filepath.Join(dir, "gen-"+fmtInt(n)+".jsonl")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gen.Write(f, gen.Options{Messages: n, Seed: uint64(n)}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		paths = append(paths, p)
	}
	return paths
}

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// folio log show prints exactly what the whole read printed, text and
// JSON, for every log of the corpus, twice (the second time through the
// index the first one left).
func TestLogShowStreamsTheWholeReadsOutput(t *testing.T) {
	for _, path := range showCorpus(t) {
		for _, asJSON := range []bool{false, true} {
			wantOut, wantErr := wholeShow(t, path, asJSON, 100)
			for round := range 2 {
				args := []string{"log", "show", "--width", "100", path}
				if asJSON {
					args = append(args, "--json")
				}
				out, errOut, err := run(t, args...)
				if strings.HasPrefix(wantErr, "error: ") {
					if err == nil {
						t.Errorf("%s: show succeeded where the whole read failed (%s)", path, wantErr)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s (json %v, round %d): %v", filepath.Base(path), asJSON, round, err)
					continue
				}
				if out != wantOut {
					t.Errorf("%s (json %v, round %d): the output differs from the whole read's:\n%s",
						filepath.Base(path), asJSON, round, firstDiff(out, wantOut))
				}
				if errOut != wantErr {
					t.Errorf("%s (json %v, round %d): stderr %q, want %q", filepath.Base(path), asJSON, round, errOut, wantErr)
				}
			}
		}
	}
}

// firstDiff shows where two outputs part.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + fmtInt(i+1) + ":\n got  " + a + "\n want " + b
		}
	}
	return "(same lines)"
}

// --tail N prints the last N entries and --from ID the entries from ID on,
// as the whole document prints them there.
func TestLogShowTailAndFrom(t *testing.T) {
	paths := showCorpus(t)
	path := paths[len(paths)-1] // the longest generated log
	c, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Document.Len()
	for _, k := range []int{1, 100, 1000} {
		want := referencePlain(c.Document, n-k, 100)
		out, _, err := run(t, "log", "show", "--width", "100", "--tail", fmtInt(k), path)
		if err != nil || out != want {
			t.Fatalf("--tail %d: %v\n%s", k, err, firstDiff(out, want))
		}
		out, _, err = run(t, "log", "show", "--width", "100", "--from", c.Document.At(n-k).ID, path)
		if err != nil || out != want {
			t.Fatalf("--from the same entry: %v\n%s", err, firstDiff(out, want))
		}
	}
	if _, _, err := run(t, "log", "show", "--from", "no-such-entry", path); exitCode(err) != 1 {
		t.Errorf("--from an unknown entry: %v, want exit 1", err)
	}
}

// /dev/null is a character device but no terminal: show's output there,
// as to any file, is painted without terminal styling.
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("/dev/null taken for a terminal")
	}
}

// On a terminal, folio log show paints as the classic view does: the
// parts it reads through the index paint exactly as the whole document
// read at once.
func TestLogShowTerminalPartsPaintAsTheWhole(t *testing.T) {
	for _, path := range showCorpus(t) {
		want, wantErr := wholeShowAs(t, path, false, false, 100)
		if strings.HasPrefix(wantErr, "error: ") {
			continue
		}
		var out, errOut bytes.Buffer
		done, err := streamShow(path, showOptions{width: 100}, tui.PlainTheme, IO{Out: &out, Err: &errOut})
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
			continue
		}
		if !done {
			continue // no index: the command reads it whole
		}
		if out.String() != want || errOut.String() != wantErr {
			t.Errorf("%s: the terminal's output differs from the whole read's:\n%s", filepath.Base(path), firstDiff(out.String(), want))
		}
	}
}

// The plain form paints the runs it paints itself (prompts, tool rows,
// reasoning, receipts, notices, the header) line for line as the classic
// painter does in the plain theme.
func TestPlainRunsPaintAsThePainter(t *testing.T) {
	for _, path := range showCorpus(t) {
		c, err := history.ReadFile(path)
		if err != nil {
			continue
		}
		doc := c.Document
		settled := doc.Len()
		for settled > 0 && doc.IsOpen(settled-1) {
			settled--
		}
		for _, width := range []int{100, 37} {
			quick, slow := newPlainPainter(width), newPlainPainter(width)
			slow.slow = true
			part := plainPart{es: doc.Entries(), settled: settled}
			got, want := string(quick.paint(nil, part)), string(slow.paint(nil, part))
			if got != want {
				t.Errorf("%s at %d columns: %s", filepath.Base(path), width, firstDiff(got, want))
			}
		}
	}
}

// branchedLog writes a log whose head is a branch forked from the middle
// of main, with a turn of its own, into dir.
func branchedLog(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "branched.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Messages: 600, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	l, err := history.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	at := c.Document.At(c.Document.Len() / 2).ID
	b, err := l.Fork(history.Main, at, len(c.Messages)/2, "a branch")
	if err != nil {
		t.Fatal(err)
	}
	bc, err := l.SetHead(b)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := bc.Document.Append(transcript.Entry{ID: "branch-q", Timestamp: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Content: transcript.User{Text: "And on the branch?"}})
	if err == nil {
		doc, err = doc.Append(transcript.Entry{ID: "branch-a", Timestamp: time.Date(2026, 1, 2, 0, 0, 1, 0, time.UTC), Content: transcript.Agent{Markdown: "Here, **only**."}})
	}
	if err != nil {
		t.Fatal(err)
	}
	msgs := append(bc.Messages, message.Text(message.User, "And on the branch?"), message.Text(message.Assistant, "Here, **only**."))
	if err := l.Save(doc, msgs); err != nil {
		t.Fatal(err)
	}
	return p
}

// --json and the plain form stream (through the index, never the whole
// read) for the generated logs, a branched log and the logs with rejected
// batches, and what they write is the whole read's, byte for byte.
func TestLogShowStreamsBranchesAndRejectedBatches(t *testing.T) {
	paths := showCorpus(t)
	paths = append(paths, branchedLog(t, filepath.Dir(paths[0])))
	streamed := streamedShows(t, paths)
	t.Logf("%d of %d outputs streamed", streamed, 2*len(paths))
}

// A log outside a data folder, with no index of its own, streams as well,
// through an index built aside for the read: the same bytes as the whole
// read, as many outputs streamed as in a data folder, and nothing left
// beside the logs or in the temporary folder.
func TestLogShowStreamsALogElsewhere(t *testing.T) {
	paths := showCorpus(t)
	paths = append(paths, branchedLog(t, filepath.Dir(paths[0])))
	inFolder := streamedShows(t, paths)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.MkdirAll(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	var moved []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		q := filepath.Join(elsewhere, filepath.Base(p))
		if err := os.WriteFile(q, data, 0o600); err != nil {
			t.Fatal(err)
		}
		moved = append(moved, q)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if n := streamedShows(t, moved); n != inFolder {
		t.Errorf("%d outputs streamed outside a data folder, %d in one", n, inFolder)
	}
	files, err := os.ReadDir(elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".jsonl") {
			t.Errorf("show left %s beside the logs", f.Name())
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("show left %d entries in the temporary folder, the first %s", len(left), left[0].Name())
	}
}

// streamedShows checks that --json and the plain form of each log stream
// and write what the whole read writes, byte for byte, and says how many
// of the outputs streamed. Generated logs, the branched log and the logs
// with rejected batches must stream.
func streamedShows(t *testing.T, paths []string) int {
	t.Helper()
	streamed := 0
	for _, path := range paths {
		base := filepath.Base(path)
		must := strings.HasPrefix(base, "gen-") || base == "branched.jsonl" || strings.Contains(base, "batch-")
		for _, asJSON := range []bool{false, true} {
			want, wantErr := wholeShow(t, path, asJSON, 100)
			var out, errOut bytes.Buffer
			var done bool
			var err error
			if asJSON {
				done, err = jsonShow(path, showOptions{width: 100}, &out)
			} else {
				done, err = plainShow(path, showOptions{width: 100}, tui.PlainTheme, IO{Out: &out, Err: &errOut})
			}
			if !done {
				if must {
					t.Errorf("%s (json %v): read whole, not streamed", base, asJSON)
				}
				continue
			}
			if asJSON {
				// The entries one a line: the whole read's, too.
				var lines bytes.Buffer
				if ok, err := jsonShow(path, showOptions{jsonl: true}, &lines); !ok || err != nil {
					t.Errorf("%s: --jsonl: %v", base, err)
				} else if c, err := history.ReadFile(path); err == nil {
					var want bytes.Buffer
					writeJSONL(&want, c.Document.Entries())
					if lines.String() != want.String() {
						t.Errorf("%s: --jsonl differs from the whole read:\n%s", base, firstDiff(lines.String(), want.String()))
					}
				}
			}
			streamed++
			if err != nil {
				t.Errorf("%s (json %v): %v", base, asJSON, err)
				continue
			}
			if out.String() != want {
				t.Errorf("%s (json %v): differs from the whole read:\n%s", base, asJSON, firstDiff(out.String(), want))
			}
			if !asJSON && errOut.String() != wantErr {
				t.Errorf("%s: stderr %q, want %q", base, errOut.String(), wantErr)
			}
		}
	}
	return streamed
}
