package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
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
func ConversationsDir(data string) string { return filepath.Join(data, conversationsDirName) }

// conversationsDirName is the data folder's subfolder holding the logs.
const conversationsDirName = "conversations"

// jazzSidecarsDirName is the data folder's subfolder where folio keeps the
// page indexes and listing summaries of Jazz-layout logs, at
// jazz-sidecars/<agentId>/<id>.jsonl.index and .summary: outside
// conversations, so that neither folio's listing nor Jazz's takes it for
// an agent folder, and nothing of folio's lands in Jazz's folders.
const jazzSidecarsDirName = "jazz-sidecars"

// sidecarBase is the path that a log's index and summary paths add their
// suffix to: the log's own path, except for a Jazz-layout log
// (<data>/conversations/<agentId>/<id>.jsonl), whose sidecars live in
// <data>/jazz-sidecars/<agentId>/<id>.jsonl.
func sidecarBase(logPath string) string {
	if data, agent, ok := jazzLayout(logPath); ok {
		return filepath.Join(data, jazzSidecarsDirName, agent, filepath.Base(logPath))
	}
	return logPath
}

// jazzLayout reports whether the log at logPath is in Jazz's layout, in an
// agent folder of a data folder's conversations folder, and names that
// data folder and agent. A log directly in a conversations folder is
// folio's own, even in an agent folder that is itself named conversations.
func jazzLayout(logPath string) (data, agent string, ok bool) {
	dir := filepath.Dir(logPath)
	agent = filepath.Base(dir)
	conv := filepath.Dir(dir)
	if agent == conversationsDirName || strings.HasPrefix(agent, ".") || agent == string(filepath.Separator) ||
		filepath.Base(conv) != conversationsDirName {
		return "", "", false
	}
	return filepath.Dir(conv), agent, true
}

// inConversations reports whether dir, a log's folder, is one folio keeps
// page indexes and summaries for: a data folder's conversations folder
// (folio's own logs; their sidecars lie beside them) or an agent folder in
// it (Jazz's; their sidecars lie in jazz-sidecars). A log anywhere else
// (folio log upgrade ~/old.jsonl) gets none.
func inConversations(dir string) bool {
	if filepath.Base(dir) == conversationsDirName {
		return true
	}
	_, _, ok := jazzLayout(filepath.Join(dir, "x.jsonl"))
	return ok
}

// sidecarDir prepares the folder of a sidecar path (an IndexPath or
// SummaryPath) for writing: a conversations folder is used as it is; an
// agent's folder in jazz-sidecars is created, if that agent's folder in
// conversations is there. Any other folder is refused, so that no sidecar
// is written for a log outside a data folder.
func sidecarDir(sidecar string) error {
	dir := filepath.Dir(sidecar)
	if filepath.Base(dir) == conversationsDirName {
		return nil
	}
	agent, sidecars := filepath.Base(dir), filepath.Dir(dir)
	if filepath.Base(sidecars) != jazzSidecarsDirName || strings.HasPrefix(agent, ".") {
		return errNoSidecar
	}
	if fi, err := os.Lstat(filepath.Join(ConversationsDir(filepath.Dir(sidecars)), agent)); err != nil || !fi.IsDir() {
		return errNoSidecar
	}
	return os.MkdirAll(dir, 0o700)
}

