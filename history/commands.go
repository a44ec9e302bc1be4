package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/transcript"
)

// Command receipts. A conversation's commands (a client's send, steer or
// retry, by the client's command ID) and their outcomes are kept in a
// sidecar beside the log, <log>.commands, one JSON object a line, appended
// and fsynced by the holder of the log's writer lock. A client that resends
// a command after the writer restarted gets the original outcome instead
// of a second turn. The sidecar is not part of the log format: a log
// without one is complete, and deleting it forgets only the receipts.

// CommandRecord is one line of the sidecar: a command's state at a moment.
// The last line for an ID is its current state.
type CommandRecord struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Reason string `json:"reason,omitzero"`
	Steer  bool   `json:"steer,omitzero"`
	// Kind is what the command is ("send", "retry", "edit", ...).
	Kind string `json:"kind,omitzero"`
	// Digest is the writer's digest of the command's body, so the same ID
	// sent again with another body is told apart after a restart.
	Digest string `json:"digest,omitzero"`
	// Entry is the user entry of the command's turn, once written.
	Entry string `json:"entry,omitzero"`
	At    string `json:"at"`
}

// CommandsPath is the receipts sidecar of the log at logPath.
func CommandsPath(logPath string) string { return logPath + ".commands" }

// RecordCommand appends r to the log's receipts sidecar and returns once it
// is on disk. At is filled in when empty.
func (l *Log) RecordCommand(r CommandRecord) error {
	if l.closed {
		return ErrClosed
	}
	if r.At == "" {
		r.At = string(transcript.AppendInstant(nil, l.now().UTC()))
	}
	b, err := json.Marshal(r, json.Deterministic(true))
	if err != nil {
		return err
	}
	if err := l.m.RecordCommand(b); err != nil {
		return fmt.Errorf("command receipts: %w", err)
	}
	return nil
}

// LoadCommands reads the log's receipts through its medium (see
// DecodeCommands).
func (l *Log) LoadCommands() ([]CommandRecord, error) {
	data, err := l.m.Commands()
	if err != nil {
		return nil, fmt.Errorf("command receipts: %w", err)
	}
	return DecodeCommands(data), nil
}

// ReadCommands reads the receipts sidecar of the file log at logPath without
// opening the log: it needs no lock, since the writer only appends whole
// lines. A missing sidecar is no commands.
func ReadCommands(logPath string) ([]CommandRecord, error) {
	data, err := os.ReadFile(CommandsPath(logPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("command receipts: %w", err)
	}
	return DecodeCommands(data), nil
}

// DecodeCommands reads receipts as a Medium's Commands returns them: each
// command's last record, in the order the commands first appeared. A line
// that does not decode (a torn last write) is skipped.
func DecodeCommands(data []byte) []CommandRecord {
	var out []CommandRecord
	at := map[string]int{}
	splitLines(data, func(line []byte) {
		var r CommandRecord
		if json.Unmarshal(line, &r) != nil || r.ID == "" {
			return
		}
		if i, ok := at[r.ID]; ok {
			out[i] = r
			return
		}
		at[r.ID] = len(out)
		out = append(out, r)
	})
	return out
}
