package history_test

import (
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/history/storetest"
)

// The data folder passes the storage conformance suite. Its crash cases are
// history's own (TestCrashAtEveryOffsetOfAnAppend cuts a write at every
// byte), since a file cannot be cut between statements.
func TestFilesConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) history.Store { return history.Files{Dir: t.TempDir()} },
	})
}
