package server

import (
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/auth/authtest"
	"github.com/foliodev/folio/server/pager"
)

// BenchmarkSharedFirstPage compares what a share link's viewer waits for
// with what the owner waits for, on a conversation of 300,000 messages:
// a WebSocket admitted (the owner by session cookie, the viewer by the
// link's token), hello, open, and the first page at "latest" (256 KiB). "warm": the conversation's live state and pages are in
// memory from the previous open; "cold": before each open (untimed) the
// connection is gone, the server dropped the conversation's live state
// and the log and its index are out of the page cache. The bound:
// link within 1.5× of owner, same temperature. Compare in one run:
//
//	go test -run '^$' -bench SharedFirstPage -benchtime 10x ./server
func BenchmarkSharedFirstPage(b *testing.B) {
	as := startAccounts(b, Options{}, nil)
	as.convIdle = 0
	id := "c-gen00001"
	path := as.writeGen(b, id, 300000, 1)
	buildIndex(b, path)
	alice := as.signIn(b, authtest.AliceSubject)
	if err := as.owners().SetOwner(id, authtest.AliceSubject); err != nil {
		b.Fatal(err)
	}
	token, _ := alice.share(b, id)
	dial := map[string]func() *client{
		"owner": func() *client { return as.dialAs(b, alice) },
		"link":  func() *client { return viewer{base: as.url, token: token}.dial(b, as) },
	}
	for _, temp := range []string{"warm", "cold"} {
		for _, who := range []string{"owner", "link"} {
			b.Run(temp+"/"+who, func(b *testing.B) {
				var keep *client
				if temp == "warm" { // another tab keeps the conversation live
					keep = dial[who]()
					keep.open(id)
				}
				for range b.N {
					b.StopTimer()
					if temp == "cold" {
						if as.lookupConv(id) != nil {
							b.Fatal("the conversation's live state outlived its last connection")
						}
						dropCache(b, path, history.IndexPath(path))
					}
					b.StartTimer()
					c := dial[who]()
					snap := c.open(id)
					f := c.page(snap.Token, id, "latest", "before", pager.DefaultBudget)
					b.StopTimer()
					if f.Type != "page" || len(f.Groups) < 1000 {
						b.Fatalf("first page: %.300s", f.raw)
					}
					c.ws.CloseNow()
					waitConnsAtMost(b, as.testServer, map[bool]int{true: 1, false: 0}[keep != nil])
					b.StartTimer()
				}
				if keep != nil {
					keep.ws.CloseNow()
					waitConnsAtMost(b, as.testServer, 0)
				}
			})
		}
	}
}

// waitConnsAtMost waits until the server holds at most n connections
// (a closed one finishes releasing on its own goroutine), and, with none,
// no live state of any conversation.
func waitConnsAtMost(b *testing.B, ts *testServer, n int) {
	b.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a measure
	for {
		ts.mu.Lock()
		held, convs := len(ts.conns), len(ts.convs)
		ts.mu.Unlock()
		if held <= n && (n > 0 || convs == 0) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d connections and %d conversations still held", held, convs)
		}
		time.Sleep(time.Millisecond)
	}
}
