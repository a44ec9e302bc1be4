package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/openai"
	"github.com/foliodev/folio/provider/providertest"
	"github.com/foliodev/folio/transcript"
)

// Every recorded stream, through the real OpenAI client on a loopback
// server, becomes the entries it should: answers and reasoning in their own
// entries, and a failure entry of the right class after whatever output
// came before it.
func TestFixtureStreamsToEntries(t *testing.T) {
	cases := []struct {
		fixture string
		kinds   string
		answer  string // the text of the first agent entry
		reason  string // the failure's class, if the turn fails
	}{
		{"openai_answer.sse", "user agent turn-receipt", "The folder has a README that says **hello**.", ""},
		{"openai_reasoning.sse", "user reasoning agent turn-receipt", "It is **4**.", ""},
		{"openai_midstream_error.sse", "user agent failure", "Partial answer before the failure", "provider"},
		{"openai_content_filter.sse", "user agent failure", "I can tell you ", "policy"},
		{"openai_truncated.sse", "user agent failure", "Cut off in the mid", "transport"},
		{"openai_stall.sse", "user agent failure", "Waiting for ", "timeout"},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/"+c.fixture))
			prov, err := openai.New(provider.Config{Name: "openai", Type: provider.TypeOpenAI, BaseURL: srv.URL,
				Model: "gpt-4o-mini", IdleTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
			eng := engine.New(store, prov, engine.WithBackoff(provider.Backoff{}))
			defer eng.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			eng.Send(ctx, "c1", "hi", nil)
			r, err := eng.Wait(ctx, "c1")
			if err != nil {
				t.Fatal(err)
			}
			es := store.Snapshot().Document.Entries()
			if got := kinds(es); got != c.kinds {
				t.Fatalf("entries %s, want %s (%s)", got, c.kinds, r.Reason)
			}
			for _, e := range es {
				if a, ok := e.Content.(transcript.Agent); ok {
					if a.Markdown != c.answer {
						t.Errorf("answer %q, want %q", a.Markdown, c.answer)
					}
					break
				}
			}
			if c.reason != "" {
				f := es[len(es)-1].Content.(transcript.Failure)
				if f.Reason != c.reason || r.State != engine.Failed {
					t.Errorf("failure %+v, state %s", f, r.State)
				}
			}
		})
	}
}
