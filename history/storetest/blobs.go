package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// The blob tests: attachments and artifacts stored, refused, deleted with
// their conversation, and raced.

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// artifactRef is the ref the blob tests' tool entry refers to.
const artifactRef = "0123456789abcdef0123456789abcdef"

// withArtifact makes conversation id with a tool entry whose presentation
// refers to artifactRef, as a tool's retained checkpoint does (the data
// folder knows a conversation's artifacts from its log).
func withArtifact(t *testing.T, s history.Store, id string) {
	t.Helper()
	l, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tool := transcript.Entry{ID: "t1", Timestamp: t0, Content: transcript.Tool{
		Receipt: transcript.ToolReceipt{App: "shell", Summary: "ran", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "folio.output", Version: 1, Revision: 1,
			Artifact: &transcript.Artifact{Ref: artifactRef, ContentType: "text/plain", CommittedBytes: 5, Revision: 1, Final: true, Available: true}},
	}}
	if err := l.SaveEntries([]transcript.Entry{user("u1", "run it"), tool}, msgs("run it")); err != nil {
		t.Fatal(err)
	}
}

func getBlob(t *testing.T, s history.Store, id string, kind history.BlobKind, name string) (history.Blob, []byte) {
	t.Helper()
	b, data, err := s.GetBlob(id, kind, name)
	if err != nil {
		t.Fatalf("get %s %s: %v", kind, name, err)
	}
	return b, data
}

// testBlobs: put, get, list and delete of attachments and artifacts; a put
// of the same bytes changes nothing, other bytes under a stored name are
// refused, and bytes two names share survive the deletion of one.
func testBlobs(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	withArtifact(t, s, id)
	att := []byte("hello, attachment\n")
	meta := []byte(`{"id":"a-1","name":"notes.txt"}`)
	b, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: meta}, att)
	if err != nil {
		t.Fatal(err)
	}
	if b.Digest != history.Digest(att) || b.Size != int64(len(att)) {
		t.Fatalf("put returned %+v", b)
	}
	got, data := getBlob(t, s, id, history.BlobAttachment, "a-1")
	if !bytes.Equal(data, att) || got.Digest != b.Digest || got.Size != b.Size || !bytes.Equal(got.Meta, meta) {
		t.Fatalf("got %+v %q", got, data)
	}
	// Idempotent: the same bytes again, even with the digest given.
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Digest: b.Digest, Meta: meta}, att); err != nil {
		t.Fatalf("the same put again: %v", err)
	}
	// Other bytes under the name: refused, the stored ones kept.
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: meta}, []byte("other")); !errors.Is(err, history.ErrBlobConflict) {
		t.Fatalf("other bytes under a stored name: %v", err)
	}
	if _, data := getBlob(t, s, id, history.BlobAttachment, "a-1"); !bytes.Equal(data, att) {
		t.Fatalf("after a refused put: %q", data)
	}
	// The same bytes under a second name, and an artifact.
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-2", Meta: meta}, att); err != nil {
		t.Fatal(err)
	}
	art := bytes.Repeat([]byte("output "), 1000)
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobArtifact, Name: artifactRef}, art); err != nil {
		t.Fatal(err)
	}
	if _, data := getBlob(t, s, id, history.BlobArtifact, artifactRef); !bytes.Equal(data, art) {
		t.Fatalf("artifact read back: %d bytes, want %d", len(data), len(art))
	}
	list, err := s.ListBlobs(id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range list {
		names = append(names, fmt.Sprintf("%s/%s/%d/%s", b.Kind, b.Name, b.Size, b.Digest[:8]))
	}
	want := []string{
		fmt.Sprintf("artifact/%s/%d/%s", artifactRef, len(art), history.Digest(art)[:8]),
		fmt.Sprintf("attachment/a-1/%d/%s", len(att), history.Digest(att)[:8]),
		fmt.Sprintf("attachment/a-2/%d/%s", len(att), history.Digest(att)[:8]),
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("listed\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	// Deleting one name keeps the bytes the other still names.
	if err := s.DeleteBlob(id, history.BlobAttachment, "a-1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetBlob(id, history.BlobAttachment, "a-1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a deleted blob reads: %v", err)
	}
	if _, data := getBlob(t, s, id, history.BlobAttachment, "a-2"); !bytes.Equal(data, att) {
		t.Fatalf("the second name lost its bytes: %q", data)
	}
	if err := s.DeleteBlob(id, history.BlobAttachment, "a-1"); err != nil {
		t.Fatalf("deleting a missing blob: %v", err)
	}
	// And the name can hold other bytes once it is free again.
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: meta}, []byte("new")); err != nil {
		t.Fatalf("put after delete: %v", err)
	}
}

