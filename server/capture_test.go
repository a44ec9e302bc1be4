package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// openFDs counts this process's open descriptors on files under dir whose
// names end in suffix (Linux: /proc/self/fd).
func openFDs(t testing.TB, dir, suffix string) int {
	t.Helper()
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	dir, _ = filepath.EvalSymlinks(dir)
	n := 0
	for _, de := range des {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", de.Name()))
		if err == nil && strings.HasPrefix(target, dir) && strings.HasSuffix(target, suffix) {
			n++
		}
	}
	return n
}

// snapshots counts the server's live snapshots: each holds either a
// temporary file in the snapshot folder or, copying nothing, its log's
// page index open.
func (ts *testServer) snapshots(t testing.TB) int {
	t.Helper()
	return countFiles(t, ts.SnapshotDir()) + openFDs(t, ts.data, ".index")
}

// A snapshot opened before a rewrite of its log (compaction of a folio
// log, upgrade of a version 2 one) keeps serving the same pages after the
// new file is renamed into place, and its token keeps working, since the
// rewrite changed no document: no "replaced" event, the follower carries
// on with the new file, and the token ends only when released.
func TestSnapshotOutlivesRewrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		write   func(t *testing.T, ts *testServer) string
		rewrite func(l *history.Log) error
	}{
		{"compact", func(t *testing.T, ts *testServer) string {
			p := ts.writeGen(t, "c", 300, 4)
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			// A provisional tail a later record supersedes: compaction drops it.
			_, err = f.WriteString(`{"type":"ui-open","at":"2026-03-01T00:00:00.000Z","entries":[{"id":"o-1","content":{"kind":"agent","markdown":"par"},"timestamp":"2026-03-01T00:00:05.000Z"}]}` + "\n" +
				appendRecord(t, userEntry("x-1", "after the tail")) + "\n")
			must(t, err)
			must(t, f.Close())
			return p
		}, func(l *history.Log) error {
			res, err := l.Compact()
			if err == nil && res.Dropped == 0 {
				err = fmt.Errorf("compaction dropped nothing")
			}
			return err
		}},
		{"upgrade", func(t *testing.T, ts *testServer) string {
			b, err := os.ReadFile("../history/export/testdata/jazz/legacy-types.jsonl")
			must(t, err)
			p := filepath.Join(ts.data, "conversations", "c.jsonl")
			must(t, os.WriteFile(p, b, 0o600))
			return p
		}, func(l *history.Log) error {
			res, err := l.Upgrade()
			if err == nil && !res.Upgraded {
				err = fmt.Errorf("nothing upgraded")
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, Options{})
			path := tc.write(t, ts)
			c := ts.dial(t)
			snap := c.open("c")
			before := c.page(snap.Token, "c", "latest", "before", 0)
			if before.Type != "page" {
				t.Fatalf("page: %s", before.raw)
			}
			old, err := os.Stat(path)
			must(t, err)
			l, err := history.Open(path)
			must(t, err)
			must(t, tc.rewrite(l))
			must(t, l.Close())
			if now, err := os.Stat(path); err != nil || os.SameFile(now, old) {
				t.Fatalf("the log was not replaced: %v", err)
			}
			// Something appended to the new file reaches the tab: the
			// follower has moved over to it.
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			_, err = f.WriteString(appendRecord(t, userEntry("after-rewrite", "new")) + "\n")
			must(t, err)
			must(t, f.Close())
			ev := c.event("upsert")
			if e, _ := transcript.DecodeEntry(ev.Entry); e.ID != "after-rewrite" || ev.Generation != snap.Generation {
				t.Fatalf("after the rewrite: %s; want after-rewrite in generation %d", ev.raw, snap.Generation)
			}
			for _, f := range c.held {
				if f.Type == "event" && f.Op == "replaced" {
					t.Fatalf("a rewrite that changed no document replaced it: %s", f.raw)
				}
			}
			after := c.page(snap.Token, "c", "latest", "before", 0)
			if after.Type != "page" || string(after.Groups) != string(before.Groups) {
				t.Fatalf("the snapshot's page after the rewrite:\n%.300s\nbefore:\n%.300s", after.raw, before.raw)
			}
			if f := c.call(map[string]any{"type": "release", "token": snap.Token}); f.Type != "released" {
				t.Fatalf("release: %s", f.raw)
			}
			if f := c.page(snap.Token, "c", "latest", "before", 0); f.Type != "error" {
				t.Fatalf("a released token still pages: %s", f.raw)
			}
		})
	}
}
