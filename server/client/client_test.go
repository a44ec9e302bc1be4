//go:build linux

package client_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/server/client"
	"github.com/foliodev/folio/transcript"
)

// owner is a real server running demo turns, serving its local endpoint.
func owner(t testing.TB, rate float64) (data string, srv *server.Server) {
	t.Helper()
	data, err := os.MkdirTemp("", "fc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	srv, err = server.New(server.Options{DataDir: data, TempDir: t.TempDir(), Token: "test-token-0123456789",
		Turns: &server.TurnsOptions{Provider: demo.New(demo.Options{TokensPerSecond: rate}), Model: "demo", Workspace: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := srv.ServeLocal(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); ep.Close() })
	return data, srv
}

// create makes a conversation over the endpoint's HTTP API.
func create(t testing.TB, data string) string {
	t.Helper()
	path := history.EndpointPath(data, os.Getpid())
	c, err := client.DialLocal(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := c.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitFor polls the store until ok holds.
func waitFor(t testing.TB, st *transcript.Store, what string, ok func(transcript.Snapshot) bool) transcript.Snapshot {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := st.Snapshot()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: the mirror holds %d entries, turn running %v", what, s.Document.Len(), running(s))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func running(s transcript.Snapshot) bool { _, ok := s.Live.Turn(); return ok }

func kinds(d transcript.Document) string {
	var b []string
	for _, e := range d.All() {
		b = append(b, string(e.Content.Kind()))
	}
	return strings.Join(b, ",")
}

// TestMirrorEqualsLog: a turn started by the client is mirrored live (the
// turn runs, the reply streams) and at its end the mirror's entries are
// the log's, byte for byte.
func TestMirrorEqualsLog(t *testing.T) {
	data, _ := owner(t, 200)
	id := create(t, data)
	c, err := client.DialLocal(t.Context(), history.EndpointPath(data, os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := transcript.NewStore()
	cv, err := c.Open(t.Context(), id, st)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cv.Send(t.Context(), "k1", "tell me about streaming", false)
	if err != nil || r.State == transcript.CommandRejected {
		t.Fatalf("send: %+v %v", r, err)
	}
	// Live: the turn runs and an open reply grows before it settles.
	waitFor(t, st, "a streaming reply", func(s transcript.Snapshot) bool {
		return running(s) && s.Document.Len() > s.Document.Settled()
	})
	// Idempotent: the same ID and body is the same command.
	if again, err := cv.Send(t.Context(), "k1", "tell me about streaming", false); err != nil || again.CommandID != "k1" {
		t.Fatalf("resend: %+v %v", again, err)
	}
	waitFor(t, st, "the turn's end", func(s transcript.Snapshot) bool {
		return !running(s) && s.Document.Len() > 1 && s.Document.Settled() == s.Document.Len()
	})
	rc := waitReceipt(t, cv, "k1")
	if rc.State != transcript.CommandDone {
		t.Fatalf("receipt: %+v", rc)
	}
	compareWithLog(t, data, id, st.Snapshot().Document)
}

func waitReceipt(t testing.TB, cv *client.Conversation, id string) (r server.Receipt) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ch := cv.Changed()
		r, err := cv.Status(t.Context(), id)
		if err == nil && (r.State == transcript.CommandDone || r.State == transcript.CommandStopped || r.State == transcript.CommandFailed) {
			return r
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("no final receipt for %s: %+v", id, r)
	return r
}

func compareWithLog(t testing.TB, data, id string, mirror transcript.Document) {
	t.Helper()
	path, _ := history.Locate(data, id)
	var log []transcript.Entry
	deadline := time.Now().Add(10 * time.Second)
	for {
		conv, err := history.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		log = conv.Document.Entries()
		if len(log) == mirror.Len() || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(log) != mirror.Len() {
		t.Fatalf("mirror %d entries (%s), log %d (%s)", mirror.Len(), kinds(mirror), len(log), kindsOf(log))
	}
	for i, e := range log {
		a, _ := transcript.EncodeEntry(e)
		b, _ := transcript.EncodeEntry(mirror.At(i))
		if string(a) != string(b) {
			t.Fatalf("entry %d differs:\nlog    %s\nmirror %s", i, a, b)
		}
	}
}

func kindsOf(es []transcript.Entry) string {
	var b []string
	for _, e := range es {
		b = append(b, string(e.Content.Kind()))
	}
	return strings.Join(b, ",")
}

// TestApprovalAndStop: a tool call waiting for approval reaches the mirror
// (the approval and its open tool entry); the client's approve runs it;
// a stop ends the next turn, stopped.
func TestApprovalAndStop(t *testing.T) {
	data, _ := owner(t, 40)
	id := create(t, data)
	c, err := client.DialLocal(t.Context(), history.EndpointPath(data, os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := transcript.NewStore()
	cv, err := c.Open(t.Context(), id, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cv.Send(t.Context(), "k1", `/demo call shell {"command":"echo hi"}`, false); err != nil {
		t.Fatal(err)
	}
	s := waitFor(t, st, "an approval", func(s transcript.Snapshot) bool { return s.Live.Approvals.Len() == 1 })
	var inv string
	for _, a := range s.Live.Approvals.All() {
		inv = a.ID
	}
	if _, ok := s.Document.Index(inv); !ok {
		t.Fatalf("the waiting call %s has no tool entry in the mirror (%s)", inv, kinds(s.Document))
	}
	if r, err := cv.Approve(t.Context(), "a1", inv, true, "once"); err != nil || r.State == transcript.CommandRejected {
		t.Fatalf("approve: %+v %v", r, err)
	}
	waitReceipt(t, cv, "k1")

	if _, err := cv.Send(t.Context(), "k2", "tell me a long story about streaming and tools and logs", false); err != nil {
		t.Fatal(err)
	}
	s = waitFor(t, st, "the second turn", func(s transcript.Snapshot) bool {
		tr, ok := s.Live.Turn()
		return ok && tr.Entry != ""
	})
	tr, _ := s.Live.Turn()
	if r, err := cv.Stop(t.Context(), "s1", tr.Entry); err != nil || r.State == transcript.CommandRejected {
		t.Fatalf("stop: %+v %v", r, err)
	}
	if r := waitReceipt(t, cv, "k2"); r.State != transcript.CommandStopped {
		t.Fatalf("k2 after stop: %+v", r)
	}
	waitFor(t, st, "idle", func(s transcript.Snapshot) bool { return !running(s) })
	compareWithLog(t, data, id, st.Snapshot().Document)
}

// TestDialMissing: no endpoint is an error, not a hang.
func TestDialMissing(t *testing.T) {
	if _, err := client.DialLocal(t.Context(), "/nonexistent/run/1.sock"); err == nil {
		t.Fatal("dialing a missing socket worked")
	}
}
