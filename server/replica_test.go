package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/store/pgstore"
	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// replicaServer is one of several servers sharing a database, with its own
// data folder (its copies), engine and loopback port.
type replicaServer struct {
	*testServer
	mirror *pgstore.Mirror
	store  *pgstore.Store
	turns  *testTurns
	// stopMirror stops the replica's mirror (its listener, probes and
	// recovery), as a process that died would.
	stopMirror func()
}

func newReplicaServer(t testing.TB, url string, rate float64, configure ...func(*Options, *TurnsOptions)) *replicaServer {
	t.Helper()
	return newReplicaServerSaving(t, url, rate, 0, configure...)
}

// newReplicaServerSaving is newReplicaServer whose engine saves a
// streaming answer every saveEvery (0: the engine's default, as folio
// serve --store).
func newReplicaServerSaving(t testing.TB, url string, rate float64, saveEvery time.Duration, configure ...func(*Options, *TurnsOptions)) *replicaServer {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	m := pgstore.NewMirror(st, data, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	topts := TurnsOptions{
		Provider:        demo.New(demo.Options{TokensPerSecond: rate}),
		Model:           "demo",
		Workspace:       t.TempDir(),
		IdleAfter:       time.Second,
		StreamSaveEvery: saveEvery,
	}
	opts := Options{DataDir: data, Replica: m}
	for _, c := range configure {
		c(&opts, &topts)
	}
	opts.Turns = &topts
	ts := newTestServer(t, opts)
	t.Cleanup(func() { cancel(); <-done; st.Close() })
	stop := func() { cancel(); <-done }
	return &replicaServer{testServer: ts, mirror: m, store: st, turns: ts.engines(), stopMirror: sync.OnceFunc(stop)}
}

// copyOf is the replica's local copy of id.
func (r *replicaServer) copyOf(t *testing.T, id string) []byte {
	t.Helper()
	p, _ := r.mirror.Path(id)
	b, _ := os.ReadFile(p)
	return b
}

// waitEqual waits until every replica's copy of id holds the database's
// log.
func waitEqual(t *testing.T, id string, rs ...*replicaServer) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a hang guard, not a measure
	for {
		want, _, err := rs[0].store.ReadLog(id)
		if err != nil {
			t.Fatal(err)
		}
		same := true
		for _, r := range rs {
			same = same && bytes.Equal(r.copyOf(t, id), want)
		}
		if same {
			return want
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replicas' copies never matched the database's %d bytes", len(want))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitAgent waits on a tab for an agent entry shown settled (an upsert
// of a settled entry, or the settle of an open one) and returns it.
func awaitAgent(t *testing.T, c *client) transcript.Entry {
	t.Helper()
	f := c.await(func(f frame) bool {
		if f.Type != "event" || f.Open || (f.Op != string(OpSettle) && f.Op != string(OpUpsert)) {
			return false
		}
		e, err := transcript.DecodeEntry(f.Entry)
		return err == nil && e.Content.Kind() == transcript.KindAgent
	})
	return f.entry(t)
}

// Three servers on one database: a turn sent on A settles live on tabs on
// B and C; then a fourth replica, in its own process, owns the
// conversation and is killed with SIGKILL while it streams an answer that
// B's tab is showing; C records the interruption (Recover), which B's and
// C's tabs show, and the next send, on B, runs; every copy ends equal to
// the database, with no record lost or doubled, and each tab's document,
// followed live, is the database's and what folio log show --json prints
// of an export.
func TestThreeReplicas(t *testing.T) {
	url := pgtest.URL(t)
	a := newReplicaServer(t, url, 400)
	b := newReplicaServer(t, url, 400)
	c := newReplicaServer(t, url, 400)
	id := a.create(t)

	ca, cb, cc := a.dial(t), b.dial(t), c.dial(t)
	tabs := map[string]*tabDoc{"A": followTab(t, ca, id), "B": followTab(t, cb, id), "C": followTab(t, cc, id)}
	if r := ca.send(id, "k1", "hello from A"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	if r := ca.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", r)
	}
	eb, ec := awaitAgent(t, cb), awaitAgent(t, cc)
	stored, err := history.ReadStore(a.store, id)
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]transcript.Entry{"B": eb, "C": ec} {
		i, ok := stored.Document.Index(e.ID)
		if !ok || transcript.FingerprintOf(e) != stored.Document.Fingerprint(i) {
			t.Fatalf("%s's tab settled %+v, which the database does not hold", name, e)
		}
	}
	waitEqual(t, id, a, b, c)

	// A lets go of the conversation (as its idle engine would); D, a
	// replica in a process of its own with a slow model, takes it and is
	// killed (SIGKILL) mid-answer.
	a.turns.forget(id)
	d := startReplicaProcess(t, url)
	cd := d.dial(t)
	cd.open(id)
	if r := cd.send(id, "k2", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on D: %+v", r)
	}
	// B's tab sees D's answer streaming before D dies: shown open, then
	// growing by appended text.
	open := cb.await(func(f frame) bool {
		if f.Type != "event" || f.Op != string(OpUpsert) || !f.Open {
			return false
		}
		e, err := transcript.DecodeEntry(f.Entry)
		return err == nil && e.Content.Kind() == transcript.KindAgent && e.ID != eb.ID
	})
	cb.await(func(f frame) bool {
		return f.Type == "event" && f.Op == string(OpAppend) && f.EntryID == open.entry(t).ID && f.Text != ""
	})
	// B's tab sees the answer as D streams it, ahead of D's saves; D is
	// killed once the database holds part of it, which the recovery keeps.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) { // a hang guard, not a measure
		conv, err := history.ReadStore(a.store, id)
		must(t, err)
		if i, ok := conv.Document.Index(open.entry(t).ID); ok && textOf(conv.Document.At(i)) != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("D never saved its streaming answer")
		}
	}
	var pid int32
	if err := a.store.Pool().QueryRow(context.Background(),
		`SELECT backend_pid FROM folio_leases WHERE conversation_id = $1`, id).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	d.kill(t)
	// The database notices the dead session on its own; waiting for its
	// end here makes the recovery below deterministic.
	a.store.Pool().Exec(context.Background(), `SELECT pg_terminate_backend($1, 10000)`, pid)
	// C records the interruption without any command, and the tabs on B
	// and C show it.
	if err := c.mirror.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tab := range []*client{cb, cc} {
		tab.await(func(f frame) bool {
			if f.Type != "event" || f.Open || (f.Op != string(OpUpsert) && f.Op != string(OpSettle)) {
				return false
			}
			e, err := transcript.DecodeEntry(f.Entry)
			n, ok := e.Content.(transcript.Notice)
			return err == nil && ok && n.Text == history.InterruptedNotice
		})
	}

	r := cb.send(id, "k3", "next, from B")
	if r.State == transcript.CommandRejected {
		t.Fatalf("send on B after the owner died: %+v", r)
	}
	if r := cb.finished("k3"); r.State != transcript.CommandDone {
		t.Fatalf("B's turn: %+v", r)
	}
	data := waitEqual(t, id, a, b, c)
	conv, err := history.ReadStore(b.store, id)
	if err != nil || len(conv.Problems) != 0 {
		t.Fatalf("the database's log: %v %+v", err, conv.Problems)
	}
	var notices, users int
	for _, e := range conv.Document.Entries() {
		switch x := e.Content.(type) {
		case transcript.Notice:
			if x.Text == history.InterruptedNotice {
				notices++
			}
		case transcript.User:
			users++
		}
	}
	if notices != 1 || users != 3 {
		t.Fatalf("%d interrupted notices and %d user entries; want 1 and 3:\n%s", notices, users, data)
	}
	if n := strings.Count(string(data), "\n"); n < 5 {
		t.Fatalf("only %d records", n)
	}
	// Each tab, following live events on its own replica, holds the
	// database's document.
	for name, tab := range tabs {
		tab.awaitDocument(t, name, conv.Document.Entries())
	}
	// And that is what folio log show --json prints of an export.
	if diff := sameDocument(t, tabs["B"].entries(t), exportedEntries(t, url, id)); diff != "" {
		t.Fatalf("B's tab differs from folio log show --json of an export:\n%s", diff)
	}
}

