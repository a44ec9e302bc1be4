package receipt

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

var updateParity = flag.Bool("update-parity", false, "rewrite the expected lines in testdata/web-parity.json")

// parityCase is one fixture the web app's formatter (web/src/receipt) is
// checked against too: the same stored receipt must give the same line.
type parityCase struct {
	Name    string                 `json:"name"`
	Receipt transcript.TurnReceipt `json:"receipt"`
	Line    string                 `json:"line"`
}

// TestWebParityFixtures checks Line (finish time in UTC) against the lines
// stored in testdata/web-parity.json, which web/src/receipt/receipt.test.ts
// checks its formatter against. With -update-parity it rewrites them.
func TestWebParityFixtures(t *testing.T) {
	const path = "testdata/web-parity.json"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []parityCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cases) < 10 {
		t.Fatalf("%s has %d cases; the parity check needs the full set", path, len(cases))
	}
	for i := range cases {
		got := Line(cases[i].Receipt, time.UTC)
		if *updateParity {
			cases[i].Line = got
			continue
		}
		if got != cases[i].Line {
			t.Errorf("%s: Line = %q, fixture says %q", cases[i].Name, got, cases[i].Line)
		}
	}
	if *updateParity {
		out, err := json.Marshal(cases, jsontext.WithIndent("  "))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(bytes.TrimSpace(out), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
