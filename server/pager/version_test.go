package pager

import (
	"bytes"
	"os"
	"testing"

	"github.com/foliodev/folio/history"
)

// TestVersion3IndexPagesAsAFullPass: a log whose page index beside it is
// still version 3 (the format that recorded page bytes, history's
// testdata/index-v3) pages, through the index its open rebuilds, exactly
// as a full pass over the log does, in the frame this package writes.
func TestVersion3IndexPagesAsAFullPass(t *testing.T) {
	p := dataLog(t, "c1.jsonl")
	for src, dst := range map[string]string{"c1.jsonl": p, "c1.jsonl.index": history.IndexPath(p)} {
		data, err := os.ReadFile("../../history/testdata/index-v3/" + src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	differential(t, p)
	if b, err := os.ReadFile(history.IndexPath(p)); err != nil || !bytes.HasPrefix(b, []byte("FOLIOIX\x05")) {
		t.Fatalf("the index was not rebuilt in version 5: %v", err)
	}
}
