package pgstore

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// BenchmarkBlobs stores and reads attachments of a few sizes in the
// database and, for comparison, in a data folder (each put is new bytes
// under a new name; each get reads one back whole).
func BenchmarkBlobs(b *testing.B) {
	s := newTestStore(b)
	dir := b.TempDir()
	stores := map[string]history.Store{"postgres": s, "files": history.Files{Dir: dir}}
	for _, name := range []string{"postgres", "files"} {
		st := stores[name]
		id := "bench-blobs"
		l, err := history.OpenStore(st, id)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.SaveEntries([]transcript.Entry{{ID: "u1", Content: transcript.User{Text: "x"}, Timestamp: time.Unix(1e9, 0).UTC()}}, nil); err != nil {
			b.Fatal(err)
		}
		l.Close()
		for _, size := range []int{64 << 10, 1 << 20, 16 << 20} {
			data := make([]byte, size)
			rand.Read(data)
			meta := []byte(`{}`)
			b.Run(fmt.Sprintf("%s/put/%dKiB", name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(size))
				for i := range b.N {
					data[0], data[1], data[2] = byte(i), byte(i>>8), byte(i>>16) // new bytes each time
					if _, err := st.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: fmt.Sprintf("p%d-%d", size, i), Meta: meta}, data); err != nil {
						b.Fatal(err)
					}
				}
			})
			ref := fmt.Sprintf("%032x", size)
			if _, err := st.PutBlob(id, history.Blob{Kind: history.BlobArtifact, Name: ref}, data); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/get/%dKiB", name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(size))
				for range b.N {
					_, got, err := st.GetBlob(id, history.BlobArtifact, ref)
					if err != nil || !bytes.Equal(got, data) {
						b.Fatalf("%d bytes, %v", len(got), err)
					}
				}
			})
		}
	}
}
