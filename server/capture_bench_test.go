package server

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// BenchmarkOpen measures what opening a conversation costs the server: the
// first capture of a conversation it has not read yet (a fresh live state,
// as after a restart) and the first 256 KiB page at "latest". Before every
// open the log and its page index are dropped from the page cache
// (fsync, then posix_fadvise DONTNEED), so each open reads from disk.
// Compare the two sizes in one run:
//
//	go test -run '^$' -bench 'Open$' -benchtime 20x ./server
//
// The branched cases fork main 10 entries before its end and add 5
// entries on the branch, which becomes the head: the page comes from the
// branch's document, which shares main's runs up to the fork.
func BenchmarkOpen(b *testing.B) {
	for _, branched := range []bool{false, true} {
		for _, n := range []int{3000, 300000} {
			name := fmt.Sprintf("entries=%d", n)
			if branched {
				name += "/branched"
			}
			b.Run(name, func(b *testing.B) { benchmarkOpen(b, n, branched) })
		}
	}
}

func benchmarkOpen(b *testing.B, n int, branched bool) {
	ts := newTestServer(b, Options{})
	path := ts.writeGen(b, "c", n, 1)
	if branched {
		n -= 5 // 10 of main's entries are not on the branch, 5 of its own are
		forkNearTheEnd(b, path)
	}
	// The writer keeps the index; here it is built once up front.
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := history.OpenIndex(path, f, 0)
	if err != nil {
		b.Fatal(err)
	}
	ix.Close()
	f.Close()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dropCache(b, path, history.IndexPath(path))
		c := newConversation(ts.Server, "c", path)
		b.StartTimer()
		cp, err := c.capture("", nil)
		if err != nil {
			b.Fatal(err)
		}
		p, err := cp.snap.Page(nil, pager.AnchorLatest, pager.Before, pager.DefaultBudget)
		if err != nil || len(p.Bytes) == 0 {
			b.Fatalf("first page: %v", err)
		}
		b.StopTimer()
		if cp.snap.Stats().Entries != n {
			b.Fatalf("captured %d entries", cp.snap.Stats().Entries)
		}
		cp.snap.Release()
		c.mu.Lock()
		if c.f != nil {
			c.f.Close()
		}
		c.mu.Unlock()
		b.StartTimer()
	}
}

// forkNearTheEnd forks main 10 entries before its end, makes the branch
// the head and adds 5 entries to it.
func forkNearTheEnd(b *testing.B, path string) {
	b.Helper()
	l, err := history.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	c, err := l.Load()
	if err != nil {
		b.Fatal(err)
	}
	k := c.Document.Len() - 10
	id, err := l.Fork(history.Main, c.Document.At(k-1).ID, 0, "")
	if err != nil {
		b.Fatal(err)
	}
	if c, err = l.SetHead(id); err != nil {
		b.Fatal(err)
	}
	d := c.Document
	for i := range 5 {
		if d, err = d.Append(transcript.Entry{ID: fmt.Sprintf("branch-%d", i), Content: transcript.Agent{Markdown: "on the branch"}, Timestamp: time.Now().UTC()}); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Save(d, nil); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenJazz is BenchmarkOpen for a log in Jazz's layout
// (conversations/<agentId>/<id>.jsonl), whose page index folio keeps in
// jazz-sidecars: "kept" opens with the index the first open left there;
// "rebuilt" removes it before every open, so each capture rebuilds it in a
// full pass, as every capture of a Jazz log did while folio kept no index
// for them. Compare in one run:
//
//	go test -run '^$' -bench 'OpenJazz$' -benchtime 5x ./server
func BenchmarkOpenJazz(b *testing.B) {
	for _, n := range []int{3000, 300000} {
		for _, kept := range []bool{true, false} {
			name := map[bool]string{true: "kept", false: "rebuilt"}[kept]
			b.Run(fmt.Sprintf("entries=%d/index=%s", n, name), func(b *testing.B) {
				ts := newTestServer(b, Options{})
				path := filepath.Join(ts.data, "conversations", "coder", "c.jsonl")
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					b.Fatal(err)
				}
				w, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := gen.Write(w, gen.Options{Messages: n, Seed: 1, ConversationID: "c"}); err != nil {
					b.Fatal(err)
				}
				w.Close()
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				ix, err := history.OpenIndex(path, f, 0)
				if err != nil {
					b.Fatal(err)
				}
				ix.Close()
				f.Close()
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					if kept {
						dropCache(b, path, history.IndexPath(path))
					} else {
						dropCache(b, path)
						if err := os.Remove(history.IndexPath(path)); err != nil {
							b.Fatal(err)
						}
					}
					c := newConversation(ts.Server, "c", path)
					b.StartTimer()
					cp, err := c.capture("", nil)
					if err != nil {
						b.Fatal(err)
					}
					p, err := cp.snap.Page(nil, pager.AnchorLatest, pager.Before, pager.DefaultBudget)
					if err != nil || len(p.Bytes) == 0 {
						b.Fatalf("first page: %v", err)
					}
					b.StopTimer()
					if cp.snap.Stats().Entries != n {
						b.Fatalf("captured %d entries", cp.snap.Stats().Entries)
					}
					cp.snap.Release()
					c.mu.Lock()
					if c.f != nil {
						c.f.Close()
					}
					c.mu.Unlock()
					b.StartTimer()
				}
			})
		}
	}
}

