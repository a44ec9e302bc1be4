package server

import (
	"errors"
	"fmt"
	"os"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/server/pager"
)

// This file answers a connection's reading frames: hello, open (a
// snapshot of a conversation, and following it), page, release, unfollow
// and entry.

type limits struct {
	FrameBytes    int `json:"frameBytes"`
	MinBudget     int `json:"minBudget"`
	MaxBudget     int `json:"maxBudget"`
	DefaultBudget int `json:"defaultBudget"`
	Snapshots     int `json:"snapshots"`
}

// helloFrame is the client's hello.
type helloFrame struct {
	envelope
	Protocol int    `json:"protocol"`
	Client   string `json:"client"`
}

func (c *conn) onHello(env envelope, frame []byte) {
	var m helloFrame
	if !c.decode(env, frame, &m) {
		return
	}
	if m.Protocol != ProtocolVersion {
		c.protoError(env.ID, "protocol-version", fmt.Sprintf("this server speaks protocol %d, not %d", ProtocolVersion, m.Protocol), false)
		// Queued after the error, so the error goes out first.
		select {
		case c.out <- outFrame{closeCode: websocket.StatusPolicyViolation}:
		default:
			go c.close(websocket.StatusPolicyViolation, "protocol version")
		}
		return
	}
	c.mu.Lock()
	c.hello = true
	c.mu.Unlock()
	size := c.srv.opts.Snapshots
	if size < 1 {
		size = pager.DefaultLRUSize
	}
	c.reply(welcomeFrame{"welcome", env.ID, ProtocolVersion, c.id, limits{maxFrame, pager.MinBudget, pager.MaxBudget, pager.DefaultBudget, size}})
	if c.srv.storeReachable() != nil {
		c.reply(statusFrame{Type: "status", Store: storeUnreachable})
	}
}

// welcomeFrame answers hello.
type welcomeFrame struct {
	Type       string `json:"type"`
	Re         string `json:"re"`
	Protocol   int    `json:"protocol"`
	Connection string `json:"connection"`
	Limits     limits `json:"limits"`
}

// follow subscribes the connection to a conversation's live events and
// returns the conversation it follows.
func (c *conn) follow(id string) (*conversation, error) {
	for {
		cv := c.srv.conv(id)
		c.mu.Lock()
		if cur, ok := c.follows[id]; ok {
			c.mu.Unlock()
			return cur, nil
		}
		if len(c.follows) >= maxFollows {
			c.mu.Unlock()
			return nil, errors.New("too-many")
		}
		c.follows[id] = cv
		c.mu.Unlock()
		if cv.subscribe(c) {
			return cv, nil
		}
		// Evicted between the lookup and the subscription: the registry
		// has (or makes) its successor.
		c.mu.Lock()
		if c.follows[id] == cv {
			delete(c.follows, id)
		}
		c.mu.Unlock()
	}
}

type snapshotFrame struct {
	Type         string      `json:"type"`
	Re           string      `json:"re"`
	Conversation string      `json:"conversation"`
	Token        string      `json:"token"`
	Head         string      `json:"head"`
	Generation   int64       `json:"generation"`
	Seq          int64       `json:"seq"`
	Groups       int         `json:"groups"`
	Entries      int         `json:"entries"`
	Bytes        int64       `json:"bytes"`
	Graph        bool        `json:"graph"`
	Checkpoint   *checkpoint `json:"checkpoint,omitzero"`
	// State is the engine's queue, turn and approvals, when an engine has
	// reported any for this conversation.
	State *controlState `json:"state,omitzero"`
}

// openFrame is the client's open.
type openFrame struct {
	envelope
	Conversation string     `json:"conversation"`
	Head         string     `json:"head"`
	Since        *sinceMark `json:"since"`
}

