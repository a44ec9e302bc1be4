package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/transcript"
)

var htmlPageRE = regexp.MustCompile(`(?s)<script type="application/json" class="folio-page">(.*?)</script>`)

// htmlEntries reads back the entries an exported HTML file holds, page
// after page.
func htmlEntries(t *testing.T, doc string) []transcript.Entry {
	t.Helper()
	var all []transcript.Entry
	for _, m := range htmlPageRE.FindAllStringSubmatch(doc, -1) {
		var es []transcript.Entry
		if err := json.Unmarshal([]byte(m[1]), &es); err != nil {
			t.Fatalf("a page is not entries: %v", err)
		}
		all = append(all, es...)
	}
	return all
}

// TestLogExportHTMLHoldsWhatShowShows: for every log of the fixture corpus
// (and generated ones up to 5,000 messages), the HTML export holds exactly
// the entries folio log show --json prints, in order and equal; the export
// streamed through the page index is byte for byte the export of the log
// read whole (a copy outside the data folder, with no index).
func TestLogExportHTMLHoldsWhatShowShows(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	n := 0
	for _, path := range showCorpus(t) {
		name := filepath.Base(path)
		showOut, _, err := run(t, "log", "show", "--json", path)
		if err != nil {
			if _, _, xerr := run(t, "log", "export", "--format", "html", path); xerr == nil {
				t.Errorf("%s: show fails (%v) but the export does not", name, err)
			}
			continue
		}
		var shown struct {
			Entries []transcript.Entry `json:"entries"`
		}
		if err := json.Unmarshal([]byte(showOut), &shown); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "c.html")
		_, exportErr, err := run(t, "log", "export", "--format", "html", "--out", out, path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// A log with problems says so, as show does.
		_, showErr, _ := run(t, "log", "show", path)
		if strings.Contains(exportErr, "problem(s)") != strings.Contains(showErr, "problem(s)") {
			t.Errorf("%s: export says %q, show %q", name, exportErr, showErr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got := htmlEntries(t, string(data))
		if len(got) != len(shown.Entries) {
			t.Errorf("%s: %d entries in the file, show prints %d", name, len(got), len(shown.Entries))
			continue
		}
		for i := range got {
			a, _ := json.Marshal(got[i], json.Deterministic(true))
			b, _ := json.Marshal(shown.Entries[i], json.Deterministic(true))
			if string(a) != string(b) {
				t.Errorf("%s: entry %d is %s, show prints %s", name, i, a, b)
				break
			}
		}
		copyPath := filepath.Join(outside, name)
		src, _ := os.ReadFile(path)
		if err := os.WriteFile(copyPath, src, 0o600); err != nil {
			t.Fatal(err)
		}
		whole, _, err := run(t, "log", "export", "--format", "html", copyPath)
		if err != nil {
			t.Fatalf("%s whole: %v", name, err)
		}
		if whole != string(data) {
			t.Errorf("%s: the export streamed through the index differs from the whole read's", name)
		}
		n++
	}
	if n < 40 {
		t.Errorf("only %d logs exported", n)
	}
}

// TestLogExportHTMLOut: --out writes the file whole or not at all, and is
// refused for a format that goes to standard output.
func TestLogExportHTMLOut(t *testing.T) {
	t.Parallel()
	log := "../../history/export/testdata/jazz/conversation-full.jsonl"
	if _, _, err := run(t, "log", "export", "--format", "markdown", "--out", filepath.Join(t.TempDir(), "x"), log); exitCode(err) != 2 || !strings.Contains(err.Error(), "--out is for --format html") {
		t.Errorf("--out with markdown: %v", err)
	}
	dir := t.TempDir()
	if _, _, err := run(t, "log", "export", "--format", "html", "--out", filepath.Join(dir, "missing", "c.html"), log); exitCode(err) != 1 {
		t.Errorf("--out into a missing folder: %v", err)
	}
	if _, _, err := run(t, "log", "export", "--format", "html", "--out", filepath.Join(dir, "c.html"), filepath.Join(dir, "nope.jsonl")); err == nil {
		t.Error("a missing log exported")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed export left %v", left)
	}
	out := filepath.Join(dir, "c.html")
	if _, errOut, err := run(t, "log", "export", "--format", "html", "--out", out, log); err != nil || !strings.Contains(errOut, "wrote "+out) {
		t.Fatalf("%v %q", err, errOut)
	}
	data, _ := os.ReadFile(out)
	if !strings.HasPrefix(string(data), "<!doctype html>") || !strings.HasSuffix(string(data), "</html>\n") || len(htmlEntries(t, string(data))) == 0 {
		t.Errorf("not a whole export: %.200s", data)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("the folder holds %v, want only c.html", left)
	}
}
