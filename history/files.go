package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DataDir resolves folio's data folder: flag when set (the --data option),
// else $FOLIO_HOME, else $XDG_DATA_HOME/folio, else ~/.local/share/folio.
// It does not create the folder.
func DataDir(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if v := os.Getenv("FOLIO_HOME"); v != "" {
		return filepath.Abs(v)
	}
	if v := os.Getenv("XDG_DATA_HOME"); v != "" {
		return filepath.Join(v, "folio"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", ErrNoDataDir
	}
	return filepath.Join(home, ".local", "share", "folio"), nil
}

// ConversationsDir is where a data folder keeps its logs.
func ConversationsDir(data string) string { return filepath.Join(data, "conversations") }

// Path returns the log file of a conversation in a data folder. The ID must
// be usable as a file name.
func Path(data, conversationID string) (string, error) {
	if conversationID == "" || strings.ContainsAny(conversationID, `/\`+"\x00") ||
		strings.HasPrefix(conversationID, ".") {
		return "", fmt.Errorf("history: conversation id %q cannot name a file", conversationID)
	}
	return filepath.Join(ConversationsDir(data), conversationID+".jsonl"), nil
}

// idFromPath is the conversation ID a log's file name implies.
func idFromPath(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}

// writeAtomic replaces path with data so that a crash leaves either the old
// file or the new one, never a mixture: write a temporary file in the same
// folder, fsync it, rename it over path, fsync the folder.
func writeAtomic(path string, data []byte) (err error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
