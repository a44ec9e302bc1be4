package provider

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The built-in provider types.
const (
	TypeOpenAI    = "openai"
	TypeAnthropic = "anthropic"
	TypeDemo      = "demo"
)

// Defaults used when nothing else says.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	defaultOpenAIModel      = "gpt-4.1-mini"
	DefaultAnthropicModel   = "claude-sonnet-4-5"
	defaultIdleTimeout      = 2 * time.Minute
	defaultDemoRate         = 80.0
	// ConfigFile is the name of the config file in the data folder.
	ConfigFile = "config.json"
)

// Config is a resolved provider configuration: what Load builds a Provider
// from, and what `folio models` shows.
type Config struct {
	// Name is the configured provider name: a built-in type, or the name of
	// a section in config.json ("ollama") whose Type says which client to use.
	Name string
	// Type is the client: TypeOpenAI, TypeAnthropic or TypeDemo.
	Type    string
	Model   string
	BaseURL string
	// APIKey is the secret sent to the provider. It is never printed:
	// String and `folio models` only say whether one is present.
	APIKey string
	// KeySource names where APIKey came from ("OPENAI_API_KEY", "config
	// file"), or "" when there is none.
	KeySource string
	// ContextWindow is the model's context window in tokens, from the config
	// file or the built-in table; 0 when unknown.
	ContextWindow int
	// MaxTokens is the default reply bound; 0 lets the provider decide
	// (Anthropic requires one, so its client uses 8192).
	MaxTokens int
	// IdleTimeout ends a stream that sends nothing for this long; 0 turns
	// the watchdog off (Resolve sets defaultIdleTimeout unless the config
	// file says otherwise).
	IdleTimeout time.Duration
	// Headers are extra HTTP headers (OpenRouter's HTTP-Referer, say).
	Headers map[string]string
	// TokensPerSecond is the demo model's streaming rate; 0 streams as fast
	// as the reader takes events.
	TokensPerSecond float64
	// ThinkingBudget turns on Anthropic extended thinking with this many
	// tokens; 0 leaves it off.
	ThinkingBudget int
	// Sources says where each setting came from: "flag", "env NAME",
	// "config file" or "default", keyed by "provider", "model", "baseURL",
	// "contextWindow".
	Sources map[string]string
	// File is the config file that was looked for; FileFound says whether it
	// existed.
	File      string
	FileFound bool
	// Sections names every provider section in the config file, sorted.
	Sections []string

	// Transport and Clock are runtime hooks, never read from files: tests
	// use them to reach a loopback server and drive the idle watchdog.
	Transport http.RoundTripper
	Clock     Clock
}

// String describes the configuration without the key.
func (c Config) String() string {
	key := "no"
	if c.APIKey != "" {
		key = "yes"
	}
	return fmt.Sprintf("provider=%s type=%s model=%s baseURL=%s key=%s", c.Name, c.Type, c.Model, c.BaseURL, key)
}

// HTTPClient returns the client a provider should use: the configured
// transport wrapped in the idle watchdog.
func (c Config) HTTPClient() *http.Client {
	return idleTimeoutClient(c.Transport, c.IdleTimeout, c.Clock)
}

// Options are the inputs to Resolve and Load besides the environment.
type Options struct {
	// DataDir is folio's data folder; config.json is read from it. Empty
	// means no config file.
	DataDir string
	// Provider, Model and BaseURL are command-line flags; empty means unset.
	Provider, Model, BaseURL string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Transport and Clock are copied into the Config (see there).
	Transport http.RoundTripper
	Clock     Clock
}

// fileConfig is the shape of config.json; see docs/providers.md.
type fileConfig struct {
	Provider    string                  `json:"provider,omitzero"`
	IdleTimeout string                  `json:"idleTimeout,omitzero"`
	Providers   map[string]fileProvider `json:"providers,omitzero"`
	// MCPServers belongs to package mcp, which reads it from the same file
	// (docs/mcp.md); the provider settings only let it through.
	MCPServers jsontext.Value `json:"mcpServers,omitzero"`
}