func (c *conn) onOpen(env envelope, frame []byte) {
	var m openFrame
	if !c.decode(env, frame, &m) {
		return
	}
	if err := validConversationID(m.Conversation); err != nil {
		c.protoError(env.ID, "invalid-id", err.Error(), false)
		return
	}
	// Only existence: metadata would read the log a second time.
	if _, err := os.Stat(c.srv.logPath(m.Conversation)); err != nil || !c.srv.mayAccess(c.person(), m.Conversation) {
		c.protoError(env.ID, "not-found", "no conversation "+m.Conversation, false)
		return
	}
	cv, err := c.follow(m.Conversation)
	if err != nil {
		c.protoError(env.ID, "too-many", fmt.Sprintf("a connection may follow at most %d conversations", maxFollows), false)
		return
	}
	// Captures run beside the read loop, at most maxOpens at a time; an
	// open past that waits on its own goroutine, never in the read loop.
	c.mu.Lock()
	if c.openCount >= maxOpenWaiting {
		c.mu.Unlock()
		c.protoError(env.ID, "too-many", fmt.Sprintf("at most %d opens may wait on one connection", maxOpenWaiting), false)
		return
	}
	c.openCount++
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			c.openCount--
			c.mu.Unlock()
		}()
		select {
		case c.opens <- struct{}{}:
		case <-c.closed:
			return
		}
		defer func() { <-c.opens }()
		// A conversation a terminal owns is read live from it
		// (remote_owner.go).
		c.srv.attachIfOwned(m.Conversation)
		cp, err := cv.capture(m.Head, m.Since)
		if err != nil {
			if errors.Is(err, errHeadNotFound) {
				c.protoError(env.ID, "not-found", err.Error(), false)
			} else {
				c.srv.opts.Logger.Error("snapshot capture failed", "conversation", cv.id, "err", err)
				c.protoError(env.ID, "internal", "the conversation could not be captured: "+err.Error(), false)
			}
			return
		}
		token := randomID("s-", 16)
		c.srv.mu.Lock()
		c.srv.tokens[token] = c
		c.srv.mu.Unlock()
		c.mu.Lock()
		c.tokens[token] = tokenScope{conv: cv, head: cp.head, gen: cp.gen, seq: cp.seq}
		c.mu.Unlock()
		for _, t := range c.lru.Add(token, cp.snap) {
			c.forget(t, true)
		}
		if m.Since == nil && len(cp.checkpoint.Entries) == 0 && len(cp.checkpoint.Presentations) == 0 {
			cp.checkpoint = nil
		}
		st := cp.snap.Stats()
		c.reply(snapshotFrame{Type: "snapshot", Re: env.ID, Conversation: cv.id, Token: token, Head: cp.head,
			Generation: cp.gen, Seq: cp.seq, Groups: st.Groups, Entries: st.Entries, Bytes: st.Bytes,
			Graph: st.GraphBuilt, Checkpoint: cp.checkpoint, State: cp.control})
	}()
}

// forget drops a token from the connection and the server registry.
func (c *conn) forget(token string, expired bool) {
	c.mu.Lock()
	delete(c.tokens, token)
	if expired {
		if len(c.expired) > 1024 {
			clear(c.expired)
		}
		c.expired[token] = true
	}
	c.mu.Unlock()
	c.srv.mu.Lock()
	delete(c.srv.tokens, token)
	c.srv.mu.Unlock()
}

// scope checks a token against this connection and the request; it returns
// the protocol error code and message when the token cannot be used.
func (c *conn) scope(token, conversation, head string) (tokenScope, string, string) {
	c.mu.Lock()
	sc, ok := c.tokens[token]
	expired := c.expired[token]
	c.mu.Unlock()
	if !ok {
		if expired {
			return sc, "token-expired", "the snapshot was evicted from this connection's cache; open it again"
		}
		c.srv.mu.Lock()
		other := c.srv.tokens[token]
		c.srv.mu.Unlock()
		if other != nil {
			return sc, "token-scope", "the token belongs to another connection; open the conversation on this one"
		}
		return sc, "token-unknown", "no such snapshot token; open the conversation again"
	}
	if conversation != sc.conv.id {
		return sc, "token-scope", fmt.Sprintf("the token is for conversation %s, not %s", sc.conv.id, clip(conversation))
	}
	if head != "" && head != sc.head {
		return sc, "token-scope", fmt.Sprintf("the token is for head %s, not %s", sc.head, clip(head))
	}
	if g := sc.conv.gen.Load(); g != sc.gen {
		return sc, "token-stale", fmt.Sprintf("the document was replaced (generation %d, snapshot has %d); open it again", g, sc.gen)
	}
	sc.conv.mu.Lock()
	cur := sc.conv.head
	sc.conv.mu.Unlock()
	if cur != sc.head {
		return sc, "token-stale", fmt.Sprintf("the selected branch is now %s; open it again", cur)
	}
	return sc, "", ""
}

// pageRequest is the client's page request.
type pageRequest struct {
	envelope
	Token        string `json:"token"`
	Conversation string `json:"conversation"`
	Head         string `json:"head"`
	Anchor       string `json:"anchor"`
	Direction    string `json:"direction"`
	BudgetBytes  int    `json:"budgetBytes"`
}

