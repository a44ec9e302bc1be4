package history_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// CopyBlobs copies what the destination lacks, counts what it has, and
// leaves out (and names) an artifact over the cap, which a tool may write
// but no store keeps, without stopping.
func TestCopyBlobsLeavesOutTooLarge(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	small, big := strings.Repeat("1", 32), strings.Repeat("2", 32)
	tool := func(id, ref string) transcript.Entry {
		return transcript.Entry{ID: id, Timestamp: at, Content: transcript.Tool{
			Receipt: transcript.ToolReceipt{App: "shell", Summary: "ran", Status: transcript.ToolOK},
			Presentation: &transcript.Presentation{Schema: "folio.shell", Version: 1, Revision: 1,
				Artifact: &transcript.Artifact{Ref: ref, ContentType: "text/plain", CommittedBytes: 1, Revision: 1, Final: true, Available: true}},
		}}
	}
	var stores [2]history.Files
	for i := range stores {
		stores[i] = history.Files{Dir: t.TempDir()}
		l, err := history.Open(filepath.Join(stores[i].Dir, "conversations", "c.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.SaveEntries([]transcript.Entry{
			{ID: "u1", Timestamp: at, Content: transcript.User{Text: "go"}}, tool("t1", small), tool("t2", big),
		}, []message.Message{message.Text(message.User, "go")}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	from, to := stores[0], stores[1]
	if _, err := from.PutBlob("c", history.Blob{Kind: history.BlobArtifact, Name: small}, []byte("small")); err != nil {
		t.Fatal(err)
	}
	// Written as a tool writes it, past what PutBlob accepts.
	if err := os.WriteFile(filepath.Join(history.ArtifactDir(from.Dir), big), make([]byte, history.MaxArtifactBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := history.CopyBlobs(from, to, "c")
	if err != nil || res.Copied != 1 || res.Same != 0 || len(res.TooLarge) != 1 || res.TooLarge[0].Name != big {
		t.Fatalf("copy: %+v %v", res, err)
	}
	res, err = history.CopyBlobs(from, to, "c")
	if err != nil || res.Copied != 0 || res.Same != 1 || len(res.TooLarge) != 1 {
		t.Fatalf("copy again: %+v %v", res, err)
	}
	if _, data, err := to.GetBlob("c", history.BlobArtifact, small); err != nil || string(data) != "small" {
		t.Fatalf("copied artifact: %q %v", data, err)
	}
}
