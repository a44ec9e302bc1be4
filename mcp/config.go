package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/provider"
)

// ConfigFile is the file in the data folder whose mcpServers section lists
// the servers: the same config.json the provider settings live in.
const ConfigFile = provider.ConfigFile

// ServerConfig is one configured server: a command run over stdio, or an
// endpoint spoken to over streamable HTTP.
//
// Env and Headers values may reference the environment as ${NAME}; the
// reference is resolved when the server starts, so the file never needs a
// secret. A variable or header whose name looks secret (it contains
// TOKEN, KEY, SECRET, PASSWORD, AUTH, COOKIE or CREDENTIAL) must be exactly
// one reference, optionally after "Bearer ", "Basic " or "Token ";
// Parse refuses a literal there.
type ServerConfig struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// HTTP reports whether the server is reached over streamable HTTP.
func (c ServerConfig) HTTP() bool { return c.URL != "" }

type serverWire struct {
	Type     string            `json:"type,omitzero"`
	Command  string            `json:"command,omitzero"`
	Args     []string          `json:"args,omitzero"`
	Env      map[string]string `json:"env,omitzero"`
	URL      string            `json:"url,omitzero"`
	Headers  map[string]string `json:"headers,omitzero"`
	Disabled bool              `json:"disabled,omitzero"`
}

// serverName is what may stand before "__" in a tool name: providers
// accept only these characters in tool names.
var serverName = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)

// ref is one environment reference.
var ref = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// secretValue is the only shape a secret-named value may have.
var secretValue = regexp.MustCompile(`^(?:(?:Bearer|Basic|Token) )?\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

func secretName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "AUTH", "COOKIE", "CREDENTIAL"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// LoadConfig reads the mcpServers section of dataDir/config.json. A missing
// file or section is no servers.
func LoadConfig(dataDir string) ([]ServerConfig, error) {
	if dataDir == "" {
		return nil, nil
	}
	path := filepath.Join(dataDir, ConfigFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return parse(data, path)
}

// Parse reads the mcpServers section of a config file's bytes; file names
// the file in errors. Other sections are not looked at. Servers come back
// sorted by name, disabled ones left out.
func parse(data []byte, file string) ([]ServerConfig, error) {
	var top struct {
		MCPServers jsontext.Value `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, file, err)
	}
	if len(top.MCPServers) == 0 || string(top.MCPServers) == "null" {
		return nil, nil
	}
	var wire map[string]jsontext.Value
	if err := json.Unmarshal(top.MCPServers, &wire); err != nil {
		return nil, fmt.Errorf("%w: %s: /mcpServers: %v", ErrConfig, file, err)
	}
	var out []ServerConfig
	for name, raw := range wire {
		at := fmt.Sprintf("%s: /mcpServers/%s", file, name)
		if !serverName.MatchString(name) || len(name) > 32 {
			return nil, fmt.Errorf("%w: %s: a server name is 1 to 32 letters, digits, '-' or single '_'", ErrConfig, at)
		}
		var w serverWire
		if err := json.Unmarshal(raw, &w, json.RejectUnknownMembers(true)); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConfig, at, err)
		}
		if w.Disabled {
			continue
		}
		c := ServerConfig{Name: name, Command: w.Command, Args: w.Args, Env: w.Env, URL: w.URL, Headers: w.Headers}
		switch {
		case c.Command == "" && c.URL == "":
			return nil, fmt.Errorf("%w: %s: needs \"command\" (stdio) or \"url\" (streamable HTTP)", ErrConfig, at)
		case c.Command != "" && c.URL != "":
			return nil, fmt.Errorf("%w: %s: has both \"command\" and \"url\"; keep one", ErrConfig, at)
		case c.Command != "" && len(c.Headers) > 0:
			return nil, fmt.Errorf("%w: %s/headers: headers are for \"url\" servers", ErrConfig, at)
		case c.URL != "" && (len(c.Args) > 0 || len(c.Env) > 0):
			return nil, fmt.Errorf("%w: %s: \"args\" and \"env\" are for \"command\" servers", ErrConfig, at)
		}
		switch w.Type {
		case "", "stdio", "http", "streamable-http", "streamableHttp":
		default:
			return nil, fmt.Errorf("%w: %s/type: %q is not stdio or http", ErrConfig, at, w.Type)
		}
		if c.URL != "" {
			u, err := url.Parse(c.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("%w: %s/url: not an http(s) URL", ErrConfig, at)
			}
			if _, has := u.User.Password(); has {
				return nil, fmt.Errorf("%w: %s/url: holds a password; put it in a header as ${ENV_NAME}", ErrConfig, at)
			}
		}
		if err := checkValues(at+"/env", c.Env); err != nil {
			return nil, err
		}
		if err := checkValues(at+"/headers", c.Headers); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// checkValues refuses a literal secret and a malformed reference. The
// message never quotes a value.
func checkValues(at string, m map[string]string) error {
	for k, v := range m {
		if secretName(k) && !secretValue.MatchString(v) {
			return fmt.Errorf("%w: %s/%s: looks like a secret but is not a single ${ENV_NAME} reference; "+
				"keep secrets in the environment, not in the file", ErrConfig, at, k)
		}
		rest := ref.ReplaceAllString(v, "")
		if strings.Contains(rest, "${") {
			return fmt.Errorf("%w: %s/%s: malformed ${...} reference (names are letters, digits and _)", ErrConfig, at, k)
		}
	}
	return nil
}

// expand resolves every ${NAME} in v. It reports the variables that are
// unset, so a start can fail saying which without printing any value.
func expand(v string, getenv func(string) string) (string, []string) {
	var missing []string
	out := ref.ReplaceAllStringFunc(v, func(m string) string {
		name := m[2 : len(m)-1]
		val := getenv(name)
		if val == "" {
			missing = append(missing, name)
		}
		return val
	})
	return out, missing
}

// References lists the environment variables a server's env and headers
// use, sorted, for `folio mcp ls` (which names them, never their values).
func (c ServerConfig) References() []string {
	var out []string
	for _, m := range []map[string]string{c.Env, c.Headers} {
		for _, v := range m {
			for _, s := range ref.FindAllStringSubmatch(v, -1) {
				if !slices.Contains(out, s[1]) {
					out = append(out, s[1])
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
