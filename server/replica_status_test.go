package server

import (
	"context"
	"io"

	"github.com/jackc/pgx/v5"
	"net/http"

	"github.com/go-json-experiment/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// pgCluster is a throwaway cluster of the test's own (.ci/pg-start), which
// it stops and starts again as an outage would, without disturbing the
// suites that share FOLIO_TEST_DATABASE_URL's cluster.
type pgCluster struct{ url, dir, bin, opts string }

func startCluster(t *testing.T) pgCluster {
	t.Helper()
	pgtest.BaseURL(t) // skipped, or failed where required, like every PostgreSQL suite
	cmd := exec.Command("../.ci/pg-start")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf(".ci/pg-start: %v\n%s", err, stderr.String())
	}
	_, dir, ok := strings.Cut(stderr.String(), "pg-start: cluster in ")
	if !ok {
		t.Fatalf(".ci/pg-start did not name its folder: %s", stderr.String())
	}
	dir = strings.TrimSpace(dir)
	t.Cleanup(func() { exec.Command("../.ci/pg-stop", dir).Run() })
	// postmaster.opts: the server's binary and the arguments it was
	// started with, each quoted.
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.opts"))
	if err != nil {
		t.Fatal(err)
	}
	bin, opts, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	return pgCluster{url: strings.TrimSpace(string(out)), dir: dir, bin: filepath.Dir(bin), opts: opts}
}