func (c *conn) onPage(env envelope, frame []byte) {
	var m pageRequest
	if !c.decode(env, frame, &m) {
		return
	}
	// A share link's page is checked against the store each time, so a
	// revoked link stops paging at once.
	if viaLink(c.person()) && !c.srv.mayAccess(c.person(), m.Conversation) {
		c.protoError(env.ID, "not-found", "no conversation "+clip(m.Conversation), false)
		return
	}
	if _, code, msg := c.scope(m.Token, m.Conversation, m.Head); code != "" {
		c.protoError(env.ID, code, msg, true)
		return
	}
	snap, ok := c.lru.Get(m.Token)
	if !ok {
		c.protoError(env.ID, "token-expired", "the snapshot was evicted; open it again", true)
		return
	}
	defer snap.Release()
	bp := framePool.Get().(*[]byte)
	b := (*bp)[:0]
	b = append(b, `{"type":"page","re":`...)
	b, _ = jsontext.AppendQuote(b, env.ID)
	b = append(b, `,"token":`...)
	b, _ = jsontext.AppendQuote(b, m.Token)
	b = append(b, `,"groups":[`...)
	p, err := snap.Page(b, m.Anchor, pager.Direction(m.Direction), m.BudgetBytes)
	if err != nil {
		framePool.Put(bp)
		switch {
		case errors.Is(err, pager.ErrAnchorNotFound):
			c.protoError(env.ID, "bad-anchor", err.Error(), false)
		case errors.Is(err, pager.ErrBadDirection):
			c.protoError(env.ID, "bad-direction", err.Error(), false)
		case errors.Is(err, pager.ErrBadBudget):
			c.protoError(env.ID, "bad-budget", err.Error(), false)
		case errors.Is(err, pager.ErrReleased):
			c.protoError(env.ID, "token-expired", "the snapshot was released; open it again", true)
		default:
			c.protoError(env.ID, "internal", "page read failed", false)
		}
		return
	}
	b = append(p.Bytes, ']')
	if p.First >= 0 {
		b = fmt.Appendf(b, `,"first":%d,"last":%d`, p.First, p.Last)
	}
	b = fmt.Appendf(b, `,"hasMoreBefore":%t,"hasMoreAfter":%t`, p.HasMoreBefore, p.HasMoreAfter)
	if len(p.Coverage) > 0 {
		cov, _ := json.Marshal(p.Coverage)
		b = append(append(b, `,"coverage":`...), cov...)
	}
	if len(p.Links) > 0 {
		l, _ := json.Marshal(p.Links)
		b = append(append(b, `,"links":`...), l...)
	}
	b = append(b, '}')
	c.send(b, true)
}

// releaseFrame is the client's release.
type releaseFrame struct {
	envelope
	Token string `json:"token"`
}

func (c *conn) onRelease(env envelope, frame []byte) {
	var m releaseFrame
	if !c.decode(env, frame, &m) {
		return
	}
	c.mu.Lock()
	_, ok := c.tokens[m.Token]
	c.mu.Unlock()
	if !ok {
		c.protoError(env.ID, "token-unknown", "no such snapshot token on this connection", false)
		return
	}
	c.lru.Remove(m.Token)
	c.forget(m.Token, false)
	c.reply(map[string]string{"type": "released", "re": env.ID})
}

// unfollowFrame is the client's unfollow.
type unfollowFrame struct {
	envelope
	Conversation string `json:"conversation"`
}

func (c *conn) onUnfollow(env envelope, frame []byte) {
	var m unfollowFrame
	if !c.decode(env, frame, &m) {
		return
	}
	c.mu.Lock()
	cv, ok := c.follows[m.Conversation]
	delete(c.follows, m.Conversation)
	c.mu.Unlock()
	if ok {
		cv.unsubscribe(c)
	}
	c.reply(map[string]string{"type": "ok", "re": env.ID})
}

// entryRequest is the client's entry: the current value of one entry of a
// followed conversation, asked for after a gap in its live events.
type entryRequest struct {
	envelope
	Conversation string `json:"conversation"`
	EntryID      string `json:"entryId"`
}

// entryFrame answers entry with the entry's whole current value, as an
// upsert or settle event would carry it. Seq is the conversation's seq when
// it was read: every event sent before the answer is at or below it, every
// later one above.
type entryFrame struct {
	Type         string         `json:"type"`
	Re           string         `json:"re"`
	Conversation string         `json:"conversation"`
	Generation   int64          `json:"generation"`
	Seq          int64          `json:"seq"`
	Entry        jsontext.Value `json:"entry"`
	Revision     int64          `json:"revision"`
	Open         bool           `json:"open"`
	After        string         `json:"after,omitzero"`
}

// onEntry answers a checkpoint of one entry. The answer is read and queued
// under the conversation's lock, so it takes its place among the live events
// exactly: a client drops the events for that entry that came before it and
// applies those after. An entry the conversation's live state does not hold
// (settled before this generation's changes began, or forgotten past the
// checkpoint bounds) is not-found with rebuild: the client opens again.
func (c *conn) onEntry(env envelope, frame []byte) {
	var m entryRequest
	if !c.decode(env, frame, &m) {
		return
	}
	c.mu.Lock()
	cv := c.follows[m.Conversation]
	c.mu.Unlock()
	if cv == nil {
		c.protoError(env.ID, "not-found", "this connection does not follow conversation "+clip(m.Conversation)+"; open it first", true)
		return
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	le := cv.live[m.EntryID]
	switch {
	case le == nil:
		c.protoError(env.ID, "not-found", "the live state holds no entry "+clip(m.EntryID)+"; open the conversation again", true)
	case len(le.raw) > maxCheckpoint:
		c.protoError(env.ID, "too-large", fmt.Sprintf("entry %s is %d bytes, more than one frame carries; open the conversation again", clip(m.EntryID), len(le.raw)), true)
	default:
		c.reply(entryFrame{Type: "entry", Re: env.ID, Conversation: cv.id, Generation: cv.gen.Load(), Seq: cv.seq,
			Entry: le.raw, Revision: le.rev, Open: le.open, After: le.after})
	}
}
