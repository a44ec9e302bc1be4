package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestVersionAndHelp(t *testing.T) {
	out, _, err := run(t, "version")
	if err != nil || !strings.HasPrefix(out, "folio ") {
		t.Fatalf("version: %q, %v", out, err)
	}
	out, _, err = run(t, "help")
	if err != nil || !strings.Contains(out, "Commands:") {
		t.Fatalf("help: %q, %v", out, err)
	}
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	_, _, err := run(t, "frobnicate")
	var ex ExitError
	if !errors.As(err, &ex) || ex.Code != 2 || !strings.Contains(ex.Msg, "try: folio --help") {
		t.Fatalf("got %v, want a usage error with a try line", err)
	}
}