func (c pgCluster) ctl(t *testing.T, args ...string) {
	t.Helper()
	name := filepath.Join(c.bin, "pg_ctl")
	if os.Geteuid() == 0 { // pg_ctl refuses root; the cluster has its own user
		out, err := exec.Command("stat", "-c", "%U", c.dir).Output()
		if err != nil {
			t.Fatal(err)
		}
		args = append([]string{"-u", strings.TrimSpace(string(out)), "--", name}, args...)
		name = "runuser"
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_ctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// crash stops the cluster at once, as a crash would (every session ends
// without a goodbye); start brings it back with the same options.
func (c pgCluster) crash(t *testing.T) {
	c.ctl(t, "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
}

func (c pgCluster) start(t *testing.T) {
	c.ctl(t, "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "-o", c.opts, "start")
}

// awaitStatus waits on a tab for the status frame saying the store is in
// state st.
func awaitStatus(c *client, st string) {
	c.t.Helper()
	c.await(func(f frame) bool { return f.Type == "status" && f.Store == st })
}

// PostgreSQL crashes while a turn streams on replica A: tabs on A and B
// are told the store is unreachable, a send on either is refused with
// "store-unavailable", and once the database is back both tabs are told,
// A reopens the conversation under a new lease (its half-written answer
// recorded as interrupted), and a send on B runs. The log holds each user
// message once, every copy equals the database, and so does the document
// each tab holds by following live events.
func TestReplicaStoreOutage(t *testing.T) {
	cl := startCluster(t)
	url := cl.url
	a := newReplicaServer(t, url, 60)
	b := newReplicaServer(t, url, 400)
	id := a.create(t)
	ca, cb := a.dial(t), b.dial(t)
	tabs := map[string]*tabDoc{"A": followTab(t, ca, id), "B": followTab(t, cb, id)}
	if r := ca.send(id, "k1", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	// B's tab shows A's answer growing: some of it is in the database.
	open := cb.await(func(f frame) bool {
		if f.Type != "event" || f.Op != string(OpUpsert) || !f.Open {
			return false
		}
		e, err := transcript.DecodeEntry(f.Entry)
		return err == nil && e.Content.Kind() == transcript.KindAgent
	})
	cb.await(func(f frame) bool {
		return f.Type == "event" && f.Op == string(OpAppend) && f.EntryID == open.entry(t).ID && f.Text != ""
	})

	cl.crash(t)
	awaitStatus(ca, storeUnreachable)
	awaitStatus(cb, storeUnreachable)
	for name, tab := range map[string]*client{"A": ca, "B": cb} {
		r := tab.send(id, "k2"+name, "while down")
		if r.State != transcript.CommandRejected || r.Code != "store-unavailable" {
			t.Fatalf("send on %s while the database is down: %+v, want rejected store-unavailable", name, r)
		}
	}
	// Listing and creating conversations are refused as clearly.
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(method, b.url+"/api/v2/conversations", nil)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
			req.Body = io.NopCloser(strings.NewReader(`{}`))
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"store-unavailable"`) {
			t.Fatalf("%s /api/v2/conversations while the database is down: %d %s", method, resp.StatusCode, body)
		}
	}
	// A tab that connects meanwhile is told at once.
	late := b.dial(t)
	awaitStatus(late, storeUnreachable)

	cl.start(t)
	awaitStatus(ca, storeReachable)
	awaitStatus(cb, storeReachable)
	awaitStatus(late, storeReachable)

	if r := cb.send(id, "k3", "after"); r.State == transcript.CommandRejected {
		t.Fatalf("send on B after recovery: %+v", r)
	}
	if r := cb.finished("k3"); r.State != transcript.CommandDone {
		t.Fatalf("B's turn after recovery: %+v", r)
	}
	data := waitEqual(t, id, a, b)
	stored := storedEntries(t, a, id)
	if got := userTexts(stored); got != "long|after" {
		t.Fatalf("user entries %q; want long and after, once each:\n%s", got, data)
	}
	for name, tab := range tabs {
		tab.awaitDocument(t, name, stored)
	}
}

// storedEntries is the database's document of id, failing on a problem
// or an entry ID the log holds twice.
func storedEntries(t *testing.T, r *replicaServer, id string) []transcript.Entry {
	t.Helper()
	conv, err := history.ReadStore(r.store, id)
	if err != nil || len(conv.Problems) != 0 {
		t.Fatalf("the database's log: %v %+v", err, conv.Problems)
	}
	es := conv.Document.Entries()
	seen := map[string]bool{}
	for _, e := range es {
		if seen[e.ID] {
			t.Fatalf("entry %s twice", e.ID)
		}
		seen[e.ID] = true
	}
	return es
}

// A command ID sent again to another replica after the first one answered
// gets the recorded outcome and starts no second turn: while the first
// replica's engine still holds the conversation (the command is forwarded
// there and its engine answers from its receipts), and after it let go (the
// other replica's engine opens the log and reads the receipt from
// folio_commands). The same ID with another body is refused.
func TestReplicaReceiptsAcrossReplicas(t *testing.T) {
	url := pgtest.URL(t)
	a := newReplicaServer(t, url, 400)
	b := newReplicaServer(t, url, 400)
	c := newReplicaServer(t, url, 400)
	id := a.create(t)
	ca, cb, cc := a.dial(t), b.dial(t), c.dial(t)
	ca.open(id)
	cb.open(id)
	cc.open(id)
	if r := ca.send(id, "k1", "once"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	first := ca.finished("k1")
	if first.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", first)
	}
	waitEqual(t, id, a, b, c)

	// A's engine holds the lease: B forwards the repeat to it.
	if r := cb.send(id, "k1", "once"); r.State != transcript.CommandDone || r.EntryID != first.EntryID {
		t.Fatalf("k1 again on B while A holds the conversation: %+v, want A's outcome %+v", r, first)
	}
	// A lets go; C's engine opens the log and answers from the receipts
	// the database keeps.
	a.turns.forget(id)
	if r := cc.send(id, "k1", "once"); r.State != transcript.CommandDone || r.EntryID != first.EntryID {
		t.Fatalf("k1 again on C after A let go: %+v, want the recorded outcome %+v", r, first)
	}
	if r := cc.send(id, "k1", "another body"); r.State != transcript.CommandRejected || r.Code != "command-conflict" {
		t.Fatalf("k1 with another body on C: %+v, want command-conflict", r)
	}
	// A receipt request on a replica that never saw the command answers
	// from the database too.
	if r := b.receipt(t, id, "k1"); r.State != transcript.CommandDone {
		t.Fatalf("B's receipt of k1: %+v", r)
	}
	if got := userTexts(storedEntries(t, a, id)); got != "once" {
		t.Fatalf("user entries %q; want one", got)
	}
	waitEqual(t, id, a, b, c)
}

// receipt asks the replica's HTTP API for a command's receipt.
func (r *replicaServer) receipt(t *testing.T, id, cmd string) Receipt {
	t.Helper()
	resp, err := http.Get(r.url + "/api/v2/conversations/" + id + "/commands/" + cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rc Receipt
	if err := json.UnmarshalRead(resp.Body, &rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

// Every folio session is ended (pg_terminate_backend) while a turn streams
// on A: the listeners reconnect at once and catch up, A's engine, whose
// lease ended, is closed and its tabs read the log again, the tabs are
// told the store was unreachable and is back, and the next send runs. No
// record is lost or doubled, and each tab's document is the database's.
func TestReplicaSessionsTerminated(t *testing.T) {
	cl := startCluster(t)
	a := newReplicaServer(t, cl.url, 60)
	b := newReplicaServer(t, cl.url, 400)
	id := a.create(t)
	ca, cb := a.dial(t), b.dial(t)
	tabs := map[string]*tabDoc{"A": followTab(t, ca, id), "B": followTab(t, cb, id)}
	if r := ca.send(id, "k1", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	open := cb.await(func(f frame) bool {
		if f.Type != "event" || f.Op != string(OpUpsert) || !f.Open {
			return false
		}
		e, err := transcript.DecodeEntry(f.Entry)
		return err == nil && e.Content.Kind() == transcript.KindAgent
	})
	cb.await(func(f frame) bool {
		return f.Type == "event" && f.Op == string(OpAppend) && f.EntryID == open.entry(t).ID && f.Text != ""
	})
	conn, err := pgx.Connect(context.Background(), cl.url)
	must(t, err)
	defer conn.Close(context.Background())
	var ended int
	must(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND datname = current_database()) x`).Scan(&ended))
	if ended < 3 { // two listeners and A's lease at least
		t.Fatalf("ended %d sessions", ended)
	}
	for _, tab := range []*client{ca, cb} {
		awaitStatus(tab, storeUnreachable)
		awaitStatus(tab, storeReachable)
	}
	if r := ca.send(id, "k2", "after"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A after the sessions ended: %+v", r)
	}
	if r := ca.finished("k2"); r.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", r)
	}
	data := waitEqual(t, id, a, b)
	stored := storedEntries(t, a, id)
	if got := userTexts(stored); got != "long|after" {
		t.Fatalf("user entries %q; want long and after, once each:\n%s", got, data)
	}
	for name, tab := range tabs {
		tab.awaitDocument(t, name, stored)
	}
}

// A lease that ends while the database stays reachable (its session alone
// is ended) is noticed by the replica without any command: it closes the
// conversation's engine, which had stopped being able to save, records the
// answer as far as it was saved under an "interrupted" notice, and its tab,
// told the document was replaced, holds the database's document, with no
// save failure shown. The next send runs under a new lease.
func TestReplicaLeaseEndedAloneIsRecoveredWithoutACommand(t *testing.T) {
	url := pgtest.URL(t)
	a := newReplicaServerSaving(t, url, 60, 250*time.Millisecond)
	b := newReplicaServer(t, url, 400)
	id := a.create(t)
	ca, cb := a.dial(t), b.dial(t)
	tabs := map[string]*tabDoc{"A": followTab(t, ca, id), "B": followTab(t, cb, id)}
	if r := ca.send(id, "k1", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	// Once part of the answer is saved, end the lease's session.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) { // a hang guard, not a measure
		if es := storedEntries(t, a, id); len(es) > 0 {
			if x, ok := es[len(es)-1].Content.(transcript.Agent); ok && x.Markdown != "" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("A never saved its streaming answer")
		}
	}
	var pid int32
	must(t, a.store.Pool().QueryRow(context.Background(),
		`SELECT backend_pid FROM folio_leases WHERE conversation_id = $1`, id).Scan(&pid))
	var ended bool
	must(t, a.store.Pool().QueryRow(context.Background(), `SELECT pg_terminate_backend($1, 10000)`, pid).Scan(&ended))
	if !ended {
		t.Fatal("the lease's session did not end")
	}
	ca.await(func(f frame) bool { return f.Type == "event" && f.Op == string(OpReplaced) })
	for _, tab := range []*client{ca, cb} {
		tab.await(func(f frame) bool {
			if f.Type != "event" || f.Open || (f.Op != string(OpUpsert) && f.Op != string(OpSettle)) {
				return false
			}
			e, err := transcript.DecodeEntry(f.Entry)
			n, ok := e.Content.(transcript.Notice)
			return err == nil && ok && n.Text == history.InterruptedNotice
		})
	}
	stored := storedEntries(t, a, id)
	for name, tab := range tabs {
		tab.awaitDocument(t, name, stored)
	}
	if r := ca.send(id, "k2", "after"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A after its lease ended: %+v", r)
	}
	if r := ca.finished("k2"); r.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", r)
	}
	waitEqual(t, id, a, b)
	stored = storedEntries(t, a, id)
	if got := userTexts(stored); got != "long|after" {
		t.Fatalf("user entries %q; want long and after, once each", got)
	}
	for name, tab := range tabs {
		tab.awaitDocument(t, name, stored)
	}
}
