package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// Commands across replicas. A command that reaches a replica while
// another replica's engine holds the conversation is written to
// folio_inbox and announced on inboxChannel. The owner (the replica whose
// Mirror has a writer open on the conversation) claims it, runs it, and
// records each receipt the command gets in the row and on receiptsChannel,
// where the sending replica picks them up for its tabs. Command IDs stay
// idempotent: a second Forward of the same ID adds nothing.

// inboxChannel and receiptsChannel are the channels of forwarded commands
// and of their receipts.
const (
	inboxChannel    = "folio_inbox"
	receiptsChannel = "folio_receipts"
)

// note is the payload of both channels.
type note struct {
	Conversation string          `json:"c"`
	Command      string          `json:"k"`
	From         string          `json:"f"`
	Receipt      json.RawMessage `json:"r,omitempty"`
}

// inbox is the Mirror's part of forwarding.
type inbox struct {
	mu        sync.Mutex
	owned     map[string]int // conversations with a writer open here
	onCommand func(id string, body []byte)
	onReceipt func(id string, receipt []byte)
}

// OnCommand sets the function that runs a command forwarded to a
// conversation this replica owns. It runs on a goroutine of its own and
// answers with Answer.
func (m *Mirror) OnCommand(f func(id string, body []byte)) {
	m.in.mu.Lock()
	m.in.onCommand = f
	m.in.mu.Unlock()
}

// OnReceipt sets the function told about receipts of commands this
// replica forwarded.
func (m *Mirror) OnReceipt(f func(id string, receipt []byte)) {
	m.in.mu.Lock()
	m.in.onReceipt = f
	m.in.mu.Unlock()
}

func (m *Mirror) own(id string, delta int) {
	m.in.mu.Lock()
	defer m.in.mu.Unlock()
	if m.in.owned == nil {
		m.in.owned = map[string]int{}
	}
	m.in.owned[id] += delta
	if m.in.owned[id] <= 0 {
		delete(m.in.owned, id)
	}
}

func (m *Mirror) owns(id string) bool {
	m.in.mu.Lock()
	defer m.in.mu.Unlock()
	return m.in.owned[id] > 0
}

func (m *Mirror) notify(ctx context.Context, channel string, n note) error {
	n.From = m.s.owner
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if len(b) > 7900 {
		return fmt.Errorf("pgstore: a %d-byte notification is over NOTIFY's limit", len(b))
	}
	_, err = m.s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, string(b))
	return err
}

// Forward writes a command for conversation id to the inbox and tells the
// owner. A command ID already forwarded is left as it is.
func (m *Mirror) Forward(ctx context.Context, id, commandID string, body []byte) error {
	_, err := m.s.pool.Exec(ctx, `INSERT INTO folio_inbox (conversation_id, command_id, body, sender)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, id, commandID, body, m.s.owner)
	if err != nil {
		return fmt.Errorf("pgstore: forward: %w", err)
	}
	return m.notify(ctx, inboxChannel, note{Conversation: id, Command: commandID})
}

// Withdraw takes back a forwarded command no owner claimed yet; it
// reports whether it did (then the sender may run it itself).
func (m *Mirror) Withdraw(ctx context.Context, id, commandID string) (bool, error) {
	tag, err := m.s.pool.Exec(ctx, `DELETE FROM folio_inbox WHERE conversation_id = $1 AND command_id = $2 AND claimed_by IS NULL`, id, commandID)
	if err != nil {
		return false, fmt.Errorf("pgstore: withdraw: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Answer records a receipt of a forwarded command and tells its sender.
func (m *Mirror) Answer(ctx context.Context, id, commandID string, receipt []byte) error {
	if _, err := m.s.pool.Exec(ctx, `UPDATE folio_inbox SET receipt = $3 WHERE conversation_id = $1 AND command_id = $2`,
		id, commandID, receipt); err != nil {
		return fmt.Errorf("pgstore: answer: %w", err)
	}
	return m.notify(ctx, receiptsChannel, note{Conversation: id, Command: commandID, Receipt: receipt})
}

// claim takes a forwarded command for this replica, once. A command this
// replica forwarded itself (its own recovery held the lease a moment) is
// left for it to take back and run.
func (m *Mirror) claim(ctx context.Context, id, commandID string) ([]byte, bool) {
	var body []byte
	err := m.s.pool.QueryRow(ctx, `UPDATE folio_inbox SET claimed_by = $3
		WHERE conversation_id = $1 AND command_id = $2 AND claimed_by IS NULL AND sender <> $3 RETURNING body`, id, commandID, m.s.owner).Scan(&body)
	return body, err == nil
}

// pending runs the unclaimed commands of the conversations this replica
// owns (after a reconnect, or for a command sent just before it took the
// lease).
func (m *Mirror) pending(ctx context.Context) {
	// Rows are kept an hour, long enough for any sender to have had its
	// receipts; a command ID sent again later is answered by the owner's
	// own record of it.
	_, _ = m.s.pool.Exec(ctx, `DELETE FROM folio_inbox WHERE created_at < now() - interval '1 hour'`)
	m.in.mu.Lock()
	ids := make([]string, 0, len(m.in.owned))
	for id := range m.in.owned {
		ids = append(ids, id)
	}
	m.in.mu.Unlock()
	for _, id := range ids {
		rows, err := m.s.pool.Query(ctx, `SELECT command_id FROM folio_inbox WHERE conversation_id = $1 AND claimed_by IS NULL ORDER BY created_at`, id)
		if err != nil {
			return
		}
		var cmds []string
		for rows.Next() {
			var c string
			if rows.Scan(&c) == nil {
				cmds = append(cmds, c)
			}
		}
		rows.Close()
		for _, c := range cmds {
			m.inboxNote(ctx, note{Conversation: id, Command: c})
		}
	}
}

// inboxNote handles a notification of the inbox channels.
func (m *Mirror) inboxNote(ctx context.Context, n note) {
	m.in.mu.Lock()
	onCommand, onReceipt := m.in.onCommand, m.in.onReceipt
	m.in.mu.Unlock()
	if n.Receipt != nil {
		if onReceipt != nil && n.From != m.s.owner {
			onReceipt(n.Conversation, n.Receipt)
		}
		return
	}
	if onCommand == nil || !m.owns(n.Conversation) {
		return
	}
	body, ok := m.claim(ctx, n.Conversation, n.Command)
	if !ok {
		return // another replica's, or taken back
	}
	go onCommand(n.Conversation, body)
}
