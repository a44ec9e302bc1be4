package history

import (
	"errors"
	"os"
	"path/filepath"
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
