package server

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
)

// This file is the model list (GET /api/v2/models) and the model switch a
// send may carry. The list comes from the server's resolved provider
// configuration; it never holds keys, base URLs or headers, so no response
// path can leak a credential.

// ModelInfo is one model the server can run turns on.
type ModelInfo struct {
	// Name is what a send's "model" names: "provider/model".
	Name string `json:"name"`
	// Provider is the configured provider's name ("openai", "ollama", …).
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Default marks the model conversations start with.
	Default bool `json:"default"`
}

// ModelOption is a model the server's engines may switch a conversation to. Config is
// used to build its client on first use; it is never sent to a client.
type ModelOption struct {
	ModelInfo
	Config provider.Config
}

// ConfiguredModels lists the providers o resolves to, as `folio models`
// shows them: the selected one first and marked default, then every other
// built-in or config-file provider that resolves and can answer (the demo
// model, a provider with a key, or a config-file section, which may be a
// local server without one).
func ConfiguredModels(o provider.Options) ([]ModelOption, error) {
	cur, err := provider.Resolve(o)
	if err != nil {
		return nil, err
	}
	out := []ModelOption{{ModelInfo: ModelInfo{Name: modelName(cur), Provider: cur.Name, Model: cur.Model, Default: true}, Config: cur}}
	section := map[string]bool{}
	for _, s := range cur.Sections {
		section[s] = true
	}
	names := append([]string{provider.TypeDemo, provider.TypeOpenAI, provider.TypeAnthropic}, cur.Sections...)
	seen := map[string]bool{cur.Name: true}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		c, err := provider.Resolve(provider.Options{DataDir: o.DataDir, Provider: n, Getenv: o.Getenv,
			Transport: o.Transport, Clock: o.Clock})
		if err != nil || (c.Type != provider.TypeDemo && c.APIKey == "" && !section[n]) {
			continue
		}
		out = append(out, ModelOption{ModelInfo: ModelInfo{Name: modelName(c), Provider: c.Name, Model: c.Model}, Config: c})
	}
	return out, nil
}

func modelName(c provider.Config) string { return c.Name + "/" + c.Model }

// modelSet is the clients the turnHost built for the models conversations
// switched to. Which model a conversation chose is the conversation's
// (conversation.model).
type modelSet struct {
	mu      sync.Mutex
	clients map[string]provider.Provider
}

// models returns the list a client sees. Without configured options it is
// the one model of TurnsOptions.
func (t *turnHost) list() []ModelInfo {
	out := []ModelInfo{}
	if t.hosted {
		return append(out, t.hostedModel())
	}
	for _, m := range t.opts.Models {
		out = append(out, m.ModelInfo)
	}
	if len(out) == 0 {
		name := t.opts.Provider.Name()
		out = append(out, ModelInfo{Name: name + "/" + t.opts.Model, Provider: name, Model: t.opts.Model, Default: true})
	}
	return out
}

// checkModel says whether name is in the list.
func (t *turnHost) checkModel(name string) error {
	var names []string
	for _, m := range t.list() {
		if m.Name == name {
			return nil
		}
		names = append(names, m.Name)
	}
	return fmt.Errorf("%w: model %q is not one of this server's models (%s); GET /api/v2/models lists them",
		ErrUnknownModel, clip(name), strings.Join(names, ", "))
}

// modelFor is the choice a send in conversation c runs with: the model
// it names, else the one the conversation last switched to (it outlives
// the engine's idle close, as long as the server keeps the conversation),
// else none (the engine's current model). A named model becomes the
// conversation's choice.
func (t *turnHost) modelFor(c *conversation, name string) (engine.ModelChoice, error) {
	if name == "" {
		name = c.chosenModel()
		if name == "" {
			return engine.ModelChoice{}, nil
		}
	}
	if t.hosted {
		// The lender's engine runs on the model its owner chose; a send
		// may name that one and no other.
		return engine.ModelChoice{}, t.checkModel(name)
	}
	choice, err := t.choice(name)
	if err == nil {
		c.chooseModel(name)
	}
	return choice, err
}

// choice is model name's client and settings.
func (t *turnHost) choice(name string) (engine.ModelChoice, error) {
	if err := t.checkModel(name); err != nil {
		return engine.ModelChoice{}, err
	}
	t.models.mu.Lock()
	defer t.models.mu.Unlock()
	var opt *ModelOption
	for i := range t.opts.Models {
		if t.opts.Models[i].Name == name {
			opt = &t.opts.Models[i]
		}
	}
	var (
		p      provider.Provider
		model  = t.opts.Model
		window = t.opts.ContextWindow
	)
	switch {
	case opt == nil || opt.Default:
		p = t.opts.Provider // the default model's client is the one of TurnsOptions
		if opt != nil {
			model = opt.Model
		}
	default:
		model, window = opt.Model, opt.Config.ContextWindow
		if p = t.models.clients[name]; p == nil {
			var err error
			if p, err = provider.New(opt.Config); err != nil {
				return engine.ModelChoice{}, fmt.Errorf("model %q: %w", name, err)
			}
			if t.models.clients == nil {
				t.models.clients = map[string]provider.Provider{}
			}
			t.models.clients[name] = p
		}
	}
	return engine.ModelChoice{Provider: p, Model: model, ContextWindow: window}, nil
}

// currentModel is the model name a conversation that chose chosen ("":
// none) runs its next turn on.
func (t *turnHost) currentModel(chosen string) string {
	if chosen != "" {
		return chosen
	}
	for _, m := range t.list() {
		if m.Default {
			return m.Name
		}
	}
	return ""
}

// listModels answers GET /api/v2/models[?conversation=ID]: the models and,
// for a conversation, the one its next turn runs on.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	conv := r.URL.Query().Get("conversation")
	if conv != "" {
		if err := validConversationID(conv); err != nil {
			httpError(w, http.StatusBadRequest, "invalid-id", err.Error())
			return
		}
		if !s.mayAccess(r.Context(), conv) {
			httpError(w, http.StatusNotFound, "not-found", "no conversation "+conv)
			return
		}
	}
	out := struct {
		Models  []ModelInfo `json:"models"`
		Current string      `json:"current,omitzero"`
	}{Models: []ModelInfo{}}
	if s.turns != nil {
		out.Models = s.turns.list()
		if conv != "" {
			chosen := ""
			if c := s.lookupConv(conv); c != nil {
				chosen = c.chosenModel()
			}
			out.Current = s.turns.currentModel(chosen)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// checkModel validates a send's model before it reaches the engine; a
// server without Options.Turns has no models, so every name is unknown.
func (s *Server) checkModel(name string) error {
	if s.turns == nil {
		return fmt.Errorf("%w: this server has no models to switch to", ErrUnknownModel)
	}
	return s.turns.checkModel(name)
}

// chosenModel is the model the conversation last switched to; "" when it
// did not.
func (c *conversation) chosenModel() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model
}

// chooseModel records the model the conversation switched to.
func (c *conversation) chooseModel(name string) {
	c.mu.Lock()
	c.model = name
	c.mu.Unlock()
}
