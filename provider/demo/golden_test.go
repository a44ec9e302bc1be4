package demo

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/provider/providertest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenSequences pins each scenario's whole event sequence, token by
// token, so any change to what the demo streams is a visible diff.
// Regenerate with: go test ./provider/demo -run Golden -update
func TestGoldenSequences(t *testing.T) {
	scenarios := map[string]string{
		"greeting": "hello",
		"tools":    "show me the files",
		"parallel": "parallel tools",
		"math":     "math",
		"table":    "table",
		"code":     "code",
		"markdown": "markdown",
		"think":    "think",
		"long":     "long",
		"fail":     "/demo fail rate-limit",
	}
	for name, prompt := range scenarios {
		t.Run(name, func(t *testing.T) {
			evs, err := run(t, New(Options{}), ask(prompt))
			lines := providertest.Summary(evs)
			if err != nil {
				lines = append(lines, "error: "+err.Error())
			}
			got := strings.Join(lines, "\n") + "\n"
			path := filepath.Join("testdata", "golden", name+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("%s differs from the golden file; run with -update if the change is intended", path)
			}
		})
	}
}