// replicaProcess is a replica server in a child process (TestMain runs
// serveReplica), so a test can kill it as a crash would.
type replicaProcess struct {
	*testServer
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startReplicaProcess(t *testing.T, url string, env ...string) *replicaProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FOLIO_TEST_REPLICA="+t.TempDir(), "FOLIO_TEST_REPLICA_URL="+url)
	cmd.Env = append(cmd.Env, env...)
	in, err := cmd.StdinPipe()
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "addr ") {
		t.Fatalf("the replica process did not start: %q", sc.Text())
	}
	return &replicaProcess{testServer: &testServer{Server: &Server{}, url: "http://" + strings.TrimPrefix(sc.Text(), "addr ")},
		cmd: cmd, in: in, out: sc}
}

// report asks the process for its peak RSS.
func (p *replicaProcess) report(t *testing.T) string {
	t.Helper()
	io.WriteString(p.in, "report\n")
	if !p.out.Scan() {
		t.Fatal("the replica process did not report")
	}
	return p.out.Text()
}

// kill sends SIGKILL and waits for the process to end.
func (p *replicaProcess) kill(t *testing.T) {
	t.Helper()
	must(t, p.cmd.Process.Signal(syscall.SIGKILL))
	p.cmd.Wait()
}

// serveReplica is the child process: a replica with the demo model at 20
// tokens per second (FOLIO_TEST_REPLICA_RATE), serving until its standard input closes.
func serveReplica(data, url string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 1 }
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		return fail(err)
	}
	m := pgstore.NewMirror(st, data, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	rate := 20.0
	if r, err := strconv.ParseFloat(os.Getenv("FOLIO_TEST_REPLICA_RATE"), 64); err == nil {
		rate = r
	}
	// FOLIO_TEST_REPLICA_SAVE: how often a streaming answer is saved
	// (default: the engine's, as folio serve --store does).
	save, _ := time.ParseDuration(os.Getenv("FOLIO_TEST_REPLICA_SAVE"))
	turns := &TurnsOptions{Provider: demo.New(demo.Options{TokensPerSecond: rate}), Model: "demo", Workspace: data,
		StreamSaveEvery: save}
	follow := 5 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("FOLIO_TEST_REPLICA_FOLLOW")); err == nil {
		follow = d
	}
	s, err := New(Options{Turns: turns, DataDir: data, Replica: m, FollowInterval: follow, TempDir: data})
	if err != nil {
		return fail(err)
	}
	ready := make(chan string, 1)
	go s.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { ready <- a.String() })
	fmt.Println("addr", <-ready)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "report" {
			fmt.Printf("peakRSS=%s\n", peakRSS())
		}
	}
	return 0
}

