package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/transcript"
)

// DialOwner attaches to conversation id on the folio process whose local
// endpoint is path: a mirror of the conversation in a store of its own,
// and the owner's commands. It is how folio serve reaches a conversation
// a terminal chat owns (server.Options.DialOwner).
func DialOwner(ctx context.Context, path, id string) (server.RemoteOwner, error) {
	c, err := DialLocal(ctx, path)
	if err != nil {
		return nil, err
	}
	st := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	cv, err := c.Open(ctx, id, st)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &owner{c: c, cv: cv, st: st}, nil
}

// owner is a Conn and its one Conversation as a server.RemoteOwner.
type owner struct {
	c  *Conn
	cv *Conversation
	st *transcript.Store
}

var _ server.RemoteOwner = (*owner)(nil)

func (o *owner) Store() *transcript.Store { return o.st }
func (o *owner) Command(ctx context.Context, kind, commandID string, members map[string]any) (server.Receipt, error) {
	return o.cv.Command(ctx, kind, commandID, members)
}
func (o *owner) Status(ctx context.Context, commandID string) (server.Receipt, error) {
	return o.cv.Status(ctx, commandID)
}
func (o *owner) OnReceipt(f func(server.Receipt)) { o.cv.OnReceipt(f) }
func (o *owner) Allowed() []string                { return o.cv.Allowed() }
func (o *owner) Done() <-chan struct{}            { return o.c.Done() }
func (o *owner) Close() error                     { return o.c.Close() }

// Model is the model conversation's next turn runs on at the owner, as
// provider/model (GET /api/v2/models?conversation=ID); "" when the owner
// runs no turns.
func (c *Conn) Model(ctx context.Context, conversation string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/v2/models?conversation="+url.QueryEscape(conversation), nil)
	if err != nil {
		return "", err
	}
	if c.tok != "" {
		req.Header.Set("Authorization", "Bearer "+c.tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("client: models: HTTP %d", resp.StatusCode)
	}
	var out struct {
		Current string `json:"current"`
	}
	if err := json.UnmarshalRead(resp.Body, &out, loose); err != nil {
		return "", err
	}
	return out.Current, nil
}
