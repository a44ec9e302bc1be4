package transcript

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// A step's time to first token is optional, survives the codec exactly, and
// is refused with its pointer when it is negative or not a finite number,
// whether it arrives as JSON or is built in Go.
func TestStepTimeToFirstToken(t *testing.T) {
	t.Parallel()
	e := Entry{ID: "r", Timestamp: t0, Content: TurnReceipt{Steps: []Step{
		{DurationMs: 4100, TimeToFirstTokenMs: ptr(412.5)},
		{DurationMs: 90}, // not measured: stays absent
	}}}
	b, err := EncodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"timeToFirstTokenMs":412.5`) || strings.Count(string(b), "timeToFirstTokenMs") != 1 {
		t.Fatalf("encoded %s", b)
	}
	back, err := DecodeEntry(b)
	if err != nil {
		t.Fatal(err)
	}
	steps := back.Content.(TurnReceipt).Steps
	if steps[0].TimeToFirstTokenMs == nil || *steps[0].TimeToFirstTokenMs != 412.5 || steps[1].TimeToFirstTokenMs != nil {
		t.Fatalf("decoded steps %+v", steps)
	}

	const ts = `"2026-01-01T00:00:00Z"`
	for _, in := range []string{`-1`, `-0.001`} {
		line := `{"id":"a","content":{"kind":"turn-receipt","steps":[{"durationMs":1},{"durationMs":1,"timeToFirstTokenMs":` + in + `}]},"timestamp":` + ts + `}`
		_, err := DecodeEntry([]byte(line))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Pointer != "/content/steps/1/timeToFirstTokenMs" || !strings.Contains(fe.Msg, "must not be negative") {
			t.Errorf("decoding ttft %s: %v", in, err)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), -3} {
		e := Entry{ID: "a", Timestamp: t0, Content: TurnReceipt{Steps: []Step{{DurationMs: 1, TimeToFirstTokenMs: ptr(v)}}}}
		_, err := EncodeEntry(e)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Pointer != "/content/steps/0/timeToFirstTokenMs" {
			t.Errorf("encoding ttft %v: %v", v, err)
		}
	}
}