// Path returns the log file of a conversation in a data folder. The ID must
// be usable as a file name.
func Path(data, conversationID string) (string, error) {
	if conversationID == "" || strings.ContainsAny(conversationID, `/\`+"\x00") ||
		strings.HasPrefix(conversationID, ".") {
		return "", fmt.Errorf("history: conversation id %q cannot name a file", conversationID)
	}
	return filepath.Join(ConversationsDir(data), conversationID+".jsonl"), nil
}

// Locate returns the log of a conversation in a data folder: folio's own
// conversations/<id>.jsonl when it exists, else the first (by agent name)
// conversations/<agentId>/<id>.jsonl, where Jazz keeps its logs, else
// folio's path for a new log. So when both layouts hold the same ID, the
// flat log is the conversation and the Jazz one is not reachable by ID. An
// agent folder counts only as a real folder inside conversations (not a
// link, not hidden), and its log only as a regular file, so that no name
// in the data folder leads a reader outside it; Logs lists by the same rule.
func Locate(data, conversationID string) (string, error) {
	p, err := Path(data, conversationID)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return p, nil
	}
	dir := ConversationsDir(data)
	des, _ := os.ReadDir(dir) // sorted by name
	for _, de := range des {
		if !isAgentDir(de) {
			continue
		}
		m := filepath.Join(dir, de.Name(), conversationID+".jsonl")
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() {
			return m, nil
		}
	}
	return p, nil
}

// isAgentDir reports whether de, an entry of a conversations folder, is an
// agent's folder in Jazz's layout: a real folder, not a link, not hidden.
func isAgentDir(de fs.DirEntry) bool {
	return de.IsDir() && !strings.HasPrefix(de.Name(), ".")
}

// LogFile is one conversation log in a data folder: its ID (the file name
// without ".jsonl", the ID Locate takes) and its path.
type LogFile struct {
	ID   string
	Path string
}

// Logs returns every conversation of a data folder once: for each ID, the
// log Locate opens for it (a Jazz-layout log whose ID also names a flat log,
// or a log in an earlier agent's folder, is left out). Flat logs come
// first, then each agent's, by name. A missing folder holds none.
func Logs(data string) ([]LogFile, error) {
	all, err := logFiles(data)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(all))
	out := all[:0]
	for _, f := range all {
		if !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// logFiles is every log file of a data folder, shadowed ones included, in
// Locate's order: folio's conversations/<id>.jsonl, then Jazz's
// conversations/<agentId>/<id>.jsonl by agent name.
func logFiles(data string) ([]LogFile, error) {
	dir := ConversationsDir(data)
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var flat, jazz []LogFile
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if de.IsDir() {
			if !isAgentDir(de) {
				continue
			}
			sub, err := os.ReadDir(filepath.Join(dir, name))
			if err != nil {
				continue
			}
			for _, se := range sub {
				if n := se.Name(); se.Type().IsRegular() && strings.HasSuffix(n, ".jsonl") && !strings.HasPrefix(n, ".") {
					jazz = append(jazz, LogFile{ID: idFromPath(n), Path: filepath.Join(dir, name, n)})
				}
			}
			continue
		}
		if strings.HasSuffix(name, ".jsonl") {
			flat = append(flat, LogFile{ID: idFromPath(name), Path: filepath.Join(dir, name)})
		}
	}
	return append(flat, jazz...), nil
}

// idFromPath is the conversation ID a log's file name implies.
func idFromPath(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}

// writeAtomic replaces path with data so that a crash leaves either the old
// file or the new one, never a mixture: write a temporary file in the same
// folder, fsync it, rename it over path, fsync the folder.
func writeAtomic(path string, data []byte) (err error) {
	return writeAtomicThen(path, data, nil)
}

// writeAtomicThen is writeAtomic calling before with the temporary file,
// written and fsynced, just before it is renamed over path.
func writeAtomicThen(path string, data []byte, before func(tmp string)) (err error) {
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
	if before != nil {
		before(tmp)
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

// ReadFile reads the log at path without taking its lock; see Read. A
// version 2 header without a conversationId takes it from the file name.
func ReadFile(path string) (*Conversation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseFile(path, data)
}

// parseFile reads data, the content of the log at path.
func parseFile(path string, data []byte) (*Conversation, error) {
	st, err := parse(data, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.conv.Header.ConversationID == "" {
		st.conv.Header.ConversationID = idFromPath(path)
	}
	return st.conv, nil
}

// Summary describes one log for listings.
type Summary struct {
	ID        string
	Path      string
	Title     string
	Entries   int
	Messages  int
	Problems  int
	Version   int
	UpdatedAt time.Time
	// StartedAt is the header's startedAt.
	StartedAt time.Time
	// Branched is set when the log has branches besides main.
	Branched bool
	// Size is the log's length in bytes where the listing knows it
	// (store/pgstore's); 0 otherwise.
	Size int64
	// Head is the branch the log writes to (Main for a linear log); set
	// by writers' summaries, empty in listings that do not know it.
	Head string
	// Err is set when the log could not be read at all (a newer version, no
	// header); the other fields but ID and Path are then zero.
	Err error
}

// List summarizes every log in a data folder's conversations folder that
// an ID reaches, newest first: folio's conversations/<id>.jsonl and Jazz's
// conversations/<agentId>/<id>.jsonl, one per ID as Logs and Locate pick
// it, so a listed ID always opens the listed log. A missing folder lists
// nothing. A log whose summary file (see
// SummaryPath) still matches it is listed from the summary; any other is
// read whole, and its summary refreshed.
func List(data string) ([]Summary, error) {
	files, err := Logs(data)
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, f := range files {
		out = append(out, listOne(f.Path))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}
