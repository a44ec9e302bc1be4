package anthropic

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/providertest"
)

type roundTripper struct{ body []byte }

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: readCloser{bytes.NewReader(r.body)}, Request: req}, nil
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// FuzzStream feeds arbitrary bytes to the client as an SSE body: no panic,
// every failure classified, and a normal end follows the event contract.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"thinking_tools.sse", "redacted_thinking.sse", "error_event.sse", "refusal.sse"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := New(provider.Config{Name: "anthropic", Model: "m", BaseURL: "http://127.0.0.1:1", APIKey: "k", Transport: roundTripper{body}})
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

// BenchmarkStreamParse measures the Anthropic client's cost per event for a
// stream of one-token text deltas.
func BenchmarkStreamParse(b *testing.B) {
	var sse bytes.Buffer
	sse.WriteString(`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}` + "\n\n")
	sse.WriteString(`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
	for range 1000 {
		sse.WriteString(`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" token"}}` + "\n\n")
	}
	sse.WriteString(`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n")
	sse.WriteString(`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1000}}` + "\n\n")
	sse.WriteString(`event: message_stop` + "\n" + `data: {"type":"message_stop"}` + "\n\n")
	p, err := New(provider.Config{Name: "anthropic", Model: "m", BaseURL: "http://127.0.0.1:1", APIKey: "k", Transport: roundTripper{sse.Bytes()}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		s, err := p.Stream(context.Background(), hello)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Next(); err != nil {
				break
			}
			events++
		}
		s.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