// A send that reaches a replica while another replica's engine runs a
// turn in the conversation is forwarded to that owner, queued there, and
// its receipts reach the sender's tab; the two turns are recorded once
// each.
func TestReplicaForwardsACommandToTheOwner(t *testing.T) {
	url := pgtest.URL(t)
	a := newReplicaServer(t, url, 300)
	b := newReplicaServer(t, url, 300)
	id := a.create(t)
	ca, cb := a.dial(t), b.dial(t)
	ca.open(id)
	cb.open(id)
	if r := ca.send(id, "k1", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	// Queued: only A's engine, which runs k1, can queue it.
	if r := cb.send(id, "k2", "hello from B"); r.State != transcript.CommandQueued {
		t.Fatalf("send on B while A runs a turn: %+v, want queued behind A's turn", r)
	}
	if r := cb.finished("k2"); r.State != transcript.CommandDone {
		t.Fatalf("B's forwarded command ended %+v", r)
	}
	if r := ca.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("A's turn: %+v", r)
	}
	data := waitEqual(t, id, a, b)
	conv, err := history.ReadStore(a.store, id)
	if err != nil || len(conv.Problems) != 0 {
		t.Fatalf("%v %+v", err, conv.Problems)
	}
	var users []string
	for _, e := range conv.Document.Entries() {
		if u, ok := e.Content.(transcript.User); ok {
			users = append(users, u.Text)
		}
	}
	if strings.Join(users, "|") != "long|hello from B" {
		t.Fatalf("user entries %q; want A's then B's, once each:\n%s", users, data)
	}
}

// A conversation deleted on one replica is announced as deleted to the
// tabs on the others, and their copies are dropped.
func TestReplicaDeleteReachesOtherReplicas(t *testing.T) {
	url := pgtest.URL(t)
	a, b := newReplicaServer(t, url, 400), newReplicaServer(t, url, 400)
	id := a.create(t)
	cb := b.dial(t)
	cb.open(id)
	req, _ := http.NewRequest(http.MethodDelete, a.url+"/api/v2/conversations/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	cb.event("deleted")
	if got := b.copyOf(t, id); got != nil {
		t.Fatalf("B still holds a copy: %s", got)
	}
	if _, _, err := a.store.ReadLog(id); err == nil {
		t.Fatal("the database still holds the conversation")
	}
}
