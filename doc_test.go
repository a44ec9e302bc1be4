// Package folio_test checks repository-wide conventions.
package folio_test

import (
	"strings"
	"testing"
)

// TestEveryPackageHasDoc fails when a Go package in the module has no package
// doc comment in any of its non-test files.
func TestEveryPackageHasDoc(t *testing.T) {
	docs := map[string]bool{}
	for _, f := range parseModule(t) {
		if f.test {
			continue
		}
		docs[f.dir] = docs[f.dir] || (f.ast.Doc != nil && strings.TrimSpace(f.ast.Doc.Text()) != "")
	}
	if len(docs) < 2 {
		t.Fatalf("found only %d packages; is the walk broken?", len(docs))
	}
	for dir, ok := range docs {
		if !ok {
			t.Errorf("package in %s has no doc comment", dir)
		}
	}
}