// dropCache evicts files from the page cache.
func dropCache(b *testing.B, paths ...string) {
	b.Helper()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkFirstAppendAfterOpen measures what the follower pays the first
// time the log grows after an open through the page index: resuming a
// history.Scanner from the index (light: the entries indexed since its ID
// table, checked against the table) and reading the appended record.
//
//	go test -run '^$' -bench FirstAppendAfterOpen -benchtime 5x ./server
func BenchmarkFirstAppendAfterOpen(b *testing.B) {
	for _, n := range []int{3000, 300000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			ts := newTestServer(b, Options{})
			path := ts.writeGen(b, "c", n, 1)
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			ix, err := history.OpenIndex(path, f, 0)
			if err != nil {
				b.Fatal(err)
			}
			ix.Close()
			f.Close()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				c := newConversation(ts.Server, "c", path)
				if err := c.firstOpen(); err != nil {
					b.Fatal(err)
				}
				w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(w, `{"type":"ui-append","at":"2026-03-01T00:00:00.000Z","entries":[{"id":"late-%d","content":{"kind":"user","text":"x"},"timestamp":"2026-03-01T00:00:05.000Z"}]}`+"\n", i)
				w.Close()
				b.StartTimer()
				c.mu.Lock()
				c.pollLocked()
				got := c.lastID
				if c.f != nil {
					c.f.Close()
				}
				c.mu.Unlock()
				if got != fmt.Sprintf("late-%d", i) {
					b.Fatalf("the follower's last entry is %q", got)
				}
			}
		})
	}
}

// BenchmarkFirstAnchoredPage measures the first page a tab asks for by an
// entry ID (scrolling back past the first page): the snapshot finds the
// entry through the index's ID table and reads the groups before it
// backwards from the entry's index frame, so an anchor in the middle costs
// what one near the end does.
//
//	go test -run '^$' -bench FirstAnchoredPage -benchtime 10x ./server
func BenchmarkFirstAnchoredPage(b *testing.B) {
	for _, n := range []int{3000, 300000} {
		for _, at := range []string{"middle", "near-end"} {
			benchmarkFirstAnchoredPage(b, n, at)
		}
	}
}

// benchmarkFirstAnchoredPage pages before an entry in the middle of the
// document, or 1,000 entries before its end (a few pages back).
func benchmarkFirstAnchoredPage(b *testing.B, n int, at string) {
	{
		b.Run(fmt.Sprintf("entries=%d/anchor=%s", n, at), func(b *testing.B) {
			ts := newTestServer(b, Options{})
			path := ts.writeGen(b, "c", n, 1)
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			ix, err := history.OpenIndex(path, f, 0)
			if err != nil {
				b.Fatal(err)
			}
			d, err := ix.Document(ix.Head())
			if err != nil {
				b.Fatal(err)
			}
			i := d.Len() / 2
			if at == "near-end" {
				i = d.Len() - 1000
			}
			refs, err := d.Refs(i, i+1)
			if err != nil {
				b.Fatal(err)
			}
			anchor := refs[0].ID
			ix.Close()
			f.Close()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				c := newConversation(ts.Server, "c", path)
				cp, err := c.capture("", nil)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				p, err := cp.snap.Page(nil, anchor, pager.Before, pager.DefaultBudget)
				if err != nil || len(p.Bytes) == 0 {
					b.Fatalf("page: %v", err)
				}
				b.StopTimer()
				cp.snap.Release()
				c.mu.Lock()
				if c.f != nil {
					c.f.Close()
				}
				c.mu.Unlock()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkBranchMeta measures the metadata of a branched 300,000-entry
// conversation (its branches and the selected head's alternatives) after
// the log changed, through its page index and by reading the log whole:
//
//	go test -run '^$' -bench BranchMeta -benchtime 3x ./server
func BenchmarkBranchMeta(b *testing.B) {
	ts := newTestServer(b, Options{})
	path := ts.writeGen(b, "c", 300000, 1)
	forkNearTheEnd(b, path)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			if bi, err := branchMetaIndexed(path, fi); err != nil || len(bi.alternatives) != 1 {
				b.Fatalf("%v %+v", err, bi)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			c, err := history.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			if alts := alternativesOf(c); len(alts) != 1 {
				b.Fatalf("%+v", alts)
			}
		}
	})
}