// testBlobsRefused: hostile puts and reads get clear errors and store
// nothing.
func testBlobsRefused(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	withArtifact(t, s, id)
	a := func(name string) history.Blob {
		return history.Blob{Kind: history.BlobAttachment, Name: name, Meta: []byte("{}")}
	}
	cases := []struct {
		name string
		b    history.Blob
		data []byte
		want error
		says string
	}{
		{"oversize attachment", a("a-big"), make([]byte, history.MaxAttachmentBytes+1), history.ErrBlobTooLarge, fmt.Sprint(history.MaxAttachmentBytes)},
		{"oversize artifact", history.Blob{Kind: history.BlobArtifact, Name: artifactRef}, make([]byte, history.MaxArtifactBytes+1), history.ErrBlobTooLarge, fmt.Sprint(history.MaxArtifactBytes)},
		{"path traversal", a("../../etc/passwd"), []byte("x"), history.ErrBlobName, "passwd"},
		{"separator", a("a/b"), []byte("x"), history.ErrBlobName, "a/b"},
		{"hidden", a(".a"), []byte("x"), history.ErrBlobName, ".a"},
		{"empty name", a(""), []byte("x"), history.ErrBlobName, "attachment"},
		{"NUL", a("a\x00b"), []byte("x"), history.ErrBlobName, "attachment"},
		{"artifact not hex", history.Blob{Kind: history.BlobArtifact, Name: "../" + artifactRef[3:]}, []byte("x"), history.ErrBlobName, "32 lowercase hex"},
		{"unknown kind", history.Blob{Kind: "secret", Name: "a-1"}, []byte("x"), history.ErrBlobName, "secret"},
		{"attachment without description", history.Blob{Kind: history.BlobAttachment, Name: "a-1"}, []byte("x"), history.ErrBlobMeta, "a-1"},
		{"wrong digest", history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: []byte("{}"), Digest: history.Digest([]byte("y"))}, []byte("x"), history.ErrBlobDigest, history.Digest([]byte("x"))},
	}
	for _, tc := range cases {
		_, err := s.PutBlob(id, tc.b, tc.data)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: put says %v, want %v mentioning %q", tc.name, err, tc.want, tc.says)
		}
		if tc.want != history.ErrBlobName {
			if _, _, err := s.GetBlob(id, tc.b.Kind, tc.b.Name); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: a refused put left something: %v", tc.name, err)
			}
		} else if _, _, err := s.GetBlob(id, tc.b.Kind, tc.b.Name); !errors.Is(err, history.ErrBlobName) {
			t.Errorf("%s: get says %v, want %v", tc.name, err, history.ErrBlobName)
		}
	}
	if _, _, err := s.GetBlob(id, history.BlobAttachment, "a-unknown"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "a-unknown") {
		t.Errorf("unknown name: %v", err)
	}
	if _, _, err := s.GetBlob(id, history.BlobArtifact, strings.Repeat("f", 32)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unknown artifact: %v", err)
	}
	if err := s.DeleteBlob(id, history.BlobAttachment, "../x"); !errors.Is(err, history.ErrBlobName) {
		t.Errorf("delete of a bad name: %v", err)
	}
	if _, err := s.PutBlob(uniqueID(t)+"-none", a("a-1"), []byte("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("put to a conversation that does not exist: %v", err)
	}
	if _, err := s.PutBlob("../escape", a("a-1"), []byte("x")); err == nil {
		t.Error("put to a conversation id that is a path: no error")
	}
}

// testBlobsDeleted: deleting a conversation deletes its blobs.
func testBlobsDeleted(t *testing.T, h Harness) {
	s := newStore(t, h)
	id, other := uniqueID(t), uniqueID(t)+"-other"
	withArtifact(t, s, id)
	withArtifact(t, s, other)
	for _, c := range []string{id, other} {
		if _, err := s.PutBlob(c, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: []byte("{}")}, []byte("att "+c)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobArtifact, Name: artifactRef}, []byte("art")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		kind history.BlobKind
		name string
	}{{history.BlobAttachment, "a-1"}, {history.BlobArtifact, artifactRef}} {
		if _, _, err := s.GetBlob(id, k.kind, k.name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s %s after the conversation was deleted: %v", k.kind, k.name, err)
		}
	}
	if list, err := s.ListBlobs(id); err != nil || len(list) != 0 {
		t.Errorf("blobs listed after delete: %v %v", list, err)
	}
	if _, data := getBlob(t, s, other, history.BlobAttachment, "a-1"); string(data) != "att "+other {
		t.Errorf("another conversation's attachment: %q", data)
	}
}

// testBlobsRacing: puts racing for one name: the same bytes all succeed;
// different bytes, exactly one wins and the others are refused as
// conflicts, and the name holds the winner's bytes.
func testBlobsRacing(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	withArtifact(t, s, id)
	const n = 8
	race := func(name string, data func(i int) []byte) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: name, Meta: []byte("{}")}, data(i))
			}()
		}
		wg.Wait()
		return errs
	}
	for i, err := range race("a-same", func(int) []byte { return []byte("same bytes") }) {
		if err != nil {
			t.Errorf("put %d of the same bytes: %v", i, err)
		}
	}
	winner := -1
	for i, err := range race("a-differ", func(i int) []byte { return []byte(fmt.Sprintf("bytes %d", i)) }) {
		switch {
		case err == nil && winner < 0:
			winner = i
		case err == nil:
			t.Errorf("puts %d and %d of different bytes both succeeded", winner, i)
		case !errors.Is(err, history.ErrBlobConflict):
			t.Errorf("put %d: %v, want a conflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no put won")
	}
	if _, data := getBlob(t, s, id, history.BlobAttachment, "a-differ"); string(data) != fmt.Sprintf("bytes %d", winner) {
		t.Fatalf("the name holds %q, the winner put %q", data, fmt.Sprintf("bytes %d", winner))
	}
}
