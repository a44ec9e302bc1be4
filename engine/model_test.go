package engine_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/openai"
	"github.com/foliodev/folio/provider/providertest"
	"github.com/foliodev/folio/transcript"
)

// A send with a model switches the provider and model for its own turn
// and every later one; the turn before it keeps the model it had.
func TestSendWithModelSwitchesLaterTurns(t *testing.T) {
	answer := providertest.Fixture(t, "testdata/openai_answer.sse")
	srvA, srvB := providertest.NewServer(t, answer), providertest.NewServer(t, answer)
	client := func(url, model string) provider.Provider {
		p, err := openai.New(provider.Config{Name: "openai", Type: provider.TypeOpenAI, BaseURL: url, Model: model,
			IdleTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, client(srvA.URL, "model-a"), engine.WithModel("model-a"), engine.WithBackoff(provider.Backoff{}))
	defer eng.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	if _, err := eng.Send(ctx, "k1", "first", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.SendWithModel(ctx, "k2", "second", nil, engine.ModelChoice{Provider: client(srvB.URL, "model-b"), Model: "model-b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "k3", "third", nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"k1", "k2", "k3"} {
		if r, err := eng.Wait(ctx, id); err != nil || r.State != engine.Done {
			t.Fatalf("%s: %+v %v", id, r, err)
		}
	}
	a, b := srvA.Requests(), srvB.Requests()
	if len(a) != 1 || len(b) != 2 {
		t.Fatalf("requests: %d to A, %d to B; want 1 and 2", len(a), len(b))
	}
	if !bytes.Contains(a[0], []byte(`"model-a"`)) {
		t.Errorf("the first turn asked %s, want model-a", a[0])
	}
	for i, body := range b {
		if !bytes.Contains(body, []byte(`"model-b"`)) {
			t.Errorf("request %d to B asked %s, want model-b", i, body)
		}
	}
	if got := eng.Model(); got != "model-b" {
		t.Errorf("Model() = %q, want model-b", got)
	}
}

// SetModel switches an idle engine at once; while a turn runs it refuses,
// so a running turn never changes model halfway.
func TestSetModelOnlyWhenIdle(t *testing.T) {
	answer := providertest.Fixture(t, "testdata/openai_answer.sse")
	stall := providertest.Fixture(t, "testdata/openai_stall.sse")
	srvA, srvB := providertest.NewServer(t, stall), providertest.NewServer(t, answer)
	client := func(url string) provider.Provider {
		p, err := openai.New(provider.Config{Name: "openai", Type: provider.TypeOpenAI, BaseURL: url, Model: "m", IdleTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, client(srvA.URL), engine.WithModel("model-a"), engine.WithBackoff(provider.Backoff{}))
	defer eng.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b := engine.ModelChoice{Provider: client(srvB.URL), Model: "model-b"}

	if _, err := eng.Send(ctx, "k1", "stalls", nil); err != nil {
		t.Fatal(err)
	}
	// Queued or already running: either way a turn is on its way.
	if err := eng.SetModel(b); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("SetModel while a turn runs: %v, want ErrBusy", err)
	}
	if got := eng.Model(); got != "model-a" {
		t.Fatalf("a refused switch changed the model to %q", got)
	}
	for !eng.Stop() { // the turn may not have started yet: wait for the next change
		select {
		case <-eng.Changed():
		case <-ctx.Done():
			t.Fatal("the turn never started")
		}
	}
	if _, err := eng.Wait(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if err := eng.SetModel(b); err != nil {
		t.Fatalf("SetModel when idle: %v", err)
	}
	eng.Send(ctx, "k2", "answers", nil)
	if r, err := eng.Wait(ctx, "k2"); err != nil || r.State != engine.Done {
		t.Fatalf("k2: %+v %v", r, err)
	}
	if reqs := srvB.Requests(); len(reqs) != 1 || !bytes.Contains(reqs[0], []byte(`"model-b"`)) {
		t.Fatalf("after the switch B got %d requests", len(reqs))
	}
	if got := eng.Model(); got != "model-b" {
		t.Errorf("Model() = %q", got)
	}
}
