package demo_test

import (
	"fmt"

	"github.com/foliodev/folio/provider/demo"
)

// A program recording a demo speeds the offline model up: twice the usual
// pace, and a third of its usual wait before the first token.
func ExampleNew() {
	p := demo.New(demo.Options{Name: "fast-demo", TokensPerSecond: 160, FirstToken: demo.DefaultFirstToken / 3})
	fmt.Println(p.Name())
	// Output: fast-demo
}
