package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/search"
	"github.com/foliodev/folio/store/pgstore/pgtest"
)

func TestLogSearch(t *testing.T) {
	dir := t.TempDir()
	writeTestLog(t, dir)
	out, _, err := run(t, "log", "search", "--data", dir, "small", "cat")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"The box  answer", "A [small] **[cat]**.", "folio --resume c1   /c/c1?at=a1"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, "log", "search", "--data", dir, "--json", `"what is"`, "role:prompt")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Query string       `json:"query"`
		Hits  []search.Hit `json:"hits"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Hits) != 1 || got.Hits[0].Entry != "u1" || got.Hits[0].Conversation != "c1" || got.Hits[0].Title != "The box" {
		t.Fatalf("hits %+v", got.Hits)
	}
	out, _, err = run(t, "log", "search", "--data", dir, "zebra")
	if err != nil || !strings.Contains(out, "no conversation has zebra") {
		t.Fatalf("no hit: %q %v", out, err)
	}
	out, _, err = run(t, "log", "reindex", "--data", dir)
	if err != nil || !strings.Contains(out, "indexed 1 conversations, 2 entries") {
		t.Fatalf("reindex: %q %v", out, err)
	}
}

func TestLogSearchRefusesMalformedQueries(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{`"unclosed`}, "quote is not closed"},
		{[]string{"cat", "colour:red"}, `unknown filter "colour:"`},
		{[]string{"--", "-cat"}, "only excluded words"},
		{[]string{"cat", "--limit", "0"}, "--limit 0"},
		{nil, "want a QUERY"},
	} {
		_, _, err := run(t, append([]string{"log", "search", "--data", dir}, c.args...)...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "try: folio log search") {
			t.Errorf("%v: %v, want a usage error saying %q", c.args, err, c.want)
		}
	}
}

// TestLogSearchStore: with --store, log search and log reindex use the
// database's index of the logs it holds, not the data folder's.
func TestLogSearchStore(t *testing.T) {
	url := pgtest.URL(t)
	dir := t.TempDir()
	writeTestLog(t, dir)
	if _, _, err := run(t, "log", "import", "--to", url, dir); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	out, _, err := run(t, "log", "search", "--data", empty, "--store", url, "--json", "small", "cat")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Hits []search.Hit `json:"hits"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Hits) != 1 || got.Hits[0].Entry != "a1" || got.Hits[0].Conversation != "c1" || got.Hits[0].SnippetText("[", "]") != "A [small] **[cat]**." {
		t.Fatalf("hits %+v", got.Hits)
	}
	if _, err := os.Stat(search.Path(empty)); err == nil {
		t.Fatal("--store made an index in the data folder")
	}
	out, _, err = run(t, "log", "reindex", "--store", url)
	if err != nil || !strings.Contains(out, "indexed 1 conversations, 2 entries") {
		t.Fatalf("reindex: %q %v", out, err)
	}
}
