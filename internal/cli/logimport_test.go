package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore/pgtest"
)

// folio log import copies logs into PostgreSQL byte for byte and again
// changes nothing; export and show read them back out as from the file.
func TestLogImportExportPostgres(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("FOLIO_DATABASE_URL", "")
	dir := t.TempDir()
	path := writeTestLog(t, dir)
	if err := os.WriteFile(history.CommandsPath(path), []byte(`{"id":"k1","state":"done","at":"2026-03-04T05:06:07.000Z"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "log", "import", "--to", url, dir)
	if err != nil || !strings.Contains(out, "1 new, 0 appended to, 0 already there") {
		t.Fatalf("first import: %q %v", out, err)
	}
	out, _, err = run(t, "log", "import", "--to", url, dir)
	if err != nil || !strings.Contains(out, "0 new, 0 appended to, 1 already there") {
		t.Fatalf("second import: %q %v", out, err)
	}
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle("The box, renamed"); err != nil {
		t.Fatal(err)
	}
	l.Close()
	out, _, err = run(t, "log", "import", "--to", url, path)
	if err != nil || !strings.Contains(out, "0 new, 1 appended to, 0 already there") {
		t.Fatalf("import of a grown log: %q %v", out, err)
	}

	want, _ := os.ReadFile(path)
	got, _, err := run(t, "log", "export", "--store", url, "--format", "log", "c1")
	if err != nil || got != string(want) {
		t.Fatalf("export --format log: %v\n%s\nwant\n%s", err, got, want)
	}
	fromFile, _, err := run(t, "log", "show", "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	fromStore, _, err := run(t, "log", "show", "--json", "--store", url, "c1")
	if err != nil || fromStore != fromFile {
		t.Fatalf("show --json from the store: %v\n%s\nfrom the file:\n%s", err, fromStore, fromFile)
	}
	md, _, err := run(t, "log", "export", "--store", url, "--format", "markdown", "c1")
	if err != nil || !strings.Contains(md, "A small **cat**.") {
		t.Fatalf("markdown export from the store: %v %q", err, md)
	}
	ls, _, err := run(t, "log", "ls", "--store", url)
	if err != nil || !strings.Contains(ls, "c1") || !strings.Contains(ls, "The box, renamed") {
		t.Fatalf("ls --store: %v\n%s", err, ls)
	}

	// The receipts came along.
	s, err := openStore(newLogImportCmd(IO{}), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sl, err := history.OpenStore(s, "c1")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := sl.LoadCommands()
	sl.Close()
	if err != nil || len(rs) != 1 || rs[0].ID != "k1" || rs[0].State != "done" {
		t.Fatalf("receipts %+v %v", rs, err)
	}

	// Another log under the same ID is refused, and the stored one kept.
	other := filepath.Join(t.TempDir(), "c1.jsonl")
	if err := os.WriteFile(other, []byte(`{"type":"conversation","version":3,"conversationId":"c1","startedAt":"2026-01-01T00:00:00.000Z"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, "log", "import", "--to", url, other)
	if err == nil || !strings.Contains(errOut, "different log") {
		t.Fatalf("a different log was not refused: %v %q", err, errOut)
	}
	if got, _, _ := run(t, "log", "export", "--store", url, "--format", "log", "c1"); got != string(want) {
		t.Fatal("a refused import changed the stored log")
	}
	if _, _, err := run(t, "log", "export", "--store", url, "--format", "log", "nope"); err == nil {
		t.Fatal("exporting a missing conversation succeeded")
	}
}

func TestLogImportNeedsADatabase(t *testing.T) {
	t.Setenv("FOLIO_DATABASE_URL", "")
	_, _, err := run(t, "log", "import", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "--to is required") {
		t.Fatalf("import without --to: %v", err)
	}
	_, _, err = run(t, "log", "import", "--to", "/some/folder", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Fatalf("import to a folder: %v", err)
	}
}

// A database that cannot be reached is named in the error, without its
// password.
func TestStoreUnreachableIsNamed(t *testing.T) {
	t.Setenv("FOLIO_DATABASE_URL", "")
	url := "postgres://folio:hunter2secret@127.0.0.1:1/folio?sslmode=disable&connect_timeout=5"
	_, _, err := run(t, "log", "ls", "--store", url)
	if err == nil {
		t.Fatal("listing an unreachable database succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "hunter2secret") || !strings.Contains(msg, "127.0.0.1:1") {
		t.Fatalf("error %q: want the address and no password", msg)
	}
	if got := redactURL("postgres://u:pw@h/db"); got != "postgres://u:…@h/db" {
		t.Fatalf("redactURL: %q", got)
	}
}

// folio serve --store serves the database's conversations: one imported
// with folio log import is listed and read over HTTP.
func TestServeWithStore(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("FOLIO_DATABASE_URL", "")
	dir := t.TempDir()
	writeTestLog(t, dir)
	if _, _, err := run(t, "log", "import", "--to", url, dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--no-token", "--data", t.TempDir(), "--store", url},
			strings.NewReader(""), pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var base string
	for sc.Scan() {
		if m := regexp.MustCompile(`^open (http://127\.0\.0\.1:\d+)/`).FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if base == "" {
		cancel()
		t.Fatalf("serve --store printed no address: %v", <-done)
	}
	resp, err := http.Get(base + "/api/v2/conversations")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id":"c1"`) || !strings.Contains(string(body), "The box") {
		t.Fatalf("listing: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(base + "/api/v2/conversations/c1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"title":"The box"`) {
		t.Fatalf("conversation: %d %s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
