package transcript

import (
	"strings"
	"testing"
)

func TestToolSupplementalsValidated(t *testing.T) {
	const head = `{"id":"t","content":{"kind":"tool","receipt":{"app":"a","summary":"s","status":"ok"},`
	const tail = `},"timestamp":"2026-01-01T00:00:00.000Z"}`
	good := head + `"supplementals":[{"key":"stats","presentation":{"schema":"s","version":1,"revision":2,"payload":{"n":1}}}]` + tail
	e, err := DecodeEntry([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Content.(Tool).Supplementals; len(got) != 1 || got[0].Key != "stats" || got[0].Presentation.Revision != 2 {
		t.Fatalf("supplementals = %+v", got)
	}
	b, err := EncodeEntry(e)
	if err != nil || string(b) != good {
		t.Fatalf("round trip:\n%s\n%s (%v)", b, good, err)
	}
	for name, tc := range map[string]struct{ in, ptr string }{
		"empty key":     {`"supplementals":[{"key":"","presentation":{"schema":"s","version":1,"revision":1}}]` + tail, "/content/supplementals/0/key"},
		"duplicate key": {`"supplementals":[{"key":"k","presentation":{"schema":"s","version":1,"revision":1}},{"key":"k","presentation":{"schema":"s","version":1,"revision":1}}]` + tail, "/content/supplementals/1/key"},
		"no schema":     {`"supplementals":[{"key":"k","presentation":{"schema":"","version":1,"revision":1}}]` + tail, "/content/supplementals/0/presentation/schema"},
		"negative rev":  {`"supplementals":[{"key":"k","presentation":{"schema":"s","version":1,"revision":-1}}]` + tail, "/content/supplementals/0/presentation/revision"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeEntry([]byte(head + tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.ptr) {
				t.Fatalf("got %v, want an error at %s", err, tc.ptr)
			}
		})
	}
}
