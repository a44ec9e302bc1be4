package transcript

import (
	"bytes"
	"testing"
)

// FuzzDecodeEntry checks that the strict decoder never panics and that
// whatever it accepts is stable: decode, encode, decode and encode again
// must give the same bytes. An accepted entry that fails to encode would be
// data a save could not write back.
func FuzzDecodeEntry(f *testing.F) {
	for _, c := range oneOfEachKind() {
		b, err := EncodeEntry(Entry{ID: "seed", Content: c, Timestamp: t0})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEntry(data)
		if err != nil {
			return
		}
		b1, err := EncodeEntry(e)
		if err != nil {
			t.Fatalf("decoded entry does not encode: %v\ninput: %q", err, data)
		}
		e2, err := DecodeEntry(b1)
		if err != nil {
			t.Fatalf("canonical form does not decode: %v\n%s", err, b1)
		}
		b2, err := EncodeEntry(e2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("unstable round trip (%v):\n%s\n%s", err, b1, b2)
		}
		if FingerprintOf(e) != FingerprintOf(e2) {
			t.Fatal("fingerprint changed across a round trip")
		}
	})
}
