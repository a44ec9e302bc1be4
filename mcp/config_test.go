package mcp

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const file = "/data/config.json"
	cases := []struct {
		name, in string
		want     []ServerConfig // nil with err
		err      string         // substring of the error
		secret   string         // must not appear in the error
	}{
		{name: "no section", in: `{"provider":"demo"}`},
		{name: "stdio and http", in: `{"mcpServers":{
			"gh":{"url":"https://example.test/mcp","headers":{"Authorization":"Bearer ${GH_TOKEN}","X-Team":"docs"}},
			"fs":{"command":"mcp-fs","args":["--root","."],"env":{"API_KEY":"${FS_KEY}","MODE":"ro"}}}}`,
			want: []ServerConfig{
				{Name: "fs", Command: "mcp-fs", Args: []string{"--root", "."}, Env: map[string]string{"API_KEY": "${FS_KEY}", "MODE": "ro"}},
				{Name: "gh", URL: "https://example.test/mcp", Headers: map[string]string{"Authorization": "Bearer ${GH_TOKEN}", "X-Team": "docs"}},
			}},
		{name: "disabled is left out", in: `{"mcpServers":{"x":{"command":"a","disabled":true}}}`},
		{name: "literal header secret", in: `{"mcpServers":{"gh":{"url":"https://e.test","headers":{"Authorization":"Bearer sk-live-123"}}}}`,
			err: "/mcpServers/gh/headers/Authorization: looks like a secret", secret: "sk-live-123"},
		{name: "literal env secret", in: `{"mcpServers":{"fs":{"command":"a","env":{"GITHUB_TOKEN":"ghp_abc"}}}}`,
			err: "/mcpServers/fs/env/GITHUB_TOKEN", secret: "ghp_abc"},
		{name: "password in url", in: `{"mcpServers":{"gh":{"url":"https://u:hunter2@e.test"}}}`,
			err: "/mcpServers/gh/url: holds a password", secret: "hunter2"},
		{name: "neither", in: `{"mcpServers":{"x":{}}}`, err: `needs "command"`},
		{name: "both", in: `{"mcpServers":{"x":{"command":"a","url":"http://h"}}}`, err: "both"},
		{name: "unknown member", in: `{"mcpServers":{"x":{"command":"a","cwd":"/"}}}`, err: "/mcpServers/x"},
		{name: "bad name", in: `{"mcpServers":{"a__b":{"command":"a"}}}`, err: "server name"},
		{name: "bad reference", in: `{"mcpServers":{"x":{"command":"a","env":{"MODE":"${1X}"}}}}`, err: "malformed"},
		{name: "not json", in: `{"mcpServers":`, err: file},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parse([]byte(c.in), file)
			if c.err != "" {
				if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				if c.secret != "" && strings.Contains(err.Error(), c.secret) {
					t.Fatalf("the error prints the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %+v", got)
			}
			for i := range got {
				if got[i].Name != c.want[i].Name || got[i].Command != c.want[i].Command || got[i].URL != c.want[i].URL ||
					strings.Join(got[i].Args, " ") != strings.Join(c.want[i].Args, " ") || len(got[i].Env) != len(c.want[i].Env) ||
					len(got[i].Headers) != len(c.want[i].Headers) {
					t.Fatalf("server %d: %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestExpandNamesMissingVariablesOnly(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret"}
	v, missing := expand("Bearer ${TOKEN} ${NOPE}", func(k string) string { return env[k] })
	if v != "Bearer s3cret " || len(missing) != 1 || missing[0] != "NOPE" {
		t.Fatalf("%q %v", v, missing)
	}
	c := ServerConfig{Env: map[string]string{"A": "${B}-${C}"}, Headers: map[string]string{"X": "${B}"}}
	if got := strings.Join(c.References(), ","); got != "B,C" {
		t.Fatalf("references %s", got)
	}
}

func TestStartWithoutTheVariableFailsWithoutPrintingValues(t *testing.T) {
	m := New([]ServerConfig{{Name: "x", Command: demoBin, Env: map[string]string{"API_KEY": "${MCP_TEST_UNSET}", "OTHER": "${MCP_TEST_SET}"}}},
		withGetenv(func(k string) string {
			if k == "MCP_TEST_SET" {
				return "visible-secret"
			}
			return ""
		}))
	defer m.Close()
	_, err := m.Tools(t.Context())
	if err == nil || !strings.Contains(err.Error(), "MCP_TEST_UNSET") || strings.Contains(err.Error(), "visible-secret") {
		t.Fatalf("err = %v", err)
	}
	st := m.Status()[0]
	if st.State != StateFailed || strings.Contains(st.Error, "visible-secret") {
		t.Fatalf("status %+v", st)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"gh":{"url":"https://e.test","headers":{"Authorization":"Bearer ${T}"}}}}`))
	f.Add([]byte(`{"mcpServers":{"fs":{"command":"x","args":["a"],"env":{"K":"v"}}}}`))
	f.Add([]byte(`{"mcpServers":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parse(data, "f")
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error without ErrConfig: %v", err)
			}
			return
		}
		for _, c := range got {
			if (c.Command == "") == (c.URL == "") {
				t.Fatalf("accepted %+v", c)
			}
			for k, v := range c.Headers {
				if secretName(k) && !secretValue.MatchString(v) {
					t.Fatalf("accepted a literal secret in %s", k)
				}
			}
		}
	})
}
