//go:build linux

package client_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/server/client"
	"github.com/foliodev/folio/transcript"
)

const serveToken = "test-token-0123456789"

// serveBeside is folio serve on the terminal owner's data folder: its own
// engines for conversations nobody owns, and DialOwner for the one the
// terminal owns, reached over HTTP as a browser tab reaches it.
func serveBeside(t *testing.T, o *terminalOwner) string {
	t.Helper()
	srv, err := server.New(server.Options{DataDir: o.data, TempDir: t.TempDir(), Token: serveToken,
		Turns:     &server.TurnsOptions{Provider: demo.New(demo.Options{TokensPerSecond: 300}), Model: "demo", Workspace: t.TempDir()},
		DialOwner: client.DialOwner})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return ts.URL
}

// upload stores body as an attachment of conversation id through base's
// HTTP API (hc reaches it) and returns the attachment's ID.
func upload(t *testing.T, hc *http.Client, base, token, id, name, body string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/v2/conversations/"+id+"/attachments?name="+name, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Attachment struct {
			ID string `json:"id"`
		} `json:"attachment"`
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: HTTP %d", resp.StatusCode)
	}
	if err := json.UnmarshalRead(resp.Body, &out, json.RejectUnknownMembers(false)); err != nil || out.Attachment.ID == "" {
		t.Fatalf("upload: %v %+v", err, out)
	}
	return out.Attachment.ID
}

