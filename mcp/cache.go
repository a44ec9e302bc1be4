package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tool-list cache lets a session offer a server's tools without
// starting it: the server then starts on the first call of one of them.
// An entry is trusted only while the server's configuration is the one it
// was listed under. It holds what the configuration file holds (secrets
// there are ${NAME} references) and what the server listed, nothing else.

type cacheFile struct {
	Fingerprint string       `json:"fingerprint"`
	Tools       []cachedTool `json:"tools"`
}

type cachedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// fingerprint identifies a server's configuration as written.
func fingerprint(c ServerConfig) string {
	b, _ := json.Marshal(struct {
		Command string
		Args    []string
		Env     map[string]string
		URL     string
		Headers map[string]string
	}{c.Command, c.Args, c.Env, c.URL, c.Headers}) // maps marshal in key order
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (s *server) cachePath() string {
	return filepath.Join(s.m.cacheDir, s.cfg.Name+".tools.json")
}

// loadCache fills the tool list from the cache; it reports false when there
// is no cache or it belongs to another configuration.
func (s *server) loadCache() bool {
	if s.m.cacheDir == "" {
		return false
	}
	b, err := os.ReadFile(s.cachePath())
	if err != nil {
		return false
	}
	var f cacheFile
	if json.Unmarshal(b, &f) != nil || f.Fingerprint != fingerprint(s.cfg) || len(f.Tools) == 0 {
		return false
	}
	ts := make([]*sdk.Tool, 0, len(f.Tools))
	for _, t := range f.Tools {
		ts = append(ts, &sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	s.mu.Lock()
	s.tools = ts
	s.mu.Unlock()
	return true
}

// saveCache records the listed tools. Failing to is harmless: the next
// session starts the server to list them.
func (s *server) saveCache(ts []*sdk.Tool) {
	if s.m.cacheDir == "" || len(ts) == 0 {
		return
	}
	f := cacheFile{Fingerprint: fingerprint(s.cfg)}
	for _, t := range ts {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			schema = []byte(`{"type":"object"}`)
		}
		f.Tools = append(f.Tools, cachedTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	b, err := json.Marshal(f)
	if err != nil || os.MkdirAll(s.m.cacheDir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(s.m.cacheDir, ".tools-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), s.cachePath()) != nil {
		_ = os.Remove(tmp.Name())
	}
}
