package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// A data folder's attachments and artifacts go into PostgreSQL with their
// log (folio log import), and come back out into another data folder
// (folio log export --to); running either again copies nothing, and an
// attachment changed since it was imported is refused by name.
func TestLogImportExportBlobs(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("FOLIO_DATABASE_URL", "")
	src := t.TempDir()
	id := "blobs-" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-")
	ref := strings.Repeat("5a", 16)
	l, err := history.Open(filepath.Join(src, "conversations", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tool := transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "ls", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "folio.shell", Version: 1, Revision: 1,
			Artifact: &transcript.Artifact{Ref: ref, ContentType: "text/plain", CommittedBytes: 9, Revision: 1, Final: true, Available: true}}}
	if err := l.SaveEntries([]transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "list"}, Timestamp: logT0},
		{ID: "t1", Content: tool, Timestamp: logT0},
	}, []message.Message{message.Text(message.User, "list")}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	files := history.Files{Dir: src}
	if _, err := files.PutBlob(id, history.Blob{Kind: history.BlobArtifact, Name: ref}, []byte("file1\nfile2")); err != nil {
		t.Fatal(err)
	}
	meta := []byte(`{"id":"a-0011","name":"notes.txt","contentType":"text/plain","size":5}`)
	if _, err := files.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-0011", Meta: meta}, []byte("hello")); err != nil {
		t.Fatal(err)
	}

	out, _, err := run(t, "log", "import", "--to", url, src)
	if err != nil || !strings.Contains(out, "attachments and artifacts: 2 copied, 0 already there") {
		t.Fatalf("first import: %q %v", out, err)
	}
	out, _, err = run(t, "log", "import", "--to", url, src)
	if err != nil || !strings.Contains(out, "attachments and artifacts: 0 copied, 2 already there") {
		t.Fatalf("second import: %q %v", out, err)
	}

	dst := t.TempDir()
	out, _, err = run(t, "log", "export", "--store", url, "--format", "log", "--to", dst, id)
	if err != nil || !strings.Contains(out, "log new; attachments and artifacts: 2 copied, 0 already there") {
		t.Fatalf("export --to: %q %v", out, err)
	}
	for _, rel := range []string{
		filepath.Join("conversations", id+".jsonl"),
		filepath.Join("artifacts", ref),
		filepath.Join("attachments", id, "a-0011"),
		filepath.Join("attachments", id, "a-0011.json"),
	} {
		want, err1 := os.ReadFile(filepath.Join(src, rel))
		got, err2 := os.ReadFile(filepath.Join(dst, rel))
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: exported %q (%v), imported %q (%v)", rel, got, err2, want, err1)
		}
	}
	out, _, err = run(t, "log", "export", "--store", url, "--format", "log", "--to", dst, id)
	if err != nil || !strings.Contains(out, "log already there; attachments and artifacts: 0 copied, 2 already there") {
		t.Fatalf("second export --to: %q %v", out, err)
	}

	// The source's attachment changed since: refused, named, nothing
	// overwritten.
	if err := os.WriteFile(filepath.Join(src, "attachments", id, "a-0011"), []byte("HELLO"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, "log", "import", "--to", url, src)
	if err == nil || !strings.Contains(errOut, "a-0011") || !strings.Contains(errOut, "other bytes") {
		t.Fatalf("import of a changed attachment: %v %q", err, errOut)
	}
	if _, _, err := run(t, "log", "export", "--format", "log", "--to", dst, id); err == nil {
		t.Fatal("export --to without a database: no error")
	}
}
