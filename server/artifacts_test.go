package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// artifactFixture makes a conversation whose tool entry refers to an
// artifact of size bytes in the data folder, and a second artifact file
// that no entry refers to. It returns the conversation, both refs and the
// artifact's bytes.
func artifactFixture(t *testing.T, ts *testServer, size int) (conv, ref, stray string, data []byte) {
	t.Helper()
	conv = ts.create(t)
	ref, stray = strings.Repeat("ab", 16), strings.Repeat("cd", 16)
	data = make([]byte, size)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	dir := filepath.Join(ts.data, "artifacts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{ref, stray} {
		if err := os.WriteFile(filepath.Join(dir, r), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tool := transcript.Tool{InvocationID: "inv-1",
		Receipt: transcript.ToolReceipt{App: "shell", Summary: "ls -R", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "folio.shell", Version: 1, Revision: 3,
			Artifact: &transcript.Artifact{Ref: ref, ContentType: "text/plain", CommittedBytes: int64(size), Revision: 3, Final: true, Available: true}}}
	doc, err := transcript.NewDocument(conv, []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "list"}, Timestamp: tsAt(1)},
		{ID: "t1", Content: tool, Timestamp: tsAt(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := history.Open(ts.logOf(conv))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(doc, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return conv, ref, stray, data
}

func getArtifact(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// Ranges come back exactly, bounded by the host's range limit; past the
// end is 416, over the limit or malformed is 400, each with a message.
func TestArtifactRanges(t *testing.T) {
	ts := newTestServer(t, Options{DataDir: t.TempDir()})
	const size = 150_000
	conv, ref, _, data := artifactFixture(t, ts, size)
	base := ts.url + "/api/v2/conversations/" + conv + "/artifacts/" + ref

	// Reading the whole artifact in default-sized pieces gives its bytes.
	var got []byte
	for off := 0; off < size; {
		resp, b := getArtifact(t, base+"?offset="+strconv.Itoa(off))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("offset %d: %d %s", off, resp.StatusCode, b)
		}
		if len(b) == 0 || len(b) > toolview.DefaultRangeLimit {
			t.Fatalf("offset %d: %d bytes", off, len(b))
		}
		if resp.Header.Get("Folio-Total") != strconv.Itoa(size) || resp.Header.Get("Folio-Offset") != strconv.Itoa(off) ||
			resp.Header.Get("Folio-Content-Type") != "text/plain" || resp.Header.Get("Content-Type") != "application/octet-stream" {
			t.Fatalf("headers %v", resp.Header)
		}
		got = append(got, b...)
		off += len(b)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, not the artifact's", len(got))
	}
	resp, b := getArtifact(t, base+"?offset=100&length=10")
	if resp.StatusCode != http.StatusOK || string(b) != string(data[100:110]) {
		t.Fatalf("a small range: %d %q", resp.StatusCode, b)
	}

	for _, c := range []struct {
		query  string
		status int
		says   string
	}{
		{"?offset=" + strconv.Itoa(size), http.StatusRequestedRangeNotSatisfiable, "past the end"},
		{"?offset=999999999", http.StatusRequestedRangeNotSatisfiable, "past the end"},
		{"?length=" + strconv.Itoa(toolview.DefaultRangeLimit+1), http.StatusBadRequest, "a read is 1 to 65536 bytes"},
		{"?length=0", http.StatusBadRequest, "a read is 1 to"},
		{"?offset=-1", http.StatusBadRequest, "whole number"},
		{"?offset=ten", http.StatusBadRequest, "whole number"},
	} {
		resp, b := getArtifact(t, base+c.query)
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.says) || !strings.Contains(string(b), `"bad-range"`) {
			t.Errorf("%s: %d %s; want %d saying %q", c.query, resp.StatusCode, b, c.status, c.says)
		}
	}
}

// A ref outside the 32-hex form never reaches a path, and a well-formed
// ref that no entry of the conversation names is not served, even though
// its file exists.
func TestArtifactRefsRefused(t *testing.T) {
	ts := newTestServer(t, Options{DataDir: t.TempDir()})
	conv, ref, stray, _ := artifactFixture(t, ts, 1000)
	other := ts.create(t)
	// A file outside the artifact folder that traversal would reach.
	if err := os.WriteFile(filepath.Join(ts.data, "secret"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{conv + "/artifacts/..%2Fsecret", http.StatusBadRequest, "invalid-id"},
		{conv + "/artifacts/..%2F..%2Fconversations%2F" + conv + ".jsonl", http.StatusBadRequest, "invalid-id"},
		{conv + "/artifacts/" + strings.ToUpper(ref), http.StatusBadRequest, "invalid-id"},
		{conv + "/artifacts/" + ref[:31], http.StatusBadRequest, "invalid-id"},
		{conv + "/artifacts/" + stray, http.StatusNotFound, "not-found"},
		{other + "/artifacts/" + ref, http.StatusNotFound, "not-found"},
		{"..%2Fx/artifacts/" + ref, http.StatusBadRequest, "invalid-id"},
		{"nope/artifacts/" + ref, http.StatusNotFound, "not-found"},
	} {
		resp, b := getArtifact(t, ts.url+"/api/v2/conversations/"+c.path)
		if resp.StatusCode != c.status || !strings.Contains(string(b), fmt.Sprintf("%q", c.code)) || bytes.Contains(b, []byte("secret\"")) {
			t.Errorf("%s: %d %s; want %d %s", c.path, resp.StatusCode, b, c.status, c.code)
		}
	}
}

// A log replaced on disk (renamed over, as a rewrite does) is scanned
// again: a cached artifact of the old file is not served for the new one.
func TestArtifactCacheFollowsTheLog(t *testing.T) {
	ts := newTestServer(t, Options{DataDir: t.TempDir()})
	conv, ref, _, _ := artifactFixture(t, ts, 1000)
	url := ts.url + "/api/v2/conversations/" + conv + "/artifacts/" + ref
	if resp, b := getArtifact(t, url); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	tmp := ts.logOf(conv) + ".new"
	head := `{"type":"conversation","version":3,"conversationId":"` + conv + `","startedAt":"2026-01-01T00:00:00.000Z"}` + "\n"
	if err := os.WriteFile(tmp, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, ts.logOf(conv)); err != nil {
		t.Fatal(err)
	}
	if resp, b := getArtifact(t, url); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after the log was replaced: %d %s", resp.StatusCode, b)
	}
}

// BenchmarkArtifactRange reads a 64 KiB range of an artifact referred to
// at the end of a 30,000-message log: "cold" looks the ref up (the first
// read of an artifact: from the newest entry back through the page index),
// "cached" is every later read of a final artifact.
func BenchmarkArtifactRange(b *testing.B) {
	ts := newTestServer(b, Options{DataDir: b.TempDir()})
	ts.writeGen(b, "big", 30000, 1)
	ref := strings.Repeat("ef", 16)
	dir := filepath.Join(ts.data, "artifacts")
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, ref), bytes.Repeat([]byte("x"), 200_000), 0o600); err != nil {
		b.Fatal(err)
	}
	e, err := transcript.EncodeEntry(transcript.Entry{ID: "bench-tool", Timestamp: tsAt(1), Content: transcript.Tool{
		Receipt: transcript.ToolReceipt{App: "shell", Summary: "ls", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "folio.shell", Version: 1, Revision: 1,
			Artifact: &transcript.Artifact{Ref: ref, ContentType: "text/plain", CommittedBytes: 200_000, Revision: 1, Final: true, Available: true}}}})
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(ts.logOf("big"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(f, `{"type":"ui-append","at":"2026-03-01T00:00:02.000Z","entries":[%s]}`+"\n", e)
	f.Close()
	fi, _ := os.Stat(ts.logOf("big"))
	url := ts.url + "/api/v2/conversations/big/artifacts/" + ref + "?offset=65536"
	read := func(b *testing.B) {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n != 65536 {
			b.Fatalf("%d, %d bytes", resp.StatusCode, n)
		}
	}
	b.Run("cold", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			ts.artifacts.mu.Lock()
			ts.artifacts.m = nil
			ts.artifacts.mu.Unlock()
			read(b)
		}
	})
	b.Run("cached", func(b *testing.B) {
		read(b)
		for b.Loop() {
			read(b)
		}
	})
}

// TestArtifactOnlyFromAcceptedEntries: the lookup reads the log by its
// rules (package history's reader), so a ref that only a rejected batch
// mentions is no entry's, and is refused like any stray file.
func TestArtifactOnlyFromAcceptedEntries(t *testing.T) {
	ts := newTestServer(t, Options{DataDir: t.TempDir()})
	conv, _, stray, _ := artifactFixture(t, ts, 1000)
	tool := transcript.Tool{InvocationID: "inv-2",
		Receipt: transcript.ToolReceipt{App: "shell", Summary: "cat", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "folio.shell", Version: 1, Revision: 1,
			Artifact: &transcript.Artifact{Ref: stray, ContentType: "text/plain", CommittedBytes: 1000, Revision: 1, Final: true, Available: true}}}
	raw, err := transcript.EncodeEntry(transcript.Entry{ID: "t2", Content: tool, Timestamp: tsAt(3)})
	if err != nil {
		t.Fatal(err)
	}
	// The batch repeats the ID u1, which the log already has: rejected whole.
	dup := `{"id":"u1","kind":"user","text":"again","at":"2026-03-04T05:06:08.000Z"}`
	f, err := os.OpenFile(ts.logOf(conv), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(agreeRec("ui-append", string(raw), dup) + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, err := history.ReadFile(ts.logOf(conv))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Document.Index("t2"); ok {
		t.Fatal("history accepted the batch; the test needs a rejected one")
	}
	url := ts.url + "/api/v2/conversations/" + conv + "/artifacts/" + stray
	if resp, b := getArtifact(t, url); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a ref only a rejected batch names: %d %s", resp.StatusCode, b)
	}
}

// Deleting a conversation from the data folder deletes its files too: its
// attachments and the artifacts its entries refer to; another artifact
// stays.
func TestDeleteRemovesAttachmentsAndArtifacts(t *testing.T) {
	ts := newTestServer(t, Options{DataDir: t.TempDir(), Token: testToken})
	conv, ref, stray, _ := artifactFixture(t, ts, 100)
	status, att, body := upload(t, ts, conv, "notes.txt", []byte("hello"))
	if status != http.StatusCreated {
		t.Fatalf("upload: %d %s", status, body)
	}
	attPath := filepath.Join(ts.data, "attachments", conv, att.ID)
	if b, err := os.ReadFile(attPath); err != nil || string(b) != "hello" {
		t.Fatalf("the upload is not where the data folder keeps it: %q %v", b, err)
	}
	if resp, body := authed(t, http.MethodDelete, ts.url+"/api/v2/conversations/"+conv, "", nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	for _, p := range []string{attPath, attPath + ".json", filepath.Join(ts.data, "artifacts", ref), ts.logOf(conv)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(filepath.Join(ts.data, "artifacts", stray)); err != nil {
		t.Errorf("an artifact no entry of the conversation refers to went too: %v", err)
	}
	if resp, _ := authed(t, http.MethodDelete, ts.url+"/api/v2/conversations/"+conv, "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("deleting it again: %d", resp.StatusCode)
	}
}

// An artifact of an entry written before a tab opened the conversation is
// found after the open, when the server follows the log from its page
// index (which knows the old entries by ID only) and the log has grown.
func TestArtifactOfAnOldEntryAfterAnOpen(t *testing.T) {
	ts := newTestServer(t, Options{DataDir: t.TempDir()})
	conv, ref, _, _ := artifactFixture(t, ts, 1000)
	l, err := history.Open(ts.logOf(conv))
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Document.Append(transcript.Entry{ID: "a2", Content: transcript.Agent{Markdown: "later"}, Timestamp: tsAt(3)})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	ws := ts.dial(t)
	ws.open(conv)
	// The log grows after the open, so the server follows it.
	l, err = history.Open(ts.logOf(conv))
	if err != nil {
		t.Fatal(err)
	}
	c, err = l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if d, err = c.Document.Append(transcript.Entry{ID: "a3", Content: transcript.Agent{Markdown: "even later"}, Timestamp: tsAt(4)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	ws.await(func(f frame) bool { return strings.Contains(string(f.raw), "even later") })
	url := ts.url + "/api/v2/conversations/" + conv + "/artifacts/" + ref
	if resp, b := getArtifact(t, url); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}
