package toolview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
)

func TestRevisionsAreMonotonicAndRejectionsCounted(t *testing.T) {
	h := New(WithCadence(0))
	inv := mustOpen(t, h, Spec{ID: "call-1", Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()

	var last Revision
	for i := 1; i <= 128; i++ {
		pl := text(fmt.Sprint("frame ", i))
		pl.Revision = Revision(i * 3)
		rev, err := p.Replace(pl)
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if rev <= last {
			t.Fatalf("update %d: revision %d not above %d", i, rev, last)
		}
		last = rev
	}

	stale := text("stale")
	stale.Revision = last - 1
	if _, err := p.Replace(stale); rejectReason(t, err) != ReasonStale {
		t.Fatalf("stale update: got %v", err)
	}
	dup := text("duplicate")
	dup.Revision = last
	if _, err := p.Replace(dup); rejectReason(t, err) != ReasonStale {
		t.Fatalf("duplicate revision: got %v", err)
	}
	big := Payload{Schema: schemaText, Version: 1, Data: []byte(`"` + strings.Repeat("x", DefaultPayloadLimit) + `"`)}
	_, err := p.Replace(big)
	if rejectReason(t, err) != ReasonOversized {
		t.Fatalf("oversized update: got %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(DefaultPayloadLimit)) {
		t.Errorf("oversized error %q does not name the bound", err)
	}

	// A host-assigned revision continues above the last.
	rev, err := p.Replace(text("last"))
	if err != nil || rev != last+1 {
		t.Fatalf("host-assigned revision = %d, %v; want %d", rev, err, last+1)
	}
	rec, err := inv.Close(Outcome{Status: transcript.ToolOK}, Result{Text: "done"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Replace(text("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("update after closure: got %v", err)
	}

	if rec.Presentation == nil || rec.Presentation.Revision != int64(last+1) || string(rec.Presentation.Payload) != `{"text":"last"}` {
		t.Fatalf("retained checkpoint = %+v", rec.Presentation)
	}
	m := h.Metrics()
	if m.Accepted != 129 {
		t.Errorf("accepted = %d, want 129", m.Accepted)
	}
	want := map[string]int64{"stale": 2, "oversized": 1, "closed": 1}
	for reason, n := range want {
		if m.Rejected[reason] != n {
			t.Errorf("rejected[%s] = %d, want %d", reason, m.Rejected[reason], n)
		}
	}
	var sb strings.Builder
	if err := m.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"folio_toolview_updates_accepted_total 129",
		`folio_toolview_updates_rejected_total{reason="stale"} 2`,
		`folio_toolview_updates_rejected_total{reason="oversized"} 1`,
		`folio_toolview_updates_rejected_total{reason="closed"} 1`,
	} {
		if !strings.Contains(sb.String(), line+"\n") {
			t.Errorf("metrics text lacks %q", line)
		}
	}
	if len(rec.Diagnostics) != 2 {
		t.Errorf("record diagnostics = %v, want stale and oversized", rec.Diagnostics)
	}
}

func TestSupplementalsAreRevisionedIndependently(t *testing.T) {
	h := New(WithCadence(0))
	rec := record(h)
	inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()
	logs := inv.Supplemental("logs")
	if inv.Supplemental("logs") != logs {
		t.Fatal("the same key gave a second handle")
	}
	for i := 1; i <= 5; i++ {
		if rev, err := p.Replace(text(fmt.Sprint("p", i))); err != nil || rev != Revision(i) {
			t.Fatalf("primary %d: rev %d, %v", i, rev, err)
		}
	}
	for i := 1; i <= 2; i++ {
		if rev, err := logs.Replace(text(fmt.Sprint("l", i))); err != nil || rev != Revision(i) {
			t.Fatalf("supplemental %d: rev %d, %v", i, rev, err)
		}
	}
	// A stale revision on one item says nothing about the other.
	stale := text("s")
	stale.Revision = 3
	if _, err := logs.Replace(stale); err != nil {
		t.Fatalf("supplemental revision 3 after 2 was refused: %v", err)
	}
	if _, err := p.Replace(stale); rejectReason(t, err) != ReasonStale {
		t.Fatalf("primary revision 3 after 5 was accepted: %v", err)
	}
	if bad := inv.Supplemental(""); bad != nil {
		if _, err := bad.Replace(text("x")); err == nil {
			t.Fatal("an empty supplemental key accepted an update")
		}
	}
	r, _ := inv.Close(Outcome{}, Result{})
	if len(r.Supplementals) != 1 || r.Supplementals[0].Key != "logs" || r.Supplementals[0].Presentation.Revision != 3 {
		t.Fatalf("supplementals = %+v", r.Supplementals)
	}
	if r.Presentation.Revision != 5 {
		t.Fatalf("primary revision = %d", r.Presentation.Revision)
	}
	var prim, supp int
	for _, c := range rec.all() {
		if c.Open && c.Item == "" {
			prim++
		}
		if c.Open && c.Item == "logs" {
			supp++
		}
	}
	if prim != 5 || supp != 3 {
		t.Fatalf("live changes: %d primary, %d supplemental; want 5 and 3", prim, supp)
	}
}

func TestUndeclaredSchemaRejected(t *testing.T) {
	h := New(WithCadence(0))
	inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
	for _, pl := range []Payload{
		{Schema: "other", Version: 1, Data: []byte(`{}`)},
		{Schema: schemaText, Version: 2, Data: []byte(`{}`)},
	} {
		if _, err := inv.Presentation().Replace(pl); rejectReason(t, err) != ReasonSchema {
			t.Errorf("%s v%d: got %v", pl.Schema, pl.Version, err)
		}
	}
	if _, err := inv.Presentation().Replace(Payload{Schema: schemaText, Version: 1, Data: []byte(`{"a":`)}); rejectReason(t, err) != ReasonMalformed {
		t.Errorf("malformed payload: got %v", err)
	}
	noProducer := mustOpen(t, h, Spec{Tool: "builtin"})
	if _, err := noProducer.Presentation().Replace(text("x")); rejectReason(t, err) != ReasonSchema {
		t.Errorf("producer without manifest: got %v", err)
	}
}

func TestClosedIsAbsorbing(t *testing.T) {
	h := New(WithCadence(0))
	rec := record(h)
	inv := mustOpen(t, h, Spec{ID: "abs", Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()
	for i := 1; i <= 3; i++ {
		if _, err := p.Replace(text(fmt.Sprint("v", i))); err != nil {
			t.Fatal(err)
		}
	}
	first, err := inv.Close(Outcome{Status: transcript.ToolOK}, Result{Text: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	before := len(rec.all())

	late := []Payload{text("v3"), text("v2"), text("v99")}
	late[0].Revision, late[1].Revision, late[2].Revision = 3, 2, 99
	for _, pl := range late {
		if _, err := p.Replace(pl); !errors.Is(err, ErrClosed) {
			t.Errorf("delivery rev %d after closure: %v", pl.Revision, err)
		}
	}
	if _, err := inv.Supplemental("new").Replace(text("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("new supplemental after closure: %v", err)
	}
	if err := p.Flush(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("flush after closure: %v", err)
	}
	again, err := inv.Close(Outcome{Status: transcript.ToolFailed}, Result{Text: "other"})
	if !errors.Is(err, ErrClosed) {
		t.Errorf("second close: %v", err)
	}
	ran := false
	third := inv.Invoke(context.Background(), []byte(`{"text":"x"}`), func(context.Context, *Invocation, []byte) (Result, error) {
		ran = true
		return Result{}, nil
	})
	if ran {
		t.Error("Invoke ran the tool after closure")
	}
	for _, r := range []Record{again, third} {
		if r.End != first.End || r.Duration != first.Duration || r.Outcome != first.Outcome || r.Result != first.Result ||
			string(r.Presentation.Payload) != `{"text":"v3"}` {
			t.Errorf("record changed after closure: %+v", r)
		}
	}
	if n := len(rec.all()); n != before {
		t.Errorf("%d changes published after closure", n-before)
	}
	st, err := attach(h, "abs")
	if err != nil || st.Open || st.Duration != first.Duration {
		t.Fatalf("attach after closure: %+v, %v", st, err)
	}
	if it, _ := st.Item(""); it.Revision != 3 {
		t.Fatalf("attach revision %d, want 3", it.Revision)
	}
}

func TestReturningFromToolCloses(t *testing.T) {
	h := New(WithCadence(0))
	rec := record(h)
	m := testManifest(t)
	var seen []byte
	r, err := h.Run(context.Background(), Spec{ID: "run", Tool: "echo", Producer: m}, []byte(`{"text":"hi"}`),
		func(ctx context.Context, inv *Invocation, args []byte) (Result, error) {
			seen = args
			if _, err := inv.Presentation().Replace(text("working")); err != nil {
				return Result{}, err
			}
			return Result{Text: "said hi"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if string(seen) != `{"text":"hi"}` || r.Outcome.Status != transcript.ToolOK || r.Result.Text != "said hi" {
		t.Fatalf("record %+v, args %s", r, seen)
	}
	all := rec.all()
	if last := all[len(all)-1]; last.Open || last.Record == nil {
		t.Fatalf("last change %+v is not the closure", last)
	}

	cases := []struct {
		name   string
		args   string
		fn     ToolFunc
		reason string
	}{
		{"error", `{"text":"x"}`, func(context.Context, *Invocation, []byte) (Result, error) { return Result{}, errors.New("boom") }, "error"},
		{"panic", `{"text":"x"}`, func(context.Context, *Invocation, []byte) (Result, error) { panic("boom") }, "panicked"},
		{"canceled", `{"text":"x"}`, func(context.Context, *Invocation, []byte) (Result, error) { return Result{}, context.Canceled }, "canceled"},
		{"invalid arguments", `{"txt":1}`, func(context.Context, *Invocation, []byte) (Result, error) {
			t.Error("tool ran with invalid arguments")
			return Result{}, nil
		}, "invalid_arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := h.Run(context.Background(), Spec{Tool: "echo", Producer: m}, []byte(tc.args), tc.fn)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome.Status != transcript.ToolFailed || r.Outcome.Reason != tc.reason || !r.Result.IsError {
				t.Fatalf("record = %+v", r)
			}
		})
	}
}

func TestHostTeardownCloses(t *testing.T) {
	h := New(WithCadence(0))
	inv := mustOpen(t, h, Spec{ID: "td", Tool: "echo", Producer: testManifest(t)})
	if _, err := inv.Presentation().Replace(text("running")); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	release := make(chan struct{})
	done := make(chan Record)
	go func() {
		done <- inv.Invoke(context.Background(), []byte(`{"text":"x"}`), func(ctx context.Context, inv *Invocation, _ []byte) (Result, error) {
			close(started)
			<-release
			_, err := inv.Presentation().Replace(text("after teardown"))
			if !errors.Is(err, ErrClosed) {
				t.Errorf("update after teardown: %v", err)
			}
			return Result{Text: "late"}, nil
		})
	}()
	<-started
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := attach(h, "td")
	if err != nil || st.Open || st.Outcome.Reason != "host_shutdown" {
		t.Fatalf("after teardown: %+v, %v", st, err)
	}
	close(release)
	r := <-done
	if r.Outcome.Reason != "host_shutdown" || string(r.Presentation.Payload) != `{"text":"running"}` {
		t.Fatalf("the tool's return replaced the teardown record: %+v", r)
	}
	if _, err := h.Open(Spec{Tool: "echo"}); !errors.Is(err, ErrHostClosed) {
		t.Fatalf("open after teardown: %v", err)
	}
}

func TestInspectOpenAndUnknown(t *testing.T) {
	h := New(WithCadence(0), withGeneration(7))
	inv := mustOpen(t, h, Spec{ID: "a", Tool: "echo", Producer: testManifest(t)})
	if _, err := inv.Presentation().Replace(text("now")); err != nil {
		t.Fatal(err)
	}
	st, err := attach(h, "a")
	if err != nil {
		t.Fatal(err)
	}
	it, _ := st.Item("")
	if !st.Open || st.Generation != 7 || it.Revision != 1 || string(it.Value.Payload) != `{"text":"now"}` {
		t.Fatalf("attach = %+v", st)
	}
	if _, err := attach(h, "missing"); !errors.Is(err, ErrUnknownInvocation) {
		t.Fatalf("attach unknown: %v", err)
	}
	if _, err := h.Open(Spec{ID: "a", Tool: "echo"}); !errors.Is(err, ErrDuplicateInvocation) {
		t.Fatalf("duplicate open: %v", err)
	}
	inv.Close(Outcome{}, Result{})
	if err := h.Release("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := attach(h, "a"); !errors.Is(err, ErrUnknownInvocation) {
		t.Fatalf("attach after release: %v", err)
	}
}

func TestKeepClosedBound(t *testing.T) {
	h := New(WithCadence(0), withKeepClosed(2))
	for i := range 3 {
		inv := mustOpen(t, h, Spec{ID: fmt.Sprint("k", i), Tool: "echo"})
		inv.Close(Outcome{}, Result{})
	}
	if _, err := attach(h, "k0"); !errors.Is(err, ErrUnknownInvocation) {
		t.Fatalf("oldest closed invocation still held: %v", err)
	}
	if _, err := attach(h, "k2"); err != nil {
		t.Fatal(err)
	}
}

var _ = time.Second
