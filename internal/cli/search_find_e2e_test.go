package cli

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	_ "modernc.org/sqlite" // to move a prebuilt search index with its copied log

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/search"
	"github.com/foliodev/folio/transcript"
)

// bigSearchHome is a data folder holding a generated 300,000-message
// conversation, its page index and a search index over it, and the
// conversation's ID. With FOLIO_BIG_SEARCH_HOME naming such a folder (made
// once: folio gen --messages 300000 --seed 2 --out DIR/conversations/ID.jsonl,
// then folio log reindex --data DIR) it is copied from there and the
// index's row is pointed at the copy; otherwise the conversation is
// generated and indexed here, which takes a minute on a busy machine.
func bigSearchHome(t *testing.T) (home, id string) {
	t.Helper()
	if testing.Short() {
		t.Skip("uses a 300,000-message log")
	}
	src := os.Getenv("FOLIO_BIG_SEARCH_HOME")
	if src == "" {
		home, id, _ = bigConversation(t)
		ix, err := search.Open(home)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if _, err := ix.CatchUp(context.Background()); err != nil {
			t.Fatal(err)
		}
		return home, id
	}
	home = filepath.Join(t.TempDir(), "home")
	logs, err := filepath.Glob(filepath.Join(src, "conversations", "*.jsonl"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("FOLIO_BIG_SEARCH_HOME=%s: want one log in its conversations folder, found %v (%v)", src, logs, err)
	}
	id = strings.TrimSuffix(filepath.Base(logs[0]), ".jsonl")
	for _, f := range []string{"conversations/" + id + ".jsonl", "conversations/" + id + ".jsonl.index", "search/index.db"} {
		copyFile(t, filepath.Join(src, f), filepath.Join(home, f))
	}
	path, err := history.Path(home, id)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", search.Path(home))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Exec(`UPDATE convs SET path = ?, inode = ? WHERE id = ?`, path, int64(history.Inode(fi)), id)
	if n, _ := r.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("pointing the index at the copy: %v (%d rows)", err, n)
	}
	return home, id
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// placedHit is a hit and its entry's position in the conversation.
type placedHit struct {
	entry string
	pos   int
}

// indexHits are query's hits in conversation id as the index answers
// them: ranked as /search lists them, and as find steps through them
// (newest first, by position).
func indexHits(t *testing.T, home, id, query string) (ranked, newest []placedHit) {
	t.Helper()
	path, err := history.Path(home, id)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	pos, done, err := positions(path)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	place := func(hs []search.Hit) []placedHit {
		var out []placedHit
		for _, h := range hs {
			p, err := pos(h.Entry)
			if err != nil || p < 0 {
				t.Fatalf("hit %s: position %d, %v", h.Entry, p, err)
			}
			out = append(out, placedHit{h.Entry, p})
		}
		return out
	}
	hs, err := ix.Search(context.Background(), query, search.Options{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	ranked = place(hs)
	newest = slices.Clone(ranked)
	slices.SortFunc(newest, func(a, b placedHit) int { return cmp.Compare(b.pos, a.pos) })
	return ranked, newest
}

// nearHit is text the window shows when it is at the hit: the first words
// of the next paragraph after the line with word in the hit's answer, or
// "" when there is none.
func nearHit(t *testing.T, home, id string, h placedHit, word string) string {
	t.Helper()
	path, _ := history.Path(home, id)
	es, _, err := history.HeadEntries(path, h.pos, h.pos+1)
	if err != nil || len(es) != 1 || es[0].ID != h.entry {
		t.Fatalf("entry %s at %d: %v", h.entry, h.pos, err)
	}
	a, ok := es[0].Content.(transcript.Agent)
	if !ok {
		return ""
	}
	lines := strings.Split(a.Markdown, "\n")
	for i, l := range lines {
		if !strings.Contains(l, word) {
			continue
		}
		for _, n := range lines[i+1:] {
			f := strings.Fields(n)
			if len(f) >= 4 && unicode.IsUpper([]rune(n)[0]) && !strings.ContainsAny(strings.Join(f[:3], " "), "*`_$[") {
				return strings.Join(f[:3], " ")
			}
		}
		return ""
	}
	return ""
}

// marked matches word shown reversed in a pane captured with its escapes.
func marked(word string) *regexp.Regexp {
	return regexp.MustCompile(`\x1b\[[0-9;]*7m(\x1b\[[0-9;]*m)*` + regexp.QuoteMeta(word))
}

// A generated 300,000-message conversation, searched in tmux: /search
// lists its hits and enter opens it at the deepest one, the window at the
// hit and its word marked; ctrl+f finds the same hits inside it and steps
// through them newest to oldest and back, each time with the window at the
// hit, marked; a malformed query and one with no hits say so.
func TestChatFindInABigConversationInTmux(t *testing.T) {
	home, id := bigSearchHome(t)
	const word = "537"
	ranked, newest := indexHits(t, home, id, word)
	if len(newest) < 5 || newest[len(newest)-1].pos > 100000 {
		t.Fatalf("the generated conversation has too few hits of %s, or none deep: %v", word, newest)
	}
	deepest := slices.IndexFunc(ranked, func(h placedHit) bool { return h.pos == newest[len(newest)-1].pos })
	x, _ := startChatInTmuxAt(t, home, "--resume", id)
	x.waitFor("ready")
	checked := 0
	at := func(h placedHit, what string, want ...string) {
		t.Helper()
		if near := nearHit(t, home, id, h, word); near != "" {
			want = append(want, near)
			checked++
		}
		x.waitFor(want...)
		x.waitPane(what+": the word marked", paneWait, func(string) bool {
			return marked(word).MatchString(x.run("capture-pane", "-p", "-e", "-t", "chat"))
		})
	}

	x.keys("", "C-k")
	x.waitFor("/search")
	x.keys(word, "Enter")
	x.waitFor("Search: " + word)
	for range deepest {
		x.keys("", "Down")
	}
	x.keys("", "Enter")
	at(newest[len(newest)-1], "the deepest search hit", "search hit:")

	x.keys("", "C-f")
	x.waitFor("find ›")
	x.keys(word, "Enter")
	n := len(newest)
	at(newest[0], "the newest hit", fmt.Sprintf("hit 1 of %d", n))
	for i := 1; i < n; i++ {
		x.keys("", "C-n")
		at(newest[i], fmt.Sprintf("hit %d", i+1), fmt.Sprintf("hit %d of %d", i+1, n))
	}
	x.waitFor(fmt.Sprintf("hit %d of %d (oldest)", n, n))
	x.keys("", "C-p")
	at(newest[n-2], "back one", fmt.Sprintf("hit %d of %d", n-1, n))
	if checked < 3 {
		t.Errorf("only %d hits had text after them to check the window by", checked)
	}

	x.keys("", "C-u")
	x.keys(`"open`, "Enter")
	x.waitFor("quote is not closed")
	x.keys("", "C-u")
	x.keys("nosuchwordanywhere", "Enter")
	x.waitFor("no matches")
	x.keys("", "Escape")
	x.waitPane("the find line to close", paneWait, func(p string) bool { return !strings.Contains(p, "find ›") })
}
