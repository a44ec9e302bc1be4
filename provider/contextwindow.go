package provider

import "strings"

// contextWindows maps model name prefixes to their context window in
// tokens. Longer prefixes are tried first. It covers the common models; the
// config's contextWindow overrides it, and unknown models get 0.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-5", 400_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4", 8_192},
	{"gpt-3.5-turbo", 16_385},
	{"o1-mini", 128_000},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
	{"claude-", 200_000},
	{"llama3.1", 131_072},
	{"llama3.2", 131_072},
	{"llama3.3", 131_072},
	{"llama-3.1", 131_072},
	{"llama-3.2", 131_072},
	{"llama-3.3", 131_072},
	{"qwen2.5", 32_768},
	{"qwen3", 40_960},
	{"mistral", 32_768},
	{"gemma3", 131_072},
	{"deepseek-r1", 131_072},
	{"deepseek-chat", 65_536},
	{DemoModel, 32_768},
}

// DemoModel is the demo provider's model name.
const DemoModel = "folio-demo"

// ContextWindow returns the context window of model in tokens, or 0 when it
// is not known. An OpenRouter-style vendor prefix ("openai/gpt-4o") and an
// Ollama tag (":8b") are ignored when matching.
func ContextWindow(model string) int {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	best, tokens := 0, 0
	for _, w := range contextWindows {
		if strings.HasPrefix(m, w.prefix) && len(w.prefix) > best {
			best, tokens = len(w.prefix), w.tokens
		}
	}
	return tokens
}
