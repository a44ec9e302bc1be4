package openai_test

import (
	"fmt"

	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/openai"
)

// A program that talks to a local OpenAI-compatible server (llama.cpp,
// Ollama, vLLM) builds the client directly; such a server needs no key.
func ExampleNew() {
	p, err := openai.New(provider.Config{BaseURL: "http://127.0.0.1:8080/v1", Model: "local-model"})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name())
	// Output: openai
}
