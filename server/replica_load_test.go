package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/store/pgstore"
	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// TestReplicaLoadRun is the replicas' load measurement, not part of the
// suite: with FOLIO_LOAD_SECONDS set it imports a generated conversation
// (FOLIO_LOAD_MESSAGES, default 30,000) into PostgreSQL, starts three
// replica processes (followers on the default 250 ms tick, poked by the
// mirror), spreads FOLIO_LOAD_CLIENTS (default 200) WebSocket clients over
// them, and has them page at random while replica A's engine, the owner,
// answers "long" (the demo model's long essay at 200 tokens a second) over
// and over, sent by one more connection to A. Each client keeps the
// document as the web app does, applying every append against the length
// it holds. It reports errors, appends that did not continue the text a
// client held (a lost live event), how many entries any client never got,
// the latency from the owner's tab (a client on A) holding a length of an
// answer's text to a client on B or C holding it (p50, p99), and each
// replica's peak RSS; every client's final document must be the
// database's. FOLIO_LOAD_DEBUG=1 also logs, per entry, the samples one
// client on B got over 300 ms late.
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
		reps = append(reps, startReplicaProcess(t, url, "FOLIO_TEST_REPLICA_FOLLOW=250ms", "FOLIO_TEST_REPLICA_RATE=200"))
	}

	clientsOn := make([]int, clients)
	seens := make([]*loadDoc, clients)
	var ctx context.Context
	start := make(chan struct{})
	var pages, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	opened := make(chan struct{}, 2*clients)
	for i := range clients {
		sn := newLoadDoc()
		seens[i] = sn
		clientsOn[i] = i % len(reps)
		r := reps[i%len(reps)]
		ws := "ws" + strings.TrimPrefix(r.url, "http") + "/api/v2/ws"
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := loadClient(&ctx, start, ws, ids, uint64(i), opened, &pages, sn.event)
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

	// The owner: A's engine answers one send after another until 10 s
	// before the end, so the last answer has time to reach every client.
	turns := driveTurns(t, reps[0], time.Now().Add(time.Duration(secs)*time.Second-10*time.Second))
	wg.Wait()

	// Every client's final document is the database's: what it opened (the
	// imported conversation) and, after it, exactly the entries appended
	// since, with the bytes the log holds, in the log's order.
	conv, err := history.ReadStore(st, "big")
	must(t, err)
	var want []string
	var wantIDs []string
	for _, e := range conv.Document.Entries()[len(ids):] {
		b, err := transcript.EncodeEntry(e)
		must(t, err)
		want = append(want, string(b))
		wantIDs = append(wantIDs, e.ID)
	}
	differ, missing, gaps, replaced := 0, 0, 0, 0
	var firstDiff, firstGap string
	for i, sn := range seens {
		got := sn.final()
		if !slices.Equal(got, want) {
			differ++
			if firstDiff == "" {
				firstDiff = fmt.Sprintf("client %d holds %d live entries, the database %d after the imported ones", i, len(got), len(want))
			}
		}
		for _, id := range wantIDs {
			if sn.got[id] == 0 {
				missing++
			}
		}
		gaps += sn.gaps
		replaced += sn.replaced
		if firstGap == "" {
			firstGap = sn.firstGap
		}
	}
	// Owner tab to other-replica tab: for each length of an answer's text
	// the first client on A (the owner's tab) came to hold, how long until
	// a client on B or C held at least as much.
	var lat []time.Duration
	ref := seens[0].index() // on A
	for i, sn := range seens {
		if clientsOn[i] == 0 {
			continue
		}
		ix := sn.index()
		for _, ss := range ref {
			for _, s := range ss {
				if at, ok := heldAt(ix, s); ok {
					lat = append(lat, at.Sub(s.at))
				}
			}
		}
	}
	if os.Getenv("FOLIO_LOAD_DEBUG") != "" {
		ix := seens[1].index()
		for e, ss := range ref {
			slow := 0
			for _, s := range ss {
				if at, ok := heldAt(ix, s); ok && at.Sub(s.at) > 300*time.Millisecond {
					if slow < 5 {
						t.Logf("slow: %s n=%d of %d: %v (A at %v)", e, s.n, ss[len(ss)-1].n, at.Sub(s.at), s.at.Sub(t0))
					}
					slow++
				}
			}
			t.Logf("%s: %d of %d samples over 300ms", e, slow, len(ss))
		}
	}
	slices.Sort(lat)
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
	t.Logf("%d clients, %ds: %d pages, %d turns streamed on A, %d entries appended; lost appends %d, entries missed %d, replaced %d, client errors %d; "+
		"final documents differing from the database's %d of %d; "+
		"owner tab to a tab on another replica, streamed text: %d samples, p50 %v p99 %v; replicas: %s",
		clients, secs, pages.Load(), turns, len(want), gaps, missing, replaced, errs.Load(),
		differ, clients, len(lat), pct(lat, 0.50), pct(lat, 0.99), strings.Join(rss, ", "))
	if turns == 0 {
		t.Error("no turn ran on A")
	}
	if differ != 0 {
		t.Errorf("%d clients' final documents differ from the database's; first: %s", differ, firstDiff)
	}
	if errs.Load() != 0 {
		t.Errorf("client errors, first: %v", firstErr.Load())
	}
	if missing != 0 || gaps != 0 {
		t.Errorf("%d entries never reached a client and %d appends did not continue what the client held (first: %s)", missing, gaps, firstGap)
	}
}

