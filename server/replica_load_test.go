package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/store/pgstore"
	"github.com/foliodev/folio/store/pgstore/pgtest"
)

// TestReplicaLoadRun is the replicas' load measurement, not part of the
// suite: with FOLIO_LOAD_SECONDS set it imports a generated conversation
// (FOLIO_LOAD_MESSAGES, default 30,000) into PostgreSQL, starts three
// replica processes (followers on the default 250 ms tick, poked by the
// mirror), spreads FOLIO_LOAD_CLIENTS (default 200) WebSocket clients over
// them, and has them page at random while this process, as the owner,
// appends one entry every 50 ms through the conversation's lease. It
// reports errors, entries any client missed or got twice, how long the
// appends took to commit, the latency from the start of an append (its
// commit included) to a client's receiving it (p50, p99), and each
// replica's peak RSS.
//
//	eval "$(.ci/pg-start --export)"
//	FOLIO_LOAD_SECONDS=60 go test -run ReplicaLoadRun -v -timeout 30m ./server
func TestReplicaLoadRun(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("FOLIO_LOAD_SECONDS"))
	if secs <= 0 {
		t.Skip("set FOLIO_LOAD_SECONDS (and FOLIO_TEST_DATABASE_URL) to run the replicas' load measurement")
	}
	clients, messages := 200, 30000
	if n, _ := strconv.Atoi(os.Getenv("FOLIO_LOAD_CLIENTS")); n > 0 {
		clients = n
	}
	if n, _ := strconv.Atoi(os.Getenv("FOLIO_LOAD_MESSAGES")); n > 0 {
		messages = n
	}
	url := pgtest.URL(t)
	st, err := pgstore.Open(context.Background(), url)
	must(t, err)
	defer st.Close()
	var buf bytes.Buffer
	_, err = gen.Write(&buf, gen.Options{Messages: messages, Seed: 1, ConversationID: "big"})
	must(t, err)
	_, err = history.Import(st, "big", buf.Bytes(), nil)
	must(t, err)
	var ids []string
	for e := range gen.Entries(gen.Options{Messages: messages, Seed: 1}) {
		ids = append(ids, e.ID)
	}

	var reps []*replicaProcess
	for range 3 {
		reps = append(reps, startReplicaProcess(t, url, "FOLIO_TEST_REPLICA_FOLLOW=250ms"))
	}

	// Each client counts the appended entries it receives, by ID.
	type seen struct {
		mu  sync.Mutex
		got map[string]int
	}
	var sent sync.Map // entry ID → time.Time the append started
	var latMu sync.Mutex
	var lat []time.Duration
	seens := make([]*seen, clients)
	var ctx context.Context
	start := make(chan struct{})
	var pages, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	opened := make(chan struct{}, 2*clients)
	for i := range clients {
		sn := &seen{got: map[string]int{}}
		seens[i] = sn
		r := reps[i%len(reps)]
		ws := "ws" + strings.TrimPrefix(r.url, "http") + "/api/v2/ws"
		wg.Add(1)
		go func() {
			defer wg.Done()
			onEvent := func(b []byte) {
				var f struct {
					Op    string `json:"op"`
					Entry struct {
						ID string `json:"id"`
					} `json:"entry"`
				}
				if json.Unmarshal(b, &f, json.RejectUnknownMembers(false)) != nil || !strings.HasPrefix(f.Entry.ID, "load-") {
					return
				}
				at := time.Now()
				sn.mu.Lock()
				sn.got[f.Entry.ID]++
				sn.mu.Unlock()
				if t0, ok := sent.Load(f.Entry.ID); ok {
					latMu.Lock()
					lat = append(lat, at.Sub(t0.(time.Time)))
					latMu.Unlock()
				}
			}
			err := loadClient(&ctx, start, ws, ids, uint64(i), opened, &pages, onEvent)
			if err != nil {
				opened <- struct{}{}
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
		}()
	}
	t0 := time.Now()
	for range clients {
		<-opened
	}
	t.Logf("%d clients on 3 replicas opened the conversation in %v", clients, time.Since(t0).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	close(start)

	// The owner: appends through the lease until 3 s before the end, so
	// every append has time to reach every client.
	m, err := st.OpenMedium("big")
	must(t, err)
	defer m.Close()
	_, err = m.Read()
	must(t, err)
	stopAt := time.Now().Add(time.Duration(secs)*time.Second - 3*time.Second)
	n := 0
	var commits []time.Duration
	for time.Now().Before(stopAt) {
		n++
		id := fmt.Sprint("load-", n)
		rec := appendRecord(t, userEntry(id, strings.Repeat("streamed text ", 20)))
		began := time.Now()
		sent.Store(id, began)
		must(t, m.Append([]byte(rec+"\n")))
		commits = append(commits, time.Since(began))
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()

	missing, twice := 0, 0
	for _, sn := range seens {
		for i := 1; i <= n; i++ {
			switch sn.got[fmt.Sprint("load-", i)] {
			case 0:
				missing++
			case 1:
			default:
				twice++
			}
		}
	}
	slices.Sort(lat)
	slices.Sort(commits)
	pct := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[min(len(d)-1, int(p*float64(len(d))))].Round(time.Millisecond)
	}
	var rss []string
	for _, r := range reps {
		rss = append(rss, r.report(t))
	}
	t.Logf("%d clients, %ds: %d pages, %d appends (commit p50 %v p99 %v), %d deliveries; missed %d, doubled %d, client errors %d; "+
		"append start to client on another replica p50 %v p99 %v; replicas: %s",
		clients, secs, pages.Load(), n, pct(commits, 0.5), pct(commits, 0.99), len(lat), missing, twice, errs.Load(),
		pct(lat, 0.50), pct(lat, 0.99), strings.Join(rss, ", "))
	if errs.Load() != 0 {
		t.Errorf("client errors, first: %v", firstErr.Load())
	}
	if missing != 0 || twice != 0 {
		t.Errorf("%d live entries missed and %d received twice", missing, twice)
	}
}
