package anthropic_test

import (
	"fmt"

	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/anthropic"
)

// A program that only ever talks to Anthropic builds the client directly
// instead of resolving config.json; the model defaults to folio's.
func ExampleNew() {
	p, err := anthropic.New(provider.Config{APIKey: "sk-ant-example"})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name())
	// Output: anthropic
}
