package search

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
)

// genData writes n generated conversations of msgs entries each.
func genData(t testing.TB, n, msgs int) string {
	t.Helper()
	data := newData(t)
	dir := history.ConversationsDir(data)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("gen-%d.jsonl", i+1)), os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gen.Write(f, gen.Options{Messages: msgs, Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return data
}

// TestCrashWhileIndexing kills a process that is building the index at
// random points. Each time, the next open finds a sound index whose every
// row points at an entry its log's head holds, and catching up from there
// gives what a fresh build gives.
func TestCrashWhileIndexing(t *testing.T) {
	if data := os.Getenv("FOLIO_SEARCH_CRASH_CHILD"); data != "" {
		ix, err := Open(data)
		if err != nil {
			os.Exit(3)
		}
		fmt.Println("ready")
		// Index from scratch, again and again, so that a kill lands at
		// any point of a build.
		for {
			start := time.Now()
			if err := ix.clear(context.Background()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(4)
			}
			if _, err := ix.CatchUp(context.Background()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(5)
			}
			fmt.Fprintln(os.Stderr, "built in", time.Since(start))
		}
	}
	if testing.Short() {
		t.Skip("builds a corpus and kills processes")
	}
	convs, msgs, rounds := 6, 1500, 10
	if raceEnabled {
		convs, msgs, rounds = 3, 300, 4
	}
	data := genData(t, convs, msgs)
	want := fresh(t, data)
	rng := rand.New(rand.NewPCG(28, 28))
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWhileIndexing$")
		cmd.Env = append(os.Environ(), "FOLIO_SEARCH_CRASH_CHILD="+data)
		if testing.Verbose() {
			cmd.Stderr = os.Stderr
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make([]byte, 6)
		if _, err := io.ReadFull(out, ready); err != nil || string(ready) != "ready\n" {
			t.Fatalf("child: %q %v", ready, err)
		}
		// One build takes about half a second here: land anywhere in
		// the first two (the smaller race corpus takes as long).
		time.Sleep(time.Duration(rng.IntN(1200)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		consistent(t, data, round)
		ix := openIndex(t, data)
		for q, w := range want {
			if got := fmt.Sprint(entryIDs(find(t, ix, q))); got != w {
				t.Fatalf("round %d: %s after the crash: %s, fresh: %s", round, q, got, w)
			}
		}
		ix.Close()
	}
}

var crashQueries = []string{"the", "table", `"of the"`, "migr*", "fox -the"}

func fresh(t *testing.T, data string) map[string]string {
	t.Helper()
	ix := openIndex(t, data)
	out := map[string]string{}
	for _, q := range crashQueries {
		out[q] = fmt.Sprint(entryIDs(find(t, ix, q)))
	}
	ix.Close()
	if err := os.RemoveAll(filepath.Dir(Path(data))); err != nil {
		t.Fatal(err)
	}
	return out
}

// consistent checks the index as a killed process left it, before anyone
// catches up: SQLite's and FTS5's own checks pass, and every indexed entry
// is in its log's head document.
func consistent(t *testing.T, data string, round int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+Path(data))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("round %d: integrity_check %q %v", round, ok, err)
	}
	if _, err := db.Exec(`INSERT INTO fts(fts) VALUES('integrity-check')`); err != nil {
		t.Fatalf("round %d: fts integrity-check: %v", round, err)
	}
	rows, err := db.Query(`SELECT c.id, c.size, d.entry FROM docs d JOIN convs c ON c.n = d.conv WHERE d.entry != ''`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	heads := map[string]map[string]bool{}
	n := 0
	for rows.Next() {
		var id, entry string
		var size int64
		if err := rows.Scan(&id, &size, &entry); err != nil {
			t.Fatal(err)
		}
		ids, ok := heads[id]
		if !ok {
			path, _ := history.Locate(data, id)
			conv, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if size > fileSize(t, path) {
				t.Fatalf("round %d: %s indexed to %d, past its end", round, id, size)
			}
			ids = map[string]bool{}
			for _, e := range conv.Document.Entries() {
				ids[e.ID] = true
			}
			heads[id] = ids
		}
		if !ids[entry] {
			t.Fatalf("round %d: %s/%s is indexed but not in the log", round, id, entry)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("round %d: %d rows of %d conversations were consistent", round, n, len(heads))
}
