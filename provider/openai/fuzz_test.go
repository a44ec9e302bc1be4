package openai

import (
	"context"
	"os"
	"testing"

	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/providertest"
)

// FuzzStream feeds arbitrary bytes to the client as an SSE body. Whatever
// arrives, the client must not panic, must end with io.EOF or an *Error,
// and a stream that ends normally must follow the event contract.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"tools_parallel.sse", "reasoning_field.sse", "midstream_error.sse", "ollama_tools.sse", "bad_arguments.sse"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := New(provider.Config{Name: "openai", Model: "m", BaseURL: "http://127.0.0.1:1/v1", Transport: roundTripper{body}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Stream(context.Background(), hello)
		if err != nil {
			if provider.AsError(err) == nil {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		evs, err := providertest.Collect(s)
		if err != nil && provider.AsError(err) == nil {
			t.Fatalf("unclassified error %T %v", err, err)
		}
		if cerr := providertest.Check(evs, err == nil); cerr != nil {
			t.Fatalf("%v in %q", cerr, providertest.Summary(evs))
		}
	})
}