// userMessages are the user messages of conversation id's log.
func userMessages(t *testing.T, data, id string) []string {
	t.Helper()
	path, _ := history.Locate(data, id)
	conv, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range conv.Messages {
		if m.Role == message.User {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestServeSendsAttachmentsThroughTerminalOwner: a browser tab on a
// conversation a terminal owns sends a message with an attachment it
// uploaded to folio serve; the send runs on the terminal's engine, and the
// owner's log holds the message exactly as a send with the same file made
// on the owner itself holds it.
func TestServeSendsAttachmentsThroughTerminalOwner(t *testing.T) {
	o := newTerminalOwner(t, 300)
	base := serveBeside(t, o)
	const file = "line one\nline two: ünïcode\n"

	// The tab: upload to folio serve, then send with it.
	att := upload(t, http.DefaultClient, base, serveToken, o.id, "notes.txt", file)
	c, err := client.Dial(t.Context(), base, serveToken)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cv, err := c.Open(t.Context(), o.id, transcript.NewStore())
	if err != nil {
		t.Fatal(err)
	}
	r, err := cv.Command(t.Context(), "send", "web-1", map[string]any{"text": "read this", "attachments": []string{att}})
	if err != nil || r.State == transcript.CommandRejected {
		t.Fatalf("a send with an attachment through folio serve: %+v %v", r, err)
	}
	if r := waitReceipt(t, cv, "web-1"); r.State != transcript.CommandDone {
		t.Fatalf("web-1: %+v", r)
	}
	if r, _ := o.eng.Status("web-1"); r.State != transcript.CommandDone {
		t.Errorf("the owner's engine has web-1 as %+v, want it done there", r)
	}

	// The same send made on the owner itself, over its own endpoint.
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", history.EndpointPath(o.data, os.Getpid()))
	}}}
	direct := upload(t, hc, "http://folio", "", o.id, "notes.txt", file)
	local, err := client.DialLocal(t.Context(), history.EndpointPath(o.data, os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	lcv, err := local.Open(t.Context(), o.id, transcript.NewStore())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lcv.Command(t.Context(), "send", "own-1", map[string]any{"text": "read this", "attachments": []string{direct}}); err != nil {
		t.Fatal(err)
	}
	if r := waitReceipt(t, lcv, "own-1"); r.State != transcript.CommandDone {
		t.Fatalf("own-1: %+v", r)
	}

	var users []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		users = userMessages(t, o.data, o.id)
		if len(users) >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(users) != 3 {
		t.Fatalf("the log holds %d user messages, want 3: %q", len(users), users)
	}
	want := "read this\n\n<attachment name=\"notes.txt\">\n" + file + "\n</attachment>"
	if users[1] != want {
		t.Errorf("the forwarded send's message in the owner's log:\n%q\nwant\n%q", users[1], want)
	}
	if users[1] != users[2] {
		t.Errorf("forwarded and direct sends differ in the log:\n%q\n%q", users[1], users[2])
	}
}

// TestMirrorKeepsAWindowInALongSession: a client attached for a long live
// session (more than twice the window of turns' entries) holds a bounded
// document, as the owner's engine does, whose entries are the log's last
// ones; what it dropped is counted as elided.
func TestMirrorKeepsAWindowInALongSession(t *testing.T) {
	o := newTerminalOwner(t, 0)
	_, st := o.attach(t)
	const keep = 256 // client.keepEntries, the owner engine's window
	for i := 0; ; i++ {
		if d := o.eng.Store().Snapshot().Document; d.Elided()+d.Len() >= 3*keep {
			break
		}
		id := fmt.Sprintf("w%d", i)
		if _, err := o.eng.Send(t.Context(), id, "hi", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := o.eng.Wait(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	owner := o.eng.Store().Snapshot().Document
	total := owner.Elided() + owner.Len()
	s := waitFor(t, st, "the mirror to hold the whole session", func(s transcript.Snapshot) bool {
		return s.Document.Elided()+s.Document.Len() == total && s.Document.Settled() == s.Document.Len()
	})
	if n := s.Document.Len(); n >= 2*keep {
		t.Errorf("the mirror holds %d entries of %d; want fewer than %d", n, total, 2*keep)
	}
	if s.Document.Elided() == 0 {
		t.Errorf("the mirror dropped nothing of %d entries", total)
	}
	path, _ := history.Locate(o.data, o.id)
	var log []transcript.Entry
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		conv, err := history.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if log = conv.Document.Entries(); len(log) == total || time.Now().After(deadline) {
			break
		}
	}
	if len(log) != total {
		t.Fatalf("the log holds %d entries, the owner %d", len(log), total)
	}
	tail := log[s.Document.Elided():]
	for i, e := range tail {
		a, _ := transcript.EncodeEntry(e)
		b, _ := transcript.EncodeEntry(s.Document.At(i))
		if string(a) != string(b) {
			t.Fatalf("entry %d differs:\nlog    %s\nmirror %s", s.Document.Elided()+i, a, b)
		}
	}
}

// TestServeRelaysTheTerminalOwnersFooter: a tab on folio serve, for a
// conversation a terminal owns, gets the owner's allowed tools and usage
// totals in the turn state, in its snapshot and live.
func TestServeRelaysTheTerminalOwnersFooter(t *testing.T) {
	o := newTerminalOwner(t, 0)
	o.eng.Allow("read_file")
	base := serveBeside(t, o)
	c, err := client.Dial(t.Context(), base, serveToken)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := transcript.NewStore()
	cv, err := c.Open(t.Context(), o.id, st)
	if err != nil {
		t.Fatal(err)
	}
	// A send through folio serve attaches it to the owner.
	if r, err := cv.Send(t.Context(), "web-1", "hello", false); err != nil || r.State == transcript.CommandRejected {
		t.Fatalf("send: %+v %v", r, err)
	}
	if r := waitReceipt(t, cv, "web-1"); r.State != transcript.CommandDone {
		t.Fatalf("web-1: %+v", r)
	}
	want := o.eng.Store().Snapshot().Live.Totals
	waitFor(t, st, "the owner's totals through folio serve", func(s transcript.Snapshot) bool {
		return s.Live.Totals == want && slices.Equal(cv.Allowed(), []string{"read_file"})
	})
	// A tab that opens now has them from its snapshot.
	st2 := transcript.NewStore()
	c2, err := client.Dial(t.Context(), base, serveToken)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	cv2, err := c2.Open(t.Context(), o.id, st2)
	if err != nil {
		t.Fatal(err)
	}
	if got := st2.Snapshot().Live.Totals; got != want || !slices.Equal(cv2.Allowed(), []string{"read_file"}) {
		t.Errorf("a new tab's snapshot: totals %+v allowed %q; want %+v and [read_file]", got, cv2.Allowed(), want)
	}
}
