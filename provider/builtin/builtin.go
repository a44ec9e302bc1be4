// Package builtin links folio's provider clients (openai, anthropic, demo)
// into a program: import it for its side effect, then call provider.Load.
// It has no state of its own.
package builtin

import (
	_ "github.com/foliodev/folio/provider/anthropic" // registers "anthropic"
	_ "github.com/foliodev/folio/provider/demo"      // registers "demo"
	_ "github.com/foliodev/folio/provider/openai"    // registers "openai"
)
