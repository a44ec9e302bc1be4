package history

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/foliodev/folio/internal/gen"
)

// BenchmarkList lists a data folder holding one generated 300,000-entry log,
// in folio's layout and in Jazz's (conversations/<agentId>/<id>.jsonl, whose
// summary folio keeps in jazz-sidecars), each once with a summary that
// matches it and once without one (each iteration deletes it, so List reads
// the log whole and writes the summary again, as the first listing after
// another program wrote the log does, and as every listing of a Jazz log
// did while folio kept no summary for it).
//
//	go test -run '^$' -bench List -benchtime 5x ./history
func BenchmarkList(b *testing.B) {
	for _, layout := range []string{"flat", "jazz"} {
		b.Run("layout="+layout, func(b *testing.B) {
			data := b.TempDir()
			path, _ := Path(data, "big")
			if layout == "jazz" {
				path = filepath.Join(ConversationsDir(data), "coder", "big.jsonl")
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				b.Fatal(err)
			}
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := gen.Write(f, gen.Options{Messages: 300_000, Seed: 1}); err != nil {
				b.Fatal(err)
			}
			f.Close()
			list := func(b *testing.B) {
				got, err := List(data)
				if err != nil || len(got) != 1 || got[0].Entries != 300_000 || got[0].Err != nil {
					b.Fatalf("List = %+v, %v", got, err)
				}
			}
			b.Run("summary", func(b *testing.B) {
				list(b) // writes the summary
				if _, err := os.Stat(SummaryPath(path)); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					list(b)
				}
			})
			b.Run("no-summary", func(b *testing.B) {
				for b.Loop() {
					os.Remove(SummaryPath(path))
					list(b)
				}
			})
		})
	}
}
