package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gojson "github.com/go-json-experiment/json"
)

// modelsEnv isolates the environment folio reads its configuration from.
func modelsEnv(t *testing.T, vars map[string]string) string {
	t.Helper()
	home := t.TempDir()
	for _, k := range []string{"FOLIO_PROVIDER", "FOLIO_MODEL", "FOLIO_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FOLIO_DEMO_RATE"} {
		t.Setenv(k, "")
	}
	t.Setenv("FOLIO_HOME", home)
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return home
}

func TestModelsDefaultIsDemo(t *testing.T) {
	modelsEnv(t, nil)
	out, _, err := run(t, "models")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"selected: demo (the offline demo model", "folio-demo", "not needed", "(not found)", "*  demo"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestModelsNeverPrintsKeys(t *testing.T) {
	home := modelsEnv(t, map[string]string{"FOLIO_PROVIDER": "openai", "OPENAI_API_KEY": "sk-very-secret-1", "ROUTER_KEY": "sk-very-secret-2"})
	os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"providers":{
		"router":{"type":"openai","baseURL":"http://127.0.0.1:9/api/v1","model":"openai/gpt-4o","apiKeyEnv":"ROUTER_KEY"},
		"anthropic":{"apiKey":"sk-very-secret-3"}}}`), 0o600)
	for _, args := range [][]string{{"models"}, {"models", "--json"}, {"models", "--provider", "router"}} {
		out, _, err := run(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "sk-very-secret") {
			t.Fatalf("%v printed a key:\n%s", args, out)
		}
		if !strings.Contains(out, "OPENAI_API_KEY") || !strings.Contains(out, "ROUTER_KEY") || !strings.Contains(out, "config file") {
			t.Errorf("%v should say where each key comes from:\n%s", args, out)
		}
	}
	out, _, _ := run(t, "models", "--json")
	var got struct {
		Selected struct {
			Name, Key, Model string
		} `json:"selected"`
		Providers []struct {
			Name string `json:"name"`
			Key  string `json:"key"`
		} `json:"providers"`
	}
	if err := gojson.Unmarshal([]byte(out), &got, gojson.MatchCaseInsensitiveNames(true)); err != nil {
		t.Fatal(err)
	}
	if got.Selected.Name != "openai" || got.Selected.Key != "yes" || got.Selected.Model != "gpt-4.1-mini" || len(got.Providers) != 4 {
		t.Fatalf("%+v", got)
	}
}

func TestModelsBadConfig(t *testing.T) {
	home := modelsEnv(t, nil)
	os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"provider": 7}`), 0o600)
	_, _, err := run(t, "models")
	var ex ExitError
	if !errors.As(err, &ex) || ex.Code != 1 || !strings.Contains(ex.Msg, "config.json") {
		t.Fatalf("got %v, want exit 1 naming the file", err)
	}
	if _, _, err := run(t, "models", "extra"); !errors.As(err, &ex) || ex.Code != 2 {
		t.Fatalf("stray argument: %v", err)
	}
}
