package search

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func user(id, text string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.User{Text: text}, Timestamp: t0}
}

func agent(id, md string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.Agent{Markdown: md}, Timestamp: t0}
}

func at(e transcript.Entry, t time.Time) transcript.Entry { e.Timestamp = t; return e }

func doc(t testing.TB, id string, es ...transcript.Entry) transcript.Document {
	t.Helper()
	d, err := transcript.NewDocument(id, es)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// convo is one conversation log being written in a test's data folder.
type convo struct {
	t   testing.TB
	id  string
	log *history.Log
	es  []transcript.Entry
}

func newData(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "data")
}

func openConvo(t testing.TB, data, id string) *convo {
	t.Helper()
	path, err := history.Path(data, id)
	if err != nil {
		t.Fatal(err)
	}
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &convo{t: t, id: id, log: l}
}

// save appends es and saves the whole document.
func (c *convo) save(es ...transcript.Entry) {
	c.t.Helper()
	c.es = append(c.es, es...)
	c.put(c.es...)
}

// put saves exactly es as the document (a snapshot when it is not an
// extension of what was saved).
func (c *convo) put(es ...transcript.Entry) {
	c.t.Helper()
	c.es = es
	if err := c.log.Save(doc(c.t, c.id, es...), nil); err != nil {
		c.t.Fatal(err)
	}
}

func openIndex(t testing.TB, data string) *Index {
	t.Helper()
	ix, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func find(t testing.TB, ix Searcher, q string) []Hit {
	t.Helper()
	// A generous bound: -race on a busy machine is slow.
	hits, err := ix.Search(context.Background(), q, Options{Limit: MaxLimit, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return hits
}

// entryIDs lists the hits as conversation/entry.
func entryIDs(hits []Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.Conversation+"/"+h.Entry)
	}
	return out
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
