package server

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore/pgtest"
	"github.com/foliodev/folio/transcript"
)

// withTokenAndTools gives a replica a token (uploads need one) and lets
// every tool run without asking.
func withTokenAndTools(o *Options, t *TurnsOptions) {
	o.Token = testToken
	t.Allow = []string{"*"}
}

// authed makes a request carrying the test token.
func authed(t *testing.T, method, url, ctype string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// upload sends an attachment to a server and returns what it stored.
func upload(t *testing.T, ts *testServer, conv, name string, data []byte) (int, Attachment, string) {
	t.Helper()
	resp, body := authed(t, http.MethodPost, ts.url+"/api/v2/conversations/"+conv+"/attachments?name="+name, "text/plain", bytes.NewReader(data))
	var up struct {
		Attachment Attachment `json:"attachment"`
	}
	if resp.StatusCode == http.StatusCreated {
		if err := json.Unmarshal(body, &up, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, up.Attachment, string(body)
}

// On two replicas of one database: a tab on B sends a command with an
// attachment B received to a conversation whose engine runs on A; it is
// forwarded, A's turn reads the attachment from the database, and the
// model gets its text. Then a shell tool's output, an artifact A's engine
// kept, is read through B byte for byte. Hostile uploads and reads are
// refused clearly, and deleting the conversation on B deletes its blobs in
// the database and both replicas' attachment folders.
func TestReplicaAttachmentsAndArtifacts(t *testing.T) {
	url := pgtest.URL(t)
	a := newReplicaServer(t, url, 300, withTokenAndTools)
	b := newReplicaServer(t, url, 300, withTokenAndTools)
	id := a.create(t)
	ca, cb := a.dial(t), b.dial(t)
	ca.open(id)
	cb.open(id)

	// A's engine holds the conversation while it answers.
	if r := ca.send(id, "k1", "long"); r.State == transcript.CommandRejected {
		t.Fatalf("send on A: %+v", r)
	}
	status, att, body := upload(t, b.testServer, id, "plum.txt", []byte("the secret word is plum"))
	if status != http.StatusCreated {
		t.Fatalf("upload on B: %d %s", status, body)
	}
	if _, data, err := a.store.GetBlob(id, history.BlobAttachment, att.ID); err != nil || string(data) != "the secret word is plum" {
		t.Fatalf("the attachment in the database: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(a.data, "attachments", id, att.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("A has the attachment before any command needs it: %v", err)
	}
	f := cb.call(map[string]any{"type": "send", "conversation": id, "commandId": "k2", "text": "read this", "attachments": []string{att.ID}})
	if f.Receipt == nil || f.Receipt.State != transcript.CommandQueued {
		t.Fatalf("send with an attachment on B while A runs a turn: %s, want queued behind A's turn", f.raw)
	}
	if r := cb.finished("k2"); r.State != transcript.CommandDone {
		t.Fatalf("B's forwarded command ended %+v", r)
	}
	ca.finished("k1")
	conv, err := history.ReadStore(a.store, id)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, m := range conv.Messages {
		if strings.Contains(m.Content, "read this") {
			got = m.Content
		}
	}
	if !strings.Contains(got, "the secret word is plum") || !strings.Contains(got, "plum.txt") {
		t.Fatalf("the model did not get the attachment on A: %q", got)
	}

	// Hostile input on B.
	if status, _, body := upload(t, b.testServer, id, "big.bin", make([]byte, history.MaxAttachmentBytes+1)); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "32 MiB") {
		t.Fatalf("oversize upload: %d %s", status, body)
	}
	for _, bad := range []string{"a-nope", "../../etc/passwd", "a-../x"} {
		f := cb.call(map[string]any{"type": "send", "conversation": id, "commandId": "bad-" + history.Digest([]byte(bad))[:8], "text": "hi", "attachments": []string{bad}})
		if f.Receipt == nil || f.Receipt.State != transcript.CommandRejected || f.Receipt.Code != "not-found" || !strings.Contains(f.Receipt.Reason, "attachment") {
			t.Fatalf("send with attachment %q: %s", bad, f.raw)
		}
	}
	if list, err := a.store.ListBlobs(id); err != nil || len(list) != 1 {
		t.Fatalf("blobs after hostile uploads: %+v %v", list, err)
	}

	// A shell tool's output on A, read through B.
	if r := ca.send(id, "k3", "use the shell tool to list this folder"); r.State == transcript.CommandRejected {
		t.Fatalf("tool turn on A: %+v", r)
	}
	if r := ca.finished("k3"); r.State != transcript.CommandDone {
		t.Fatalf("tool turn: %+v", r)
	}
	conv, err = history.ReadStore(a.store, id)
	if err != nil {
		t.Fatal(err)
	}
	refs := history.ArtifactRefs(conv)
	if len(refs) == 0 {
		t.Fatalf("the tool turn kept no artifact:\n%+v", conv.Document.Entries())
	}
	art, ok := artifactIn(conv.Document.Len(), conv.Document.At, refs[0])
	if !ok || !art.Final || art.CommittedBytes == 0 {
		t.Fatalf("artifact checkpoint %+v", art)
	}
	onA, err := os.ReadFile(filepath.Join(a.data, "conversation-artifacts", id, art.Ref))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(b.data, "artifacts", art.Ref), filepath.Join(b.data, "conversation-artifacts", id, art.Ref)} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("B has the artifact file before it was asked for: %v", err)
		}
	}
	waitEqual(t, id, a, b)
	resp, viaB := authed(t, http.MethodGet, b.url+"/api/v2/conversations/"+id+"/artifacts/"+art.Ref, "", nil)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(viaB, onA[:art.CommittedBytes]) {
		t.Fatalf("artifact through B: %d, %d bytes; A holds %d (committed %d)\n%s", resp.StatusCode, len(viaB), len(onA), art.CommittedBytes, viaB)
	}
	if cached, err := os.ReadFile(filepath.Join(b.data, "conversation-artifacts", id, art.Ref)); err != nil || !bytes.Equal(cached, onA) {
		t.Fatalf("B's fetched copy: %d bytes, %v", len(cached), err)
	}
	unknown := strings.Repeat("e", 32)
	if resp, body := authed(t, http.MethodGet, b.url+"/api/v2/conversations/"+id+"/artifacts/"+unknown, "", nil); resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), unknown) {
		t.Fatalf("unknown artifact through B: %d %s", resp.StatusCode, body)
	}
	if resp, body := authed(t, http.MethodGet, b.url+"/api/v2/conversations/"+id+"/artifacts/..%2f..%2fsecret", "", nil); resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("traversing artifact ref through B: %d %s", resp.StatusCode, body)
	}

	// Deleting it on B (after A's engine let go) deletes every blob in
	// the database, and the files of both replicas: attachments, the
	// artifact A made, B's fetched copy.
	a.turns.forget(id)
	if resp, body := authed(t, http.MethodDelete, b.url+"/api/v2/conversations/"+id, "", nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	ca.event("deleted")
	if list, err := a.store.ListBlobs(id); err != nil || len(list) != 0 {
		t.Fatalf("blobs after delete: %+v %v", list, err)
	}
	var n int
	if err := a.store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM folio_blobs WHERE conversation_id = $1`, id).Scan(&n); err != nil || n != 0 {
		t.Fatalf("blob bytes after delete: %d %v", n, err)
	}
	for _, p := range []string{
		filepath.Join(a.data, "attachments", id), filepath.Join(b.data, "attachments", id),
		filepath.Join(a.data, "conversation-artifacts", id), filepath.Join(b.data, "conversation-artifacts", id),
	} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there after the delete: %v", p, err)
		}
	}
}
