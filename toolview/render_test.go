package toolview

import (
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
)

func TestFallbackShowsMetadataNeverPayload(t *testing.T) {
	var reg registry[func(*Value) string]
	reg.Register("shell", 1, func(v *Value) string { return "shell view" })
	if _, ok := reg.Lookup("shell", 2); ok {
		t.Fatal("version 2 matched a version 1 adapter")
	}
	if a, ok := reg.Lookup("shell", 1); !ok || a(nil) != "shell view" {
		t.Fatal("registered adapter not found")
	}

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	payload := []byte(`{"secretish":"PAYLOAD-BODY"}`)
	st := invState{Tool: "sh\x1b[31mell", Open: true, Start: start,
		Items: []ItemState{{Key: "", Revision: 1, Value: &Value{Schema: "unknown", Version: 1, Payload: payload}}}}
	line := fallback(metaOf(st, "", start.Add(1200*time.Millisecond)))
	if line != "sh[31mell · running · 1.2s · 28 B" {
		t.Fatalf("running fallback = %q", line)
	}
	st.Open = false
	st.Outcome = Outcome{Status: transcript.ToolOK}
	st.Duration = 65 * time.Second
	line = fallback(metaOf(st, "", start.Add(time.Hour)))
	if line != "sh[31mell · ok · 1m05s · 28 B" {
		t.Fatalf("closed fallback = %q", line)
	}
	if strings.Contains(line, "PAYLOAD-BODY") {
		t.Fatal("fallback shows payload")
	}
	long := fallback(meta{Tool: strings.Repeat("x", 500), Status: "running"})
	if n := len([]rune(long)); n > 80 {
		t.Fatalf("fallback is %d runes long", n)
	}
}
