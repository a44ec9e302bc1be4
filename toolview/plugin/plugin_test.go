package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

func example(t *testing.T) *Plugin {
	t.Helper()
	p, err := Load(filepath.Join("..", "..", "examples", "countdown", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// TestExamplePluginEndToEnd execs the shipped shell-script plugin.
func TestExamplePluginEndToEnd(t *testing.T) {
	p := example(t)
	h := toolview.New(toolview.WithCadence(0), toolview.WithArtifactDir(t.TempDir()))
	var live []toolview.Change
	h.Subscribe(func(c toolview.Change) { live = append(live, c) })

	rec, err := h.Run(context.Background(), toolview.Spec{ID: "cd-1", Tool: "countdown", Producer: p.Manifest},
		[]byte(`{"n": 3}`), p.Func())
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	if rec.Outcome.Status != transcript.ToolOK || rec.Result.Text != "counted down from 3" || rec.Result.Summary != "countdown 3" {
		t.Fatalf("record = %+v", rec)
	}
	if len(rec.Diagnostics) != 0 {
		t.Fatalf("diagnostics for a well-behaved plugin: %v", rec.Diagnostics)
	}
	var progress []string
	for _, c := range live {
		if c.Open && c.Item == "" && c.Value.Schema == "countdown.progress" {
			progress = append(progress, string(c.Value.Payload))
		}
	}
	if want := `[{"remaining":3,"total":3} {"remaining":2,"total":3} {"remaining":1,"total":3}]`; fmt.Sprint(progress) != want {
		t.Fatalf("live progress = %v", progress)
	}
	a := rec.Presentation.Artifact
	if rec.Presentation.Schema != "countdown.log" || a == nil || !a.Final || a.CommittedBytes != 21 {
		t.Fatalf("retained checkpoint = %+v / %+v", rec.Presentation, a)
	}
	got, err := h.ReadArtifact(*a, 0, 64)
	if err != nil || string(got) != "tick 3\ntick 2\ntick 1\n" {
		t.Fatalf("artifact = %q, %v", got, err)
	}
	if len(rec.Supplementals) != 1 || rec.Supplementals[0].Key != "summary" || rec.Supplementals[0].Presentation.Revision != 1 {
		t.Fatalf("supplementals = %+v", rec.Supplementals)
	}
	// The tool entry round-trips through the transcript codec.
	b, err := transcript.EncodeEntry(rec.Entry("e"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := transcript.DecodeEntry(b); err != nil {
		t.Fatal(err)
	}

	// Invalid arguments never reach the plugin.
	rec, _ = h.Run(context.Background(), toolview.Spec{Tool: "countdown", Producer: p.Manifest}, []byte(`{"n":"three"}`), p.Func())
	if rec.Outcome.Reason != "invalid_arguments" {
		t.Fatalf("invalid arguments: %+v", rec.Outcome)
	}
}

// script writes a plugin whose body is the given sh and loads it.
func script(t *testing.T, body string) *Plugin {
	t.Helper()
	p, _ := writePlugin(t, "#!/bin/sh\nIFS= read -r request\n"+body,
		`{"name":"bad","executable":"plugin.sh","tools":[{"name":"t","inputSchema":{"type":"object"}}],
		"adapters":[{"schema":"s","version":1}]}`)
	return p
}

// writePlugin writes src as plugin.sh and manifest as plugin.json in a new
// folder, and loads the plugin.
func writePlugin(t *testing.T, src, manifest string) (*Plugin, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.sh"), []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, "plugin.json")
	if err := os.WriteFile(mp, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(mp)
	if err != nil {
		t.Fatal(err)
	}
	return p, dir
}

const (
	ok      = `printf '{"jsonrpc":"2.0","id":1,"result":{"content":"done"}}\n'` + "\n"
	replace = `printf '{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":1,"schema":"s","version":1,"payload":{"v":%d}}}\n' `
)

func TestMisbehavingPlugins(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	cases := []struct {
		name    string
		body    string
		status  transcript.ToolStatus
		reason  string
		diag    toolview.Reason
		count   int64
		payload string // the retained primary payload, "" for none
	}{
		{"oversized payload", replace + "1\n" +
			`printf '{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":1,"schema":"s","version":1,"payload":"` + big[:260<<10] + `"}}\n'` + "\n" + ok,
			transcript.ToolOK, "", toolview.ReasonOversized, 1, `{"v":1}`},
		{"oversized line", `printf '` + big + `\n'` + "\n" + replace + "2\n" + ok,
			transcript.ToolOK, "", toolview.ReasonOversized, 1, `{"v":2}`},
		{"malformed json", "echo '{not json'\n" + replace + "3\n" + "echo '{\"jsonrpc\":\"1.0\"}'\n" + ok,
			transcript.ToolOK, "", toolview.ReasonMalformed, 2, `{"v":3}`},
		{"too fast", "i=0; while [ $i -lt 500 ]; do i=$((i+1)); " + replace + "$i; done\n" + ok,
			transcript.ToolOK, "", 0, 0, `{"v":500}`},
		{"after closure", replace + "1\n" + ok + replace + "2\n" + replace + "3\n",
			transcript.ToolOK, "", toolview.ReasonClosed, 2, `{"v":1}`},
		{"crash", replace + "4\nexit 3\n",
			transcript.ToolFailed, "plugin_exited", 0, 0, `{"v":4}`},
		{"legacy placement", `printf '{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":1,"placement":"progress","schema":"s","version":1,"payload":{}}}\n'` + "\n" + ok,
			transcript.ToolOK, "", toolview.ReasonMalformed, 1, ""},
		{"another call", `printf '{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":2,"schema":"s","version":1,"payload":{}}}\n'` + "\n" + ok,
			transcript.ToolOK, "", toolview.ReasonMalformed, 1, ""},
		{"undeclared schema", `printf '{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":1,"schema":"zz","version":1,"payload":{}}}\n'` + "\n" + ok,
			transcript.ToolOK, "", toolview.ReasonSchema, 1, ""},
		{"unknown method", `printf '{"jsonrpc":"2.0","method":"fs/read","params":{}}\n'` + "\n" + ok,
			transcript.ToolOK, "", toolview.ReasonPlugin, 1, ""},
		{"rpc error", `printf '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no luck"}}\n'` + "\n",
			transcript.ToolFailed, "error", 0, 0, ""},
		{"stderr noise", "echo 'SECRET=hunter2' >&2\n" + ok,
			transcript.ToolOK, "", 0, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := script(t, tc.body)
			h := toolview.New(toolview.WithCadence(0))
			if tc.name == "too fast" {
				h = toolview.New() // the default cadence coalesces; the last value must survive
			}
			rec, err := h.Run(context.Background(), toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{}`), p.Func())
			if err != nil {
				t.Fatal(err)
			}
			p.Wait()
			if rec.Outcome.Status != tc.status || rec.Outcome.Reason != tc.reason {
				t.Fatalf("outcome = %+v, want %s/%s", rec.Outcome, tc.status, tc.reason)
			}
			got := ""
			if rec.Presentation != nil {
				got = string(rec.Presentation.Payload)
			}
			if got != tc.payload {
				t.Fatalf("retained payload = %q, want %q", got, tc.payload)
			}
			m := h.Metrics()
			if tc.name == "too fast" && m.Accepted != 500 {
				t.Fatalf("accepted %d of 500 fast updates", m.Accepted)
			}
			if tc.count > 0 && m.Rejected[tc.diag.String()] != tc.count {
				t.Fatalf("rejected[%s] = %d, want %d (all: %v)", tc.diag, m.Rejected[tc.diag.String()], tc.count, m.Rejected)
			}
			// The conversation goes on: the same host runs the next call.
			next, err := h.Run(context.Background(), toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{}`),
				func(context.Context, *toolview.Invocation, []byte) (toolview.Result, error) {
					return toolview.Result{Text: "fine"}, nil
				})
			if err != nil || next.Outcome.Status != transcript.ToolOK {
				t.Fatalf("the host did not survive: %+v, %v", next, err)
			}
			for _, d := range rec.Diagnostics {
				if strings.Contains(d.String(), "xxxx") || strings.Contains(d.String(), "hunter2") {
					t.Fatalf("diagnostic carries content: %s", d)
				}
			}
		})
	}
}

func TestPluginCanceled(t *testing.T) {
	p := script(t, "sleep 30\n"+ok)
	h := toolview.New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec, _ := h.Run(ctx, toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{}`), p.Func())
	p.Wait()
	if rec.Outcome.Status != transcript.ToolFailed || rec.Outcome.Reason != "canceled" {
		t.Fatalf("outcome = %+v", rec.Outcome)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), mode)
		return p
	}
	write("noexec.sh", "#!/bin/sh\n", 0o644)
	for name, tc := range map[string]struct{ manifest, want string }{
		"missing executable": {`{"name":"x","executable":"nope.sh","tools":[]}`, "/executable"},
		"not executable":     {`{"name":"x","executable":"noexec.sh","tools":[]}`, "/executable"},
		"empty executable":   {`{"name":"x","executable":"","tools":[]}`, "/executable"},
		"unknown member":     {`{"name":"x","executable":"noexec.sh","tools":[],"cmd":"rm"}`, "cmd"},
		"bad tool schema":    {`{"name":"x","executable":"noexec.sh","tools":[{"name":"t","inputSchema":{"type":1}}]}`, "/tools/0/inputSchema"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(write(strings.ReplaceAll(name, " ", "-")+".json", tc.manifest, 0o644))
			if !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrManifest naming %q", err, tc.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "absent.json")); !errors.Is(err, ErrManifest) {
		t.Fatalf("absent manifest: %v", err)
	}
}
