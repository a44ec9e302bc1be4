package cli

import (
	"context"
	"log/slog"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/transcript"
)

// A terminal chat serves the conversation it owns to other folio processes
// of the same user, as folio serve does: on its local endpoint
// (run/<pid>.sock in the data folder, server.ServeLocal), through a hosted
// server (server.NewHosted) to which it lends its engine and log while it
// holds the log's writer lock (server.Adopt). Another terminal's --resume,
// or folio serve on behalf of a browser tab, then attaches to this chat
// (attach.go) instead of being refused: its commands run on this chat's
// engine, and its view is this engine's store, live. The lending ends
// before the chat switches conversations (resume, /new, attaching to
// another owner) and starts again on the one it switched to; the endpoint
// closes with the chat, which is how attached processes learn to take the
// lock over.

// serveLocal starts the chat's local endpoint and lends it the current
// conversation. A chat that cannot serve one (a data folder path too long
// for a socket) still works on its own; err says why.
func (s *chatSession) serveLocal(ctx context.Context, model func() string) error {
	srv, err := server.NewHosted(s.dataDir, model, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	ep, err := srv.ServeLocal(ctx, s.dataDir)
	if err != nil {
		srv.Close()
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv, s.ep = srv, ep
	s.hostLocked()
	return nil
}

// hostLocked lends the engine and the log of the conversation the chat
// owns to its hosted server, when it has one and owns one.
func (s *chatSession) hostLocked() {
	if s.srv == nil || s.log == nil || s.att != nil || s.release != nil || s.closed {
		return
	}
	rel, err := s.srv.Adopt(s.id, s.eng, s.log, s.saver.titled)
	if err != nil {
		return // served by nobody; the chat itself goes on
	}
	s.release = rel
}

// unhostLocked takes the engine and the log back from the hosted server:
// the chat saves to its log itself again.
func (s *chatSession) unhostLocked() {
	if s.release == nil {
		return
	}
	titled := s.release()
	s.release = nil
	s.setSaverLocked(s.log, titled)
}

// setSaverLocked makes the engine save to log itself.
func (s *chatSession) setSaverLocked(log *history.Log, titled bool) {
	s.saver = &titledLog{log: log, titled: titled}
	s.eng.SetSaver(s.saver)
}

// closeLocal ends the lending and closes the endpoint, which tells every
// attached process that the chat is gone.
func (s *chatSession) closeLocal() {
	s.mu.Lock()
	s.unhostLocked()
	srv, ep := s.srv, s.ep
	s.srv, s.ep = nil, nil
	s.mu.Unlock()
	if ep != nil {
		ep.Close()
	}
	if srv != nil {
		srv.Close()
	}
}

// model is the chat's model as provider/model.
func (s *chatSession) model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modelName
}

// titledLog saves to a log and gives a new conversation its title, taken
// from the first message (history.Log.SaveNaming), so the picker can name it.
type titledLog struct {
	log    *history.Log
	titled bool
}

func (t *titledLog) Save(doc transcript.Document, msgs []message.Message) error {
	var err error
	t.titled, err = t.log.SaveNaming(doc, msgs, t.titled)
	return err
}
