package toolview

import (
	"errors"
	"strings"
	"testing"
)

func TestLegacyProjection(t *testing.T) {
	lines := []string{
		`{"schema_version":1,"placement":"request","contribution":{"schema":"shell","version":1,"payload":{"cmd":"ls"}}}`,
		`{"schema_version":1,"placement":"supplemental","contribution":{"key":"stats","schema":"stats","version":1,"payload":{"n":1}}}`,
		`{"schema_version":1,"placement":"progress","contribution":{"schema":"shell","version":1,"payload":{"out":"a"}}}`,
		`{"schema_version":1,"placement":"hidden","contribution":{"schema":"shell","version":1,"payload":{"secret":"h"}}}`,
		`{"schema_version":1,"contribution":{"schema":"shell","version":1,"payload":{"unplaced":true}}}`,
		`{"schema_version":1,"placement":"supplemental","contribution":{"schema":"nokey","version":1,"payload":{}}}`,
		`{"schema_version":1,"placement":"result","contribution":{"schema":"shell","version":1,"payload":{"out":"a\nb","code":0}}}`,
		`{"schema_version":1,"placement":"progress","contribution":"an old opaque string"}`,
		`{"schema_version":1,"placement":"supplemental","contribution":{"key":"stats","schema":"stats","version":1,"payload":{"n":2}}}`,
	}
	var envs []Envelope
	for i, l := range lines {
		e, err := DecodeEnvelope([]byte(l))
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		envs = append(envs, e)
	}
	p := ProjectLegacy(envs)
	if len(p.Items) != 2 {
		t.Fatalf("items = %+v", p.Items)
	}
	prim, stats := p.Items[0], p.Items[1]
	if prim.Key != "" || string(prim.Value.Payload) != `{"out":"a\nb","code":0}` || prim.Revision != 3 {
		t.Errorf("primary = %+v %s", prim, prim.Value.Payload)
	}
	if stats.Key != "stats" || string(stats.Value.Payload) != `{"n":2}` || stats.Revision != 2 {
		t.Errorf("supplemental = %+v %s", stats, stats.Value.Payload)
	}
	for _, it := range p.Items {
		for _, hidden := range []string{"secret", "unplaced", "nokey", "opaque"} {
			if strings.Contains(string(it.Value.Payload), hidden) || it.Value.Schema == hidden {
				t.Errorf("invisible contribution %q surfaced in %s", hidden, it.Key)
			}
		}
	}
	// The latest compatible contribution wins even if an incompatible one
	// comes after it.
	if len(ProjectLegacy(envs[:8]).Items) != 2 {
		t.Error("projection of a prefix lost an item")
	}
	if got := ProjectLegacy(nil); len(got.Items) != 0 {
		t.Errorf("empty projection: %+v", got)
	}
}

func TestLegacyDecodeErrors(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"version":   {`{"schema_version":2,"placement":"result"}`, "/schema_version"},
		"placement": {`{"schema_version":1,"placement":"sidebar"}`, "/placement"},
		"unknown":   {`{"schema_version":1,"placement":"result","extra":1}`, "extra"},
		"syntax":    {`{"schema_version":1,`, "EOF"},
		"duplicate": {`{"schema_version":1,"schema_version":1}`, "duplicate"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeEnvelope([]byte(tc.in))
			if !errors.Is(err, ErrInvalidEnvelope) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ErrInvalidEnvelope naming %q", err, tc.want)
			}
		})
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"placement":"result","contribution":{"schema":"s","version":1,"payload":{}}}`))
	f.Add([]byte(`{"schema_version":1,"placement":"supplemental","contribution":{"key":"k","schema":"s","version":1,"payload":[]}}`))
	f.Add([]byte(`{"schema_version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEnvelope(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidEnvelope) {
				t.Fatalf("error does not wrap ErrInvalidEnvelope: %v", err)
			}
			return
		}
		p := ProjectLegacy([]Envelope{e, e})
		for _, it := range p.Items {
			if it.Value == nil || it.Revision != 2 {
				t.Fatalf("projected item %+v", it)
			}
		}
	})
}
