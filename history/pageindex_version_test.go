package history

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// TestVersion3IndexIsRebuiltOnce: a page index as folio wrote it before
// the index stopped recording page bytes (version 3: testdata/index-v3
// holds a branched log with problems and the index its writer left
// beside it) is not a page index to this folio. The first open rebuilds
// it, once, saying why at debug level, and writes the current version,
// which describes every branch's document as a full read does; the next
// open uses it as it is.
func TestVersion3IndexIsRebuiltOnce(t *testing.T) {
	testOldIndexIsRebuiltOnce(t, "testdata/index-v3/c1.jsonl.index", 3)
}

// TestVersion4IndexIsRebuiltOnce: the same for an index from before the ID
// table grew in segments (version 4, one table frame named by the state;
// testdata/index-v4 is the same log's index as version 4 wrote it).
func TestVersion4IndexIsRebuiltOnce(t *testing.T) {
	testOldIndexIsRebuiltOnce(t, "testdata/index-v4/c1.jsonl.index", 4)
}

func testOldIndexIsRebuiltOnce(t *testing.T, fixture string, version byte) {
	path := logPath(t)
	writeLog(t, path, readFile(t, "testdata/index-v3/c1.jsonl"))
	old := readFile(t, fixture)
	if !bytes.HasPrefix(old, []byte{'F', 'O', 'L', 'I', 'O', 'I', 'X', version}) {
		t.Fatalf("the fixture starts %q, not a version %d index", old[:8], version)
	}
	if err := os.WriteFile(IndexPath(path), old, 0o600); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)

	before := indexRebuilds.Load()
	ix := checkIndex(t, path)
	if n := indexRebuilds.Load() - before; n != 1 {
		t.Fatalf("%d rebuilds of a version %d index; want 1", n, version)
	}
	if !strings.Contains(logged.String(), "rebuilding a page index") || !strings.Contains(logged.String(), "not a page index") {
		t.Fatalf("the rebuild was not logged:\n%s", logged.String())
	}
	if len(ix.st.branches) < 2 || ix.st.problems == 0 {
		t.Fatalf("the fixture has %d branches and %d problems", len(ix.st.branches), ix.st.problems)
	}
	if b := readFile(t, IndexPath(path)); !bytes.HasPrefix(b, []byte("FOLIOIX\x05")) {
		t.Fatalf("the rebuilt index starts %q", b[:8])
	}
	checkIndex(t, path)
	if n := indexRebuilds.Load() - before; n != 1 {
		t.Fatalf("the next open rebuilt again (%d rebuilds)", n)
	}
}
