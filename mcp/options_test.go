package mcp

// Options only the tests set: a fake environment for ${VAR} expansion, and
// a result bound small enough to reach.

func withGetenv(f func(string) string) Option { return func(m *Manager) { m.getenv = f } }
func withResultBound(n int) Option            { return func(m *Manager) { m.resultBound = n } }
