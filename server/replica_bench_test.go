package server

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// BenchmarkReplicaRelayLatency measures how long after a tab on the owning
// replica gets a streamed delta (an append event) a tab on another replica
// gets the same one: two replicas on one database, real HTTP servers and
// WebSocket clients on loopback; each iteration is one demo "long" answer
// (200 tokens a second, as folio serve's demo) run by A's engine. It
// reports the p50 and p99 of those delays over every append of every
// iteration, and how many appends the other tab got of the owner's.
//
//	eval "$(.ci/pg-start --export)"
//	go test -run '^$' -bench ReplicaRelayLatency -benchtime 3x ./server
func BenchmarkReplicaRelayLatency(b *testing.B) {
	url := pgtest.URL(b)
	slow := func(_ *Options, to *TurnsOptions) { to.IdleAfter = time.Minute }
	a := newReplicaServer(b, url, 200, slow)
	o := newReplicaServer(b, url, 200, slow)
	id := createConversation(b, a.testServer)
	ca, cb := a.dial(b), o.dial(b)
	ca.open(id)
	cb.open(id)
	type key struct {
		entry  string
		offset int
	}
	var mu sync.Mutex
	atA, atB := map[key]time.Time{}, map[key]time.Time{}
	timed := func(m map[key]time.Time) func(frame) {
		return func(f frame) {
			if f.Type == "event" && f.Op == string(OpAppend) {
				now := time.Now()
				mu.Lock()
				m[key{f.EntryID, f.Offset}] = now
				mu.Unlock()
			}
		}
	}
	ta, tb := timed(atA), timed(atB)
	ca.tap.Store(&ta)
	cb.tap.Store(&tb)
	b.ResetTimer()
	for i := range b.N {
		k := "k" + itoa(i)
		if r := ca.send(id, k, "long"); r.State == transcript.CommandRejected {
			b.Fatalf("send: %+v", r)
		}
		ca.finished(k)
		cb.finished(k)
	}
	b.StopTimer()
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	var lat []time.Duration
	for k, t0 := range atA {
		if t1, ok := atB[k]; ok {
			lat = append(lat, t1.Sub(t0))
		}
	}
	if len(lat) == 0 {
		b.Fatal("no append reached the other replica's tab")
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.90), "p90-ms")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat))/float64(len(atA)), "appends-relayed")
	b.ReportMetric(0, "ns/op")
}

// createConversation creates a conversation through the HTTP API.
func createConversation(tb testing.TB, ts *testServer) string {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.url+"/api/v2/conversations", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var m wireMeta
	if err := json.UnmarshalRead(resp.Body, &m, json.RejectUnknownMembers(false)); err != nil || resp.StatusCode != http.StatusCreated {
		tb.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	return m.ID
}