// driveTurns sends "long" to the conversation "big" on r, waits for each
// turn to end, and sends again until stopAt; it returns how many turns
// ran.
func driveTurns(t *testing.T, r *replicaProcess, stopAt time.Time) int {
	t.Helper()
	c := r.dial(t)
	c.open("big") // receipts are events of the conversation
	n := 0
	for time.Now().Before(stopAt) {
		n++
		k := fmt.Sprint("load-", n)
		if rc := c.send("big", k, "long"); rc.State == transcript.CommandRejected {
			t.Fatalf("send on A: %+v", rc)
		}
		c.finished(k)
	}
	return n
}

// loadDoc is one load client's document after the imported entries, kept
// as the web app keeps it: each entry placed after the one its event
// names, replaced by later events, its streaming text grown by appends
// that continue exactly the length held.
type loadDoc struct {
	mu       sync.Mutex
	got      map[string]int
	tail     []string // entry IDs after the imported ones, in order
	body     map[string]string
	n16      map[string]int // the text length held of each open entry
	samples  []loadSample   // each time a text length grew
	gaps     int            // appends against another length
	firstGap string
	replaced int
}

type loadSample struct {
	entry string
	n     int
	at    time.Time
}

func newLoadDoc() *loadDoc {
	return &loadDoc{got: map[string]int{}, body: map[string]string{}, n16: map[string]int{}}
}

func (d *loadDoc) event(b []byte) {
	at := time.Now()
	var f struct {
		Op      string         `json:"op"`
		After   string         `json:"after"`
		Entry   jsontext.Value `json:"entry"`
		EntryID string         `json:"entryId"`
		Offset  int            `json:"offset"`
		Text    string         `json:"text"`
	}
	if json.Unmarshal(b, &f, json.RejectUnknownMembers(false)) != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch f.Op {
	case "replaced":
		d.replaced++
	case "append":
		n, ok := d.n16[f.EntryID]
		if !ok || n != f.Offset {
			d.gaps++
			if d.firstGap == "" {
				d.firstGap = fmt.Sprintf("append to %s at %d, the client holds %d (known %v)", f.EntryID, f.Offset, n, ok)
			}
			return
		}
		d.n16[f.EntryID] = n + utf16Len(f.Text)
		d.samples = append(d.samples, loadSample{f.EntryID, n + utf16Len(f.Text), at})
	case "upsert", "settle":
		e, err := transcript.DecodeEntry(f.Entry)
		if err != nil {
			return
		}
		if _, ok := d.body[e.ID]; !ok {
			i := slices.Index(d.tail, f.After) + 1 // 0 after an imported entry
			d.tail = slices.Insert(d.tail, i, e.ID)
		}
		d.body[e.ID] = string(f.Entry)
		d.got[e.ID]++
		if k := e.Content.Kind(); k == transcript.KindAgent || k == transcript.KindReasoning {
			n := utf16Len(textOf(e))
			if n > d.n16[e.ID] {
				d.samples = append(d.samples, loadSample{e.ID, n, at})
			}
			d.n16[e.ID] = n
		}
	}
}

// final is the client's document after the imported entries, as the
// entries' bytes.
func (d *loadDoc) final() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, id := range d.tail {
		out = append(out, d.body[id])
	}
	return out
}

// index is the client's samples by entry, each entry's in the order the
// text grew.
func (d *loadDoc) index() map[string][]loadSample {
	out := map[string][]loadSample{}
	for _, s := range d.samples {
		out[s.entry] = append(out[s.entry], s)
	}
	return out
}

// heldAt is when the indexed client first held at least as much of s's
// entry's text as s.
func heldAt(ix map[string][]loadSample, s loadSample) (time.Time, bool) {
	ss := ix[s.entry]
	i := sort.Search(len(ss), func(i int) bool { return ss[i].n >= s.n })
	if i == len(ss) {
		return time.Time{}, false
	}
	return ss[i].at, true
}
