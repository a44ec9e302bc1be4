package history_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
)

// Whatever kind and name a caller gives, the data folder's PutBlob either
// refuses them (ErrBlobName) or writes inside the data folder's
// attachments/ or artifacts/ folder, and reads the same bytes back.
func FuzzBlobNames(f *testing.F) {
	for _, s := range []string{"a-1", "../x", "a/../../b", ".", "..", "a\x00b", strings.Repeat("0", 32), "0123456789abcdef0123456789ABCDEF", "a-" + strings.Repeat("z", 200), "C:\\x", "%2e%2e"} {
		f.Add("attachment", s)
		f.Add("artifact", s)
	}
	f.Fuzz(func(t *testing.T, kind, name string) {
		dir := t.TempDir()
		l, err := history.Open(filepath.Join(dir, "conversations", "c.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.SetTitle("t"); err != nil {
			t.Fatal(err)
		}
		l.Close()
		fs0 := history.Files{Dir: dir}
		b, err := fs0.PutBlob("c", history.Blob{Kind: history.BlobKind(kind), Name: name, Meta: []byte("{}")}, []byte("data"))
		if errors.Is(err, history.ErrBlobName) {
			if _, _, gerr := fs0.GetBlob("c", history.BlobKind(kind), name); !errors.Is(gerr, history.ErrBlobName) {
				t.Fatalf("get of a refused name: %v", gerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("put %q %q: %v", kind, name, err)
		}
		var found []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				found = append(found, rel)
			}
			return nil
		})
		for _, rel := range found {
			if !strings.HasPrefix(rel, "conversations"+string(filepath.Separator)) &&
				!strings.HasPrefix(rel, filepath.Join("attachments", "c")+string(filepath.Separator)) &&
				!strings.HasPrefix(rel, "artifacts"+string(filepath.Separator)) {
				t.Fatalf("put %q %q wrote %s", kind, name, rel)
			}
		}
		_, data, err := fs0.GetBlob("c", b.Kind, b.Name)
		if err != nil || string(data) != "data" {
			t.Fatalf("read back %q %q: %q %v", kind, name, data, err)
		}
		if err := fs0.DeleteBlob("c", b.Kind, b.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "attachments", "c", name)); err == nil {
			t.Fatalf("%q survived its delete", name)
		}
	})
}
