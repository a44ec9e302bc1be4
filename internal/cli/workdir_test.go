package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --dir that is not a folder is a usage error naming it, for every
// command whose tools work in it, before anything runs or listens.
func TestDirMustBeAFolder(t *testing.T) {
	work, data := demoEnv(t)
	file := filepath.Join(work, "README.md")
	missing := filepath.Join(work, "nonexistent")
	for _, dir := range []string{missing, file} {
		for _, args := range [][]string{
			{"run", "--yes", "--data", data, "--dir", dir, "list the files here"},
			{"chat", "--data", data, "--dir", dir},
			{"--data", data, "--dir", dir},
			{"serve", "--addr", "127.0.0.1:0", "--data", data, "--dir", dir},
		} {
			// A cancelled context: were the folder not checked, serve
			// would stop at once instead of serving on.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var out bytes.Buffer
			err := Run(ctx, args, strings.NewReader(""), &out, &out)
			if exitCode(err) != 2 || !strings.Contains(err.Error(), "--dir "+dir) || !strings.Contains(err.Error(), "try: ") {
				t.Errorf("folio %s: exit %d %v\n%s", strings.Join(args, " "), exitCode(err), err, out.String())
			}
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a command created the missing --dir")
	}
}
