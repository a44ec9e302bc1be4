package provider_test

import (
	"fmt"
	"time"

	"github.com/foliodev/folio/provider"
)

// A program driving a model itself decides from a failure's class whether
// to try again and what to tell the user; AsError finds the classified
// error however deeply it is wrapped.
func ExampleAsError() {
	failures := []error{
		fmt.Errorf("turn 3: %w", &provider.Error{Class: provider.ClassRateLimit, Provider: "openai", Status: 429, RetryAfter: 2 * time.Second}),
		fmt.Errorf("turn 4: %w", &provider.Error{Class: provider.ClassAuth, Provider: "openai", Status: 401}),
		fmt.Errorf("not from a provider"),
	}
	for _, err := range failures {
		if pe := provider.AsError(err); pe != nil {
			fmt.Println(pe.Class, pe.Retryable(), pe.RetryAfter)
		} else {
			fmt.Println("unclassified")
		}
	}
	// Output:
	// rate_limit true 2s
	// auth false 0s
	// unclassified
}

// A program that maps failures to its own messages covers every class.
func ExampleClasses() {
	for _, c := range provider.Classes {
		fmt.Print(c, " ")
	}
	fmt.Println()
	// Output:
	// rate_limit auth authz context policy provider transport timeout cancelled
}
