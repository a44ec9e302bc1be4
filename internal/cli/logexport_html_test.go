package cli

import (
	"encoding/base64"
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

var htmlAttachmentRE = regexp.MustCompile(`(?s)<script type="application/json" class="folio-attachment">(.*?)</script>`)

// TestLogExportHTMLEmbedsAttachments: a log in a data folder is exported
// with the attachments the server keeps for it, an image's bytes embedded
// as base64; one over the per-file limit is listed without its bytes, and
// the command says so on standard error. Both the streamed export (with a
// page index) and the whole read give the same blocks.
func TestLogExportHTMLEmbedsAttachments(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	src, err := os.ReadFile("../../history/export/testdata/jazz/conversation-full.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	conv := filepath.Join(data, "conversations")
	os.MkdirAll(conv, 0o755)
	log := filepath.Join(conv, "c1.jsonl")
	if err := os.WriteFile(log, src, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(data, "attachments", "c1")
	os.MkdirAll(dir, 0o755)
	png := []byte("\x89PNG\r\n\x1a\nimage")
	os.WriteFile(filepath.Join(dir, "a-1"), png, 0o644)
	os.WriteFile(filepath.Join(dir, "a-1.json"), []byte(`{"id":"a-1","name":"shot.png","contentType":"image/png","size":13}`), 0o644)
	os.WriteFile(filepath.Join(dir, "a-2"), make([]byte, 9<<20), 0o644)
	os.WriteFile(filepath.Join(dir, "a-2.json"), []byte(`{"id":"a-2","name":"dump.bin","contentType":"application/octet-stream","size":9437184}`), 0o644)
	out := filepath.Join(t.TempDir(), "c.html")
	_, errOut, err := run(t, "log", "export", "--format", "html", "--out", out, log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "dump.bin") || !strings.Contains(errOut, "limit") {
		t.Errorf("stderr does not say dump.bin was left out: %q", errOut)
	}
	doc, _ := os.ReadFile(out)
	blocks := htmlAttachmentRE.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) != 2 {
		t.Fatalf("%d attachment blocks, want 2", len(blocks))
	}
	var a, b struct {
		Name    string `json:"name"`
		Type    string `json:"type"`
		Data    string `json:"data"`
		Omitted string `json:"omitted"`
		Size    int64  `json:"size"`
	}
	if json.Unmarshal([]byte(blocks[0][1]), &a) != nil || json.Unmarshal([]byte(blocks[1][1]), &b) != nil {
		t.Fatal("blocks are not JSON")
	}
	if a.Name != "shot.png" || a.Type != "image/png" || a.Data != base64.StdEncoding.EncodeToString(png) {
		t.Errorf("the image: %+v", a)
	}
	if b.Name != "dump.bin" || b.Omitted != "file" || b.Data != "" || b.Size != 9<<20 {
		t.Errorf("the large file: %+v", b)
	}
	if len(htmlEntries(t, string(doc))) == 0 {
		t.Error("no entries")
	}
}