type fileProvider struct {
	Type            string            `json:"type,omitzero"`
	Model           string            `json:"model,omitzero"`
	BaseURL         string            `json:"baseURL,omitzero"`
	APIKey          string            `json:"apiKey,omitzero"`
	APIKeyEnv       string            `json:"apiKeyEnv,omitzero"`
	ContextWindow   int               `json:"contextWindow,omitzero"`
	MaxTokens       int               `json:"maxTokens,omitzero"`
	Headers         map[string]string `json:"headers,omitzero"`
	TokensPerSecond *float64          `json:"tokensPerSecond,omitzero"`
	ThinkingBudget  int               `json:"thinkingBudget,omitzero"`
}

func isBuiltin(name string) bool {
	return name == TypeOpenAI || name == TypeAnthropic || name == TypeDemo
}

// Resolve works out the configuration without constructing a client.
// Precedence for each setting: flag, then environment, then config file,
// then default. With nothing configured the provider is demo; a base URL
// alone (flag or FOLIO_BASE_URL) implies an OpenAI-compatible server.
func Resolve(o Options) (Config, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := Config{Sources: map[string]string{}, Transport: o.Transport, Clock: o.Clock}
	var fc fileConfig
	if o.DataDir != "" {
		c.File = filepath.Join(o.DataDir, ConfigFile)
		found, err := readConfigFile(c.File, &fc)
		if err != nil {
			return Config{}, err
		}
		c.FileFound = found
		for name := range fc.Providers {
			c.Sections = append(c.Sections, name)
		}
		sort.Strings(c.Sections)
	}
	pick := func(field, flag, envName, file, def string) string {
		switch {
		case flag != "":
			c.Sources[field] = "flag"
			return flag
		case envName != "" && getenv(envName) != "":
			c.Sources[field] = "env " + envName
			return getenv(envName)
		case file != "":
			c.Sources[field] = "config file"
			return file
		case def != "":
			c.Sources[field] = "default"
		}
		return def
	}

	def := TypeDemo
	if o.BaseURL != "" || getenv("FOLIO_BASE_URL") != "" {
		def = TypeOpenAI
	}
	c.Name = pick("provider", o.Provider, "FOLIO_PROVIDER", fc.Provider, def)
	sec, hasSec := fc.Providers[c.Name]
	switch {
	case isBuiltin(c.Name):
		c.Type = c.Name
		if sec.Type != "" && sec.Type != c.Name {
			return Config{}, fmt.Errorf("%w: %s: providers.%s.type is %q; a built-in provider's section cannot change its type", ErrConfig, c.File, c.Name, sec.Type)
		}
	case hasSec && isBuiltin(sec.Type):
		c.Type = sec.Type
	case hasSec:
		return Config{}, fmt.Errorf("%w: %s: providers.%s.type must be openai, anthropic or demo, not %q", ErrConfig, c.File, c.Name, sec.Type)
	default:
		return Config{}, fmt.Errorf("%w %q (from %s): use openai, anthropic or demo, or add a section for it under \"providers\" in %s", ErrUnknownProvider, c.Name, c.Sources["provider"], orNone(c.File))
	}

	var defModel, defURL string
	switch c.Type {
	case TypeOpenAI:
		defURL = DefaultOpenAIBaseURL
	case TypeAnthropic:
		defURL, defModel = DefaultAnthropicBaseURL, DefaultAnthropicModel
	case TypeDemo:
		defModel = DemoModel
	}
	c.BaseURL = strings.TrimRight(pick("baseURL", o.BaseURL, "FOLIO_BASE_URL", sec.BaseURL, defURL), "/")
	if c.Type == TypeOpenAI && c.BaseURL == DefaultOpenAIBaseURL {
		defModel = defaultOpenAIModel
	}
	c.Model = pick("model", o.Model, "FOLIO_MODEL", sec.Model, defModel)
	if c.Model == "" {
		return Config{}, fmt.Errorf("%w: provider %s at %s needs a model name: pass --model, set FOLIO_MODEL, or set providers.%s.model in %s", ErrConfig, c.Name, c.BaseURL, c.Name, orNone(c.File))
	}

	switch {
	case sec.APIKeyEnv != "":
		if v := getenv(sec.APIKeyEnv); v != "" {
			c.APIKey, c.KeySource = v, sec.APIKeyEnv
		}
	case c.Type == TypeOpenAI && getenv("OPENAI_API_KEY") != "":
		c.APIKey, c.KeySource = getenv("OPENAI_API_KEY"), "OPENAI_API_KEY"
	case c.Type == TypeAnthropic && getenv("ANTHROPIC_API_KEY") != "":
		c.APIKey, c.KeySource = getenv("ANTHROPIC_API_KEY"), "ANTHROPIC_API_KEY"
	}
	if c.APIKey == "" && sec.APIKey != "" {
		c.APIKey, c.KeySource = sec.APIKey, "config file"
	}

	c.MaxTokens, c.Headers, c.ThinkingBudget = sec.MaxTokens, sec.Headers, sec.ThinkingBudget
	if sec.MaxTokens < 0 || sec.ThinkingBudget < 0 || sec.ContextWindow < 0 {
		return Config{}, fmt.Errorf("%w: %s: providers.%s: maxTokens, thinkingBudget and contextWindow cannot be negative", ErrConfig, c.File, c.Name)
	}
	c.ContextWindow = sec.ContextWindow
	c.Sources["contextWindow"] = "config file"
	if c.ContextWindow == 0 {
		c.ContextWindow = ContextWindow(c.Model)
		c.Sources["contextWindow"] = "built-in table"
	}

	c.IdleTimeout = defaultIdleTimeout
	if fc.IdleTimeout != "" {
		d, err := time.ParseDuration(fc.IdleTimeout)
		if err != nil || d < 0 {
			return Config{}, fmt.Errorf("%w: %s: idleTimeout %q is not a duration like \"90s\" or \"2m\"", ErrConfig, c.File, fc.IdleTimeout)
		}
		c.IdleTimeout = d
	}

	c.TokensPerSecond = defaultDemoRate
	if sec.TokensPerSecond != nil {
		c.TokensPerSecond = *sec.TokensPerSecond
	}
	if v := getenv("FOLIO_DEMO_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return Config{}, fmt.Errorf("%w: FOLIO_DEMO_RATE=%q is not a number of tokens per second", ErrConfig, v)
		}
		c.TokensPerSecond = r
	}
	if c.TokensPerSecond < 0 {
		return Config{}, fmt.Errorf("%w: the demo rate cannot be negative (%g tokens/s)", ErrConfig, c.TokensPerSecond)
	}
	return c, nil
}

func orNone(file string) string {
	if file == "" {
		return "the config file"
	}
	return file
}

// readConfigFile decodes path strictly into fc. A missing file is not an
// error; a malformed one is, naming the file and the JSON location.
func readConfigFile(path string, fc *fileConfig) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if err := json.Unmarshal(data, fc, json.RejectUnknownMembers(true)); err != nil {
		return true, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	return true, nil
}

// Factory constructs a client from a resolved Config.
type Factory func(Config) (Provider, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register links a client type in. Subpackages call it from init.
func Register(typ string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[typ] = f
}

// registered lists the linked-in client types, sorted.
func registered() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Load resolves the configuration and constructs its Provider.
func Load(o Options) (Config, Provider, error) {
	c, err := Resolve(o)
	if err != nil {
		return Config{}, nil, err
	}
	p, err := New(c)
	return c, p, err
}

// New constructs the Provider for a resolved Config.
func New(c Config) (Provider, error) {
	registryMu.RLock()
	f := registry[c.Type]
	registryMu.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w: %s (import github.com/foliodev/folio/provider/builtin)", ErrNotLinked, c.Type)
	}
	return f(c)
}
