package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
)

// promptHistory keeps the prompts sent from the terminal chat in
// <data>/prompt-history.jsonl, one JSON string a line, so up/down recalls
// them in the next chat over the same data folder. Appends are single
// writes to an O_APPEND file, so two chats may share it.
type promptHistory struct{ path string }

// promptHistoryMax is how many recent prompts a chat loads.
const promptHistoryMax = 500

func newPromptHistory(dataDir string) promptHistory {
	return promptHistory{path: filepath.Join(dataDir, "prompt-history.jsonl")}
}

// load returns the most recent prompts, oldest first. A missing file is
// an empty history; an unreadable line is skipped.
func (h promptHistory) load() []string {
	b, err := os.ReadFile(h.path)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	if len(out) > promptHistoryMax {
		out = out[len(out)-promptHistoryMax:]
	}
	return out
}

// add appends one prompt. Failing to keep history must not disturb the
// chat, so errors are dropped.
func (h promptHistory) add(text string) {
	b, err := json.Marshal(text)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}
