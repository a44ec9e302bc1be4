// Command folio is the conversation engine's command line: chat in the
// terminal, serve the web app, and inspect history logs.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/foliodev/folio/internal/cli"
)

func main() {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	// A closed terminal sends SIGHUP: stop as on ctrl+c, so a running turn
	// is recorded as interrupted and the locks and sockets are removed.
	// Under nohup it stays ignored (asking for it would undo that).
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	err := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ex cli.ExitError
		if errors.As(err, &ex) {
			if ex.Msg != "" {
				fmt.Fprintln(os.Stderr, "folio:", ex.Msg)
			}
			os.Exit(ex.Code)
		}
		fmt.Fprintln(os.Stderr, "folio:", err)
		os.Exit(1)
	}
}
