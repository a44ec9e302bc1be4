package history

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FOLIO_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	check := func(flag, want string) {
		t.Helper()
		got, err := DataDir(flag)
		if err != nil || got != want {
			t.Fatalf("DataDir(%q) = %q, %v; want %q", flag, got, err, want)
		}
	}
	check("", filepath.Join(home, ".local", "share", "folio"))
	t.Setenv("XDG_DATA_HOME", "/xdg")
	check("", "/xdg/folio")
	t.Setenv("FOLIO_HOME", "/folio-home")
	check("", "/folio-home")
	check("/flag", "/flag")
}

func TestPathRejectsUnsafeIDs(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"", "../x", "a/b", ".hidden", "a\\b"} {
		if _, err := Path("/d", id); err == nil {
			t.Errorf("Path accepted %q", id)
		}
	}
	if p, err := Path("/d", "c1"); err != nil || p != "/d/conversations/c1.jsonl" {
		t.Errorf("Path = %q, %v", p, err)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	for _, id := range []string{"a", "b"} {
		p, _ := Path(data, id)
		l := open(t, p)
		if err := l.Save(doc(t, entries(len(id)+1, id)...), msgs("x")); err != nil {
			t.Fatal(err)
		}
		if id == "b" {
			if err := l.SetTitle("Bee"); err != nil {
				t.Fatal(err)
			}
		}
		l.Close()
	}
	newer, _ := Path(data, "new")
	writeLog(t, newer, []byte(`{"type":"conversation","version":9}`+"\n"))
	os.WriteFile(filepath.Join(ConversationsDir(data), "notes.txt"), []byte("x"), 0o600)
	got, err := List(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("listed %+v", got)
	}
	byID := map[string]Summary{}
	for _, s := range got {
		byID[s.ID] = s
	}
	if s := byID["b"]; s.Title != "Bee" || s.Entries != 2 || s.Messages != 1 || s.Version != 3 {
		t.Errorf("b: %+v", s)
	}
	if s := byID["new"]; !errors.Is(s.Err, ErrNewerVersion) {
		t.Errorf("new: %+v", s)
	}
	if empty, err := List(filepath.Join(data, "nothing")); err != nil || len(empty) != 0 {
		t.Errorf("missing folder: %v %v", empty, err)
	}
}

// Locate and Logs agree on every log of a data folder: a flat log wins over
// a Jazz-layout log of the same ID, then the first agent by name; hidden
// and linked agent folders, and linked logs, name nothing.
func TestLocateAndLogsAgree(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	conv := ConversationsDir(data)
	outside := t.TempDir()
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		writeLog(t, p, []byte(`{"type":"conversation","version":3,"conversationId":"x","startedAt":"2026-10-01T10:00:00.000Z"}`+"\n"))
	}
	write(filepath.Join(conv, "both.jsonl"))
	write(filepath.Join(conv, "b-agent", "both.jsonl"))
	write(filepath.Join(conv, "b-agent", "twice.jsonl"))
	write(filepath.Join(conv, "a-agent", "twice.jsonl"))
	write(filepath.Join(conv, "a-agent", "jazz.jsonl"))
	write(filepath.Join(conv, ".hidden", "hid.jsonl"))
	write(filepath.Join(outside, "secret.jsonl"))
	if err := os.Symlink(outside, filepath.Join(conv, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.jsonl"), filepath.Join(conv, "a-agent", "linked.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(conv, "dir.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"both":  filepath.Join(conv, "both.jsonl"),
		"twice": filepath.Join(conv, "a-agent", "twice.jsonl"),
		"jazz":  filepath.Join(conv, "a-agent", "jazz.jsonl"),
	}
	logs, err := Logs(data)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range logs {
		if _, dup := got[l.ID]; dup {
			t.Errorf("Logs names %s twice", l.ID)
		}
		got[l.ID] = l.Path
	}
	if len(got) != len(want) {
		t.Errorf("Logs = %v; want %v", got, want)
	}
	for id, p := range want {
		if got[id] != p {
			t.Errorf("Logs: %s at %q; want %q", id, got[id], p)
		}
		if l, err := Locate(data, id); err != nil || l != p {
			t.Errorf("Locate(%s) = %q, %v; want %q", id, l, err, p)
		}
	}
	list, err := List(data)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{} // the ID a listed log is opened by → its path
	for _, s := range list {
		id := strings.TrimSuffix(filepath.Base(s.Path), ".jsonl")
		if _, dup := listed[id]; dup {
			t.Errorf("List names %s twice", id)
		}
		listed[id] = s.Path
	}
	if len(list) != len(want) {
		t.Errorf("List gives %d logs; want the %d an ID reaches", len(list), len(want))
	}
	for id, p := range want {
		if listed[id] != p {
			t.Errorf("List: %s at %q; want %q, the log Locate opens", id, listed[id], p)
		}
	}
	for _, id := range []string{"secret", "linked", "hid", "dir"} {
		flat, _ := Path(data, id)
		if l, err := Locate(data, id); err != nil || l != flat {
			t.Errorf("Locate(%s) = %q, %v; want the new flat path %q", id, l, err, flat)
		}
	}
	for _, id := range []string{"../x", "a/b", "evil/secret", ".hidden"} {
		if l, err := Locate(data, id); err == nil {
			t.Errorf("Locate(%q) = %q; want an error", id, l)
		}
	}
}
