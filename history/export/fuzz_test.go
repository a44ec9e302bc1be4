package export_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/history/export"
)

// FuzzExportJazz: whatever log folio reads, its Jazz export reads back
// without problems, with an agentId, and with as many entries as folio
// showed plus the notices that carry folio-only facts.
func FuzzExportJazz(f *testing.F) {
	for _, name := range []string{"message-tool-use", "content-report", "content-tool", "legacy-ansi", "legacy-structured-under-v2", "batch-invalid-entry.bad"} {
		b, err := os.ReadFile("testdata/jazz/" + name + ".jsonl")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := history.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		mapped, err := export.Write(&out, c, "jazz", nil)
		if err != nil {
			t.Fatalf("export: %v", err)
		}
		back, err := history.Read(&out)
		if err != nil {
			t.Fatalf("exported log does not read: %v\n%s", err, out.Bytes())
		}
		if len(back.Problems) != 0 || len(back.Header.Missing) > 0 && c.Header.ConversationID != "" {
			t.Fatalf("exported log: problems %v missing %v\n%s", back.Problems, back.Header.Missing, out.Bytes())
		}
		if back.Document.Len() < c.Document.Len() || (len(mapped) == 0 && back.Document.Len() != c.Document.Len()) {
			t.Fatalf("entries %d → %d (mapped %v)", c.Document.Len(), back.Document.Len(), mapped)
		}
		if len(back.Messages) != len(c.Messages) {
			t.Fatalf("messages %d → %d", len(c.Messages), len(back.Messages))
		}
	})
}
