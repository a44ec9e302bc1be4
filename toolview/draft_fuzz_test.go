package toolview

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzDraft drives arbitrary sequences of appends, gaps, invalidations and
// checkpoints. Whatever happens, the host never panics and the shown draft
// is valid JSON of the documented shape within the bound.
func FuzzDraft(f *testing.F) {
	f.Add([]byte("{\"a\":\"é\"}"), []byte{0, 0, 1, 2, 3})
	f.Add([]byte("\xff\xfe\xc3"), []byte{0, 1, 0, 2})
	f.Add([]byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), []byte{0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		h := New(WithCadence(0), WithPayloadLimit(128))
		inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
		d := inv.Draft()
		var off int64
		for i, op := range ops {
			chunk := data
			if n := int(op) % (len(data) + 1); n < len(chunk) {
				chunk = chunk[:n]
			}
			switch i % 4 {
			case 0, 1:
				if d.Append(off, chunk) == nil {
					off += int64(len(chunk))
				}
			case 2:
				if op%3 == 0 {
					d.Invalidate()
				} else {
					d.Append(off+1, chunk) // a gap
				}
			case 3:
				total := off + int64(len(chunk))
				if d.Checkpoint(chunk, total, op%2 == 0) == nil {
					off = total
				}
			}
		}
		st, _ := attach(h, inv.ID())
		it, _ := st.Item("")
		if it.Value == nil {
			return
		}
		if int64(len(it.Value.Payload)) > 128 {
			t.Fatalf("draft payload %d bytes over the bound", len(it.Value.Payload))
		}
		var shown struct {
			Text      string `json:"text"`
			Bytes     int64  `json:"bytes"`
			Truncated bool   `json:"truncated"`
		}
		if err := json.Unmarshal(it.Value.Payload, &shown); err != nil {
			t.Fatalf("draft payload is not JSON: %v: %s", err, it.Value.Payload)
		}
		if !utf8.ValidString(shown.Text) || int64(utf8.RuneCountInString(shown.Text)) > shown.Bytes {
			t.Fatalf("draft %+v", shown)
		}
	})
}
