package server

import (
	"net/http"

	"github.com/foliodev/folio/provider"
)

// This file is GET /api/v2/workspace: what a new chat's first screen tells
// the person, as the terminal's first screen does: the folder the tools work
// in, the data folder conversations are saved in, and whether the default
// model is the offline demo (so the app can say how to set up a real one).
// The model list itself is GET /api/v2/models.

// workspaceInfo is the answer of GET /api/v2/workspace.
type workspaceInfo struct {
	// Folder is the folder the built-in tools work in ("" without an engine).
	Folder string `json:"folder"`
	// Data is the server's data folder.
	Data string `json:"data"`
	// Demo says that new conversations start on the offline demo model.
	Demo bool `json:"demo"`
}

// workspace returns what Turns works in and whether its default model is the demo.
func (t *turnHost) workspace() (folder string, demo bool) {
	for _, m := range t.opts.Models {
		if m.Default && m.Config.Type != "" {
			return t.opts.Workspace, m.Config.Type == provider.TypeDemo
		}
	}
	return t.opts.Workspace, t.opts.Provider != nil && t.opts.Provider.Name() == provider.TypeDemo
}

func (s *Server) getWorkspace(w http.ResponseWriter, _ *http.Request) {
	out := workspaceInfo{Data: s.opts.DataDir}
	if s.turns != nil {
		out.Folder, out.Demo = s.turns.workspace()
	}
	writeJSON(w, http.StatusOK, out)
}
