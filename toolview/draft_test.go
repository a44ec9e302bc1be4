package toolview

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func draftText(t *testing.T, h *Host, id string) (string, bool) {
	t.Helper()
	st, err := attach(h, id)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := st.Item("")
	if it.Value == nil {
		return "", false
	}
	if !it.Value.Draft || it.Value.Schema != schemaDraft {
		t.Fatalf("primary value is not a host draft: %+v", it.Value)
	}
	return string(it.Value.Payload), true
}

func TestDraftGapsForceCheckpointAndNeverReachInvocation(t *testing.T) {
	const secret = "DRAFT-ONLY-4242"
	h := New(WithCadence(0))
	inv := mustOpen(t, h, Spec{ID: "d", Tool: "echo", Producer: testManifest(t)})
	d := inv.Draft()

	frags := []string{`{"te`, `xt":"`, secret, `é`}
	var off int64
	for _, f := range frags {
		if err := d.Append(off, []byte(f)); err != nil {
			t.Fatalf("append at %d: %v", off, err)
		}
		off += int64(len(f))
	}
	got, _ := draftText(t, h, "d")
	if want := `{"text":"{\"text\":\"` + secret + `é","bytes":` + itoa(off) + `,"truncated":false}`; got != want {
		t.Fatalf("draft = %s\nwant    %s", got, want)
	}

	// A fragment that skips bytes is a gap: rejected, and so is everything
	// after it until a checkpoint.
	if err := d.Append(off+5, []byte("x")); rejectReason(t, err) != ReasonDraftGap {
		t.Fatalf("gap: %v", err)
	}
	if err := d.Append(off, []byte("x")); rejectReason(t, err) != ReasonDraftGap {
		t.Fatalf("contiguous append after a gap: %v", err)
	}
	full := `{"text":"` + secret + `é more`
	if err := d.Checkpoint([]byte(full), int64(len(full)), false); err != nil {
		t.Fatal(err)
	}
	if err := d.Append(int64(len(full)), []byte(`"`)); err != nil {
		t.Fatalf("append after checkpoint: %v", err)
	}

	// Truncation: only checkpoints continue.
	if err := d.Checkpoint([]byte(`{"text":"head`), 5000, true); err != nil {
		t.Fatal(err)
	}
	if err := d.Append(5000, []byte("x")); rejectReason(t, err) != ReasonDraftTruncated {
		t.Fatalf("append after truncation: %v", err)
	}
	if err := d.Checkpoint([]byte(`{"text":"head2`), 6000, true); err != nil {
		t.Fatalf("checkpoint after truncation: %v", err)
	}
	if got, _ := draftText(t, h, "d"); !strings.Contains(got, `"truncated":true`) || !strings.Contains(got, `"bytes":6000`) {
		t.Fatalf("truncated draft = %s", got)
	}

	// The tool sees only the complete, validated arguments.
	complete := []byte(`{"text":"final"}`)
	var seen []byte
	rec := inv.Invoke(context.Background(), complete, func(_ context.Context, inv *Invocation, args []byte) (Result, error) {
		seen = args
		return Result{Text: "ok"}, nil
	})
	if !bytes.Equal(seen, complete) || bytes.Contains(seen, []byte(secret)) {
		t.Fatalf("tool saw %s", seen)
	}
	if err := d.Append(6000, []byte("x")); !errors.Is(err, ErrDraftFinished) && !errors.Is(err, ErrClosed) {
		t.Fatalf("draft after invocation: %v", err)
	}
	// A draft is observation data: it is never the retained checkpoint.
	if rec.Presentation != nil {
		t.Fatalf("draft retained at closure: %+v", rec.Presentation)
	}
}

func TestDraftWithoutAdapterKeepsNoBytes(t *testing.T) {
	m, err := NewManifest("plain", []ToolDecl{{Name: "echo", InputSchema: []byte(`{}`)}}, []AdapterDecl{{Schema: schemaText, Version: 1}})
	if err != nil {
		t.Fatal(err)
	}
	h := New(WithCadence(0))
	rec := record(h)
	inv := mustOpen(t, h, Spec{ID: "n", Tool: "echo", Producer: m})
	if err := inv.Draft().Append(0, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if len(rec.all()) != 0 || inv.draft.text != nil {
		t.Fatalf("a draft nobody displays was kept or published")
	}
	if err := inv.Draft().Append(3, nil); rejectReason(t, err) != ReasonDraftGap {
		t.Fatalf("offsets are still checked: %v", err)
	}
}

func TestDraftBoundedAndRuneSafe(t *testing.T) {
	h := New(WithCadence(0), WithPayloadLimit(256))
	inv := mustOpen(t, h, Spec{ID: "b", Tool: "echo", Producer: testManifest(t)})
	d := inv.Draft()
	// "é" is two bytes; the first fragment ends inside it.
	if err := d.Append(0, []byte{'a', 0xc3}); err != nil {
		t.Fatal(err)
	}
	if got, _ := draftText(t, h, "b"); got != `{"text":"a","bytes":2,"truncated":false}` {
		t.Fatalf("partial rune shown: %s", got)
	}
	if err := d.Append(2, []byte{0xa9}); err != nil {
		t.Fatal(err)
	}
	if got, _ := draftText(t, h, "b"); got != `{"text":"aé","bytes":3,"truncated":false}` {
		t.Fatalf("completed rune: %s", got)
	}
	if err := d.Append(3, []byte(strings.Repeat("z", 400))); err != nil {
		t.Fatal(err)
	}
	got, _ := draftText(t, h, "b")
	if len(got) > 256 || !strings.Contains(got, `"truncated":true`) || !strings.Contains(got, `"bytes":403`) {
		t.Fatalf("overlong draft: %d bytes: %s", len(got), got)
	}
	if err := d.Append(403, []byte("z")); rejectReason(t, err) != ReasonDraftTruncated {
		t.Fatalf("append after the host truncated: %v", err)
	}
}

func itoa(n int64) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
