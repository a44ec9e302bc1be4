package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
// message once and every copy equals the database.
func TestReplicaStoreOutage(t *testing.T) {
	cl := startCluster(t)
	url := cl.url
	a := newReplicaServer(t, url, 20)
	b := newReplicaServer(t, url, 400)
	id := a.create(t)
	ca, cb := a.dial(t), b.dial(t)
	ca.open(id)
	cb.open(id)
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
	awaitStatus(ca, StoreUnreachable)
	awaitStatus(cb, StoreUnreachable)
	for name, tab := range map[string]*client{"A": ca, "B": cb} {
		r := tab.send(id, "k2"+name, "while down")
		if r.State != transcript.CommandRejected || r.Code != "store-unavailable" {
			t.Fatalf("send on %s while the database is down: %+v, want rejected store-unavailable", name, r)
		}
	}
	// A tab that connects meanwhile is told at once.
	late := b.dial(t)
	awaitStatus(late, StoreUnreachable)

	cl.start(t)
	awaitStatus(ca, StoreReachable)
	awaitStatus(cb, StoreReachable)
	awaitStatus(late, StoreReachable)

	if r := cb.send(id, "k3", "after"); r.State == transcript.CommandRejected {
		t.Fatalf("send on B after recovery: %+v", r)
	}
	if r := cb.finished("k3"); r.State != transcript.CommandDone {
		t.Fatalf("B's turn after recovery: %+v", r)
	}
	data := waitEqual(t, id, a, b)
	conv, err := history.ReadStore(a.store, id)
	if err != nil || len(conv.Problems) != 0 {
		t.Fatalf("the database's log: %v %+v", err, conv.Problems)
	}
	var users []string
	seen := map[string]bool{}
	for _, e := range conv.Document.Entries() {
		if seen[e.ID] {
			t.Fatalf("entry %s twice:\n%s", e.ID, data)
		}
		seen[e.ID] = true
		if u, ok := e.Content.(transcript.User); ok {
			users = append(users, u.Text)
		}
	}
	if strings.Join(users, "|") != "long|after" {
		t.Fatalf("user entries %q; want long and after, once each:\n%s", users, data)
	}
}
